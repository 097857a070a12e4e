package io.kdra.computeclassbridge.reconciler;

import io.kdra.computeclassbridge.catalog.AcceleratorCatalog;
import io.kdra.core.cel.DeviceSelectorEnvironment;
import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;

/**
 * The catalog in effect: the shipped {@code catalog/accelerators.yaml}, overlaid with the
 * ConfigMap's content when there is one, restricted to the configured profiles. The shipped catalog
 * with the configured profiles is checked at startup, so a bad deployment fails fast; a bad
 * override only degrades the ComputeClasses, because it can be fixed while running. Thread-safe;
 * the last result is memoised by override text.
 */
public class CatalogSource {

  /**
   * The catalog to map with.
   *
   * @param problem why the override was not used, if it was not
   */
  public record Effective(AcceleratorCatalog catalog, Optional<String> problem) {}

  private final AcceleratorCatalog shipped;
  private final List<String> profiles;
  private final Map<String, String> drivers;
  private final DeviceSelectorEnvironment env = DeviceSelectorEnvironment.create();
  private final Effective base;
  private volatile Optional<String> lastOverlay = Optional.empty();
  private volatile Effective last;

  /**
   * @throws IllegalArgumentException when the profiles or drivers do not fit the shipped catalog,
   *     or one of its selectors is invalid
   */
  public CatalogSource(
      AcceleratorCatalog shipped, List<String> profiles, Map<String, String> drivers) {
    this.shipped = shipped;
    this.profiles = List.copyOf(profiles);
    this.drivers = Map.copyOf(drivers);
    AcceleratorCatalog catalog = shipped.using(profiles, drivers);
    List<String> problems = catalog.validate(env);
    if (!problems.isEmpty()) {
      throw new IllegalArgumentException("shipped accelerator catalog: " + problems);
    }
    this.base = new Effective(catalog, Optional.empty());
    this.last = base;
  }

  /** The catalog with this override (YAML text of the ConfigMap key) laid over it. */
  public Effective effective(Optional<String> overlay) {
    if (overlay.isEmpty()) {
      return base;
    }
    if (Objects.equals(overlay, lastOverlay)) {
      return last;
    }
    Effective result;
    try {
      AcceleratorCatalog catalog = shipped.overlay(overlay.get()).using(profiles, drivers);
      List<String> problems = catalog.validate(env);
      result =
          problems.isEmpty()
              ? new Effective(catalog, Optional.empty())
              : new Effective(base.catalog(), Optional.of(String.join("; ", problems)));
    } catch (IllegalArgumentException e) {
      result = new Effective(base.catalog(), Optional.of(e.getMessage()));
    }
    last = result;
    lastOverlay = overlay;
    return result;
  }

  public static AcceleratorCatalog shippedCatalog() {
    try (InputStream in =
        CatalogSource.class.getClassLoader().getResourceAsStream("catalog/accelerators.yaml")) {
      if (in == null) {
        throw new IllegalStateException(
            "catalog/accelerators.yaml is missing from the application");
      }
      return AcceleratorCatalog.parse(new String(in.readAllBytes(), StandardCharsets.UTF_8));
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }
}
