package io.kdra.computeclassbridge.catalog;

import io.kdra.core.cel.DeviceSelectorEnvironment;
import java.util.ArrayList;
import java.util.Collection;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.TreeMap;
import java.util.regex.Pattern;
import java.util.stream.Collectors;

/**
 * Maps GKE accelerator type strings to CEL device selectors over the attributes of the enabled
 * driver profiles. Immutable and thread-safe; every method is a pure function of the catalog, so
 * equal catalogs render identical selectors (the reconciler relies on this to tell a real change
 * from a repeat).
 *
 * <p>A rendered selector is an OR over the enabled profiles of the accelerator's kind, each term
 * guarded by {@code device.driver == "<driver>"}: a device of another driver never reaches an
 * attribute lookup, because upstream treats a CEL runtime error as an allocation failure, not as
 * "no match".
 */
public final class AcceleratorCatalog {

  /**
   * What {@code tpu.topology} may look like ({@code 2x4}, {@code 2x2x1}); keeps CEL literals safe.
   */
  private static final Pattern TOPOLOGY = Pattern.compile("[0-9]{1,4}(x[0-9]{1,4}){0,3}");

  private final Map<String, DriverProfile> profiles;
  private final Map<String, Accelerator> accelerators;
  private final Set<String> enabled;

  private AcceleratorCatalog(
      Map<String, DriverProfile> profiles,
      Map<String, Accelerator> accelerators,
      Set<String> enabled) {
    this.profiles = Map.copyOf(profiles);
    this.accelerators = Map.copyOf(accelerators);
    this.enabled = Set.copyOf(enabled);
  }

  /**
   * Reads a catalog; every profile is enabled until {@link #using} says otherwise.
   *
   * @throws IllegalArgumentException naming the entry that is malformed
   */
  public static AcceleratorCatalog parse(String yaml) {
    return empty().overlay(yaml);
  }

  private static AcceleratorCatalog empty() {
    return new AcceleratorCatalog(Map.of(), Map.of(), Set.of());
  }

  /**
   * This catalog with an override laid over it: entries of the override replace entries with the
   * same name, or the whole catalog when the override says {@code replace: true}. Profiles enabled
   * here stay enabled when they still exist; new profiles are enabled.
   *
   * @throws IllegalArgumentException naming the entry of the override that is malformed
   */
  public AcceleratorCatalog overlay(String yaml) {
    CatalogDocument doc = CatalogDocument.parse(yaml);
    boolean replace = Boolean.TRUE.equals(doc.replace());
    Map<String, DriverProfile> newProfiles = new LinkedHashMap<>(replace ? Map.of() : profiles);
    Set<String> newEnabled = new LinkedHashSet<>(replace ? Set.of() : enabled);
    if (doc.profiles() != null) {
      doc.profiles()
          .forEach(
              (name, p) -> {
                newProfiles.put(name, profile(name, p));
                newEnabled.add(name);
              });
    }
    Map<String, Accelerator> newAccelerators =
        new LinkedHashMap<>(replace ? Map.of() : accelerators);
    if (doc.accelerators() != null) {
      doc.accelerators().forEach((type, a) -> newAccelerators.put(type, accelerator(type, a)));
    }
    for (Accelerator a : newAccelerators.values()) {
      for (String profile : a.selectors().keySet()) {
        if (!newProfiles.containsKey(profile)) {
          throw new IllegalArgumentException(
              "accelerators."
                  + a.type()
                  + ".selectors: unknown profile "
                  + profile
                  + " (known: "
                  + new TreeMap<>(newProfiles).keySet()
                  + ")");
        }
      }
    }
    return new AcceleratorCatalog(newProfiles, newAccelerators, newEnabled);
  }

  /**
   * This catalog with only the named profiles enabled and, optionally, other driver names.
   *
   * @param profileNames profiles to use, in any order
   * @param driverNames profile name to driver name, for a driver deployed under another name
   * @throws IllegalArgumentException when a name is not a profile of the catalog
   */
  public AcceleratorCatalog using(
      Collection<String> profileNames, Map<String, String> driverNames) {
    Map<String, DriverProfile> newProfiles = new LinkedHashMap<>(profiles);
    for (String name : concat(profileNames, driverNames.keySet())) {
      if (!profiles.containsKey(name)) {
        throw new IllegalArgumentException(
            "unknown accelerator catalog profile "
                + name
                + " (known: "
                + new TreeMap<>(profiles).keySet()
                + ")");
      }
    }
    driverNames.forEach(
        (name, driver) -> newProfiles.put(name, profiles.get(name).withDriver(driver)));
    return new AcceleratorCatalog(newProfiles, accelerators, new LinkedHashSet<>(profileNames));
  }

  /** The accelerator with this GKE type string. */
  public Optional<Accelerator> find(String type) {
    return Optional.ofNullable(type).map(accelerators::get);
  }

  /** All accelerator types, sorted. */
  public List<String> types() {
    return accelerators.keySet().stream().sorted().toList();
  }

  /** Names of the enabled profiles, sorted. */
  public List<String> enabledProfiles() {
    return enabled.stream().sorted().toList();
  }

  /** The enabled profiles that can select devices of this accelerator, sorted by name. */
  public List<DriverProfile> profilesFor(Accelerator accelerator) {
    return enabled.stream()
        .sorted()
        .map(profiles::get)
        .filter(p -> p.kind() == accelerator.kind())
        .filter(
            p -> accelerator.selectors().containsKey(p.name()) || !accelerator.names().isEmpty())
        .toList();
  }

  /**
   * The DeviceClass selector for an accelerator: devices of any enabled profile that match.
   *
   * @return empty when no enabled profile can select this accelerator
   */
  public Optional<String> deviceSelector(Accelerator accelerator) {
    List<String> terms = new ArrayList<>();
    for (DriverProfile p : profilesFor(accelerator)) {
      String body = accelerator.selectors().getOrDefault(p.name(), p.selector());
      terms.add(guarded(p, render(body, p, Map.of("{values}", celList(accelerator.names())))));
    }
    return or(terms);
  }

  /**
   * A subrequest selector restricting an accelerator's devices to a TPU topology. Profiles that
   * publish no topology are left unrestricted; their devices still match the class.
   *
   * @return empty when no enabled profile of the accelerator publishes a topology
   * @throws IllegalArgumentException when {@code topology} is not of the form {@code AxB[xC]}
   */
  public Optional<String> topologySelector(Accelerator accelerator, String topology) {
    if (!TOPOLOGY.matcher(topology).matches()) {
      throw new IllegalArgumentException("topology must look like 2x4 or 2x2x1, got " + topology);
    }
    List<String> terms = new ArrayList<>();
    for (DriverProfile p : profilesFor(accelerator)) {
      terms.add(
          p.topologySelector()
              .map(t -> guarded(p, render(t, p, Map.of("{topology}", topology))))
              .orElse("device.driver == " + celString(p.driver())));
    }
    return profilesFor(accelerator).stream().anyMatch(p -> p.topologySelector().isPresent())
        ? or(terms)
        : Optional.empty();
  }

  /**
   * Checks every selector this catalog can render, as API validation would check it in a
   * DeviceClass.
   *
   * @return one message per problem, naming the accelerator and profile; empty when all is well
   */
  public List<String> validate(DeviceSelectorEnvironment env) {
    List<String> problems = new ArrayList<>();
    for (String type : types()) {
      Accelerator a = accelerators.get(type);
      deviceSelector(a)
          .flatMap(env::validate)
          .ifPresent(e -> problems.add("accelerators." + type + ": " + e.getMessage()));
      if (a.kind() == AcceleratorKind.TPU) {
        topologySelector(a, "2x2")
            .flatMap(env::validate)
            .ifPresent(e -> problems.add("accelerators." + type + " topology: " + e.getMessage()));
      }
    }
    return problems;
  }

  private static String guarded(DriverProfile p, String body) {
    return "device.driver == " + celString(p.driver()) + " && (" + body + ")";
  }

  private static Optional<String> or(List<String> terms) {
    if (terms.isEmpty()) {
      return Optional.empty();
    }
    if (terms.size() == 1) {
      return Optional.of(terms.get(0));
    }
    return Optional.of(terms.stream().map(t -> "(" + t + ")").collect(Collectors.joining(" || ")));
  }

  private static String render(String template, DriverProfile p, Map<String, String> values) {
    String out = template.replace("{driver}", p.driver());
    for (Map.Entry<String, String> e : values.entrySet()) {
      out = out.replace(e.getKey(), e.getValue());
    }
    return out;
  }

  /** A CEL string literal; catalog values are data, never code. */
  static String celString(String value) {
    return '"' + value.replace("\\", "\\\\").replace("\"", "\\\"") + '"';
  }

  static String celList(List<String> values) {
    return values.stream()
        .map(AcceleratorCatalog::celString)
        .collect(Collectors.joining(", ", "[", "]"));
  }

  private static DriverProfile profile(String name, CatalogDocument.ProfileDoc p) {
    String where = "profiles." + name;
    if (p == null || blank(p.driver()) || blank(p.selector())) {
      throw new IllegalArgumentException(where + ": driver and selector are required");
    }
    return new DriverProfile(
        name,
        p.driver(),
        AcceleratorKind.parse(p.kind(), where),
        p.selector(),
        Optional.ofNullable(p.topologySelector()).filter(s -> !s.isBlank()));
  }

  private static Accelerator accelerator(String type, CatalogDocument.AcceleratorDoc a) {
    String where = "accelerators." + type;
    if (a == null) {
      throw new IllegalArgumentException(where + ": kind is required");
    }
    List<String> names = a.names() == null ? List.of() : a.names();
    Map<String, String> selectors = a.selectors() == null ? Map.of() : a.selectors();
    if (names.isEmpty() && selectors.isEmpty()) {
      throw new IllegalArgumentException(where + ": needs names or selectors");
    }
    return new Accelerator(
        type, AcceleratorKind.parse(a.kind(), where), a.description(), names, selectors);
  }

  private static boolean blank(String s) {
    return s == null || s.isBlank();
  }

  private static List<String> concat(Collection<String> a, Collection<String> b) {
    List<String> all = new ArrayList<>(a);
    all.addAll(b);
    return all;
  }

  @Override
  public boolean equals(Object o) {
    return o instanceof AcceleratorCatalog c
        && profiles.equals(c.profiles)
        && accelerators.equals(c.accelerators)
        && enabled.equals(c.enabled);
  }

  @Override
  public int hashCode() {
    return profiles.hashCode() * 31 + accelerators.hashCode() * 7 + enabled.hashCode();
  }

  @Override
  public String toString() {
    return "AcceleratorCatalog" + types() + " profiles " + enabledProfiles();
  }
}
