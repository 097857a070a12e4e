package io.kdra.computeclassbridge.reconciler;

import static io.kdra.computeclassbridge.TestData.shippedCatalog;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.List;
import java.util.Map;
import java.util.Optional;
import org.junit.jupiter.api.Test;

class CatalogSourceTest {

  private final CatalogSource source =
      new CatalogSource(shippedCatalog(), List.of("kdra-gpu", "kdra-tpu"), Map.of());

  @Test
  void withoutOverrideTheShippedCatalogIsUsed() {
    CatalogSource.Effective e = source.effective(Optional.empty());
    assertThat(e.problem()).isEmpty();
    assertThat(e.catalog().enabledProfiles()).containsExactly("kdra-gpu", "kdra-tpu");
  }

  @Test
  void aValidOverrideIsLaidOver() {
    CatalogSource.Effective e =
        source.effective(
            Optional.of(
                "accelerators:\n  nvidia-next:\n    kind: gpu\n    names: [\"NVIDIA Next\"]\n"));
    assertThat(e.problem()).isEmpty();
    assertThat(e.catalog().find("nvidia-next")).isPresent();
  }

  @Test
  void anInvalidOverrideFallsBackAndSaysWhy() {
    CatalogSource.Effective bad =
        source.effective(
            Optional.of(
                "accelerators:\n  nvidia-l4:\n    kind: gpu\n    selectors:\n      kdra-gpu: 'device.'\n"));
    assertThat(bad.problem()).get().asString().startsWith("accelerators.nvidia-l4");
    assertThat(bad.catalog()).isEqualTo(source.effective(Optional.empty()).catalog());
    assertThat(source.effective(Optional.of("nope: 1")).problem())
        .get()
        .asString()
        .contains("not a valid catalog");
  }

  @Test
  void misconfiguredProfilesFailAtStartup() {
    assertThatThrownBy(
            () -> new CatalogSource(shippedCatalog(), List.of("kdra-gpu", "nvidia"), Map.of()))
        .hasMessageContaining("unknown accelerator catalog profile nvidia");
  }
}
