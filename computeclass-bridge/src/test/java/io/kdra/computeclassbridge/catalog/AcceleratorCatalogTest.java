package io.kdra.computeclassbridge.catalog;

import static io.kdra.computeclassbridge.TestData.celDevice;
import static io.kdra.computeclassbridge.TestData.defaultCatalog;
import static io.kdra.computeclassbridge.TestData.shippedCatalog;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.junit.jupiter.api.Named.named;

import io.kdra.core.cel.CelDevice;
import io.kdra.core.cel.DeviceSelectorEnvironment;
import java.util.List;
import java.util.Map;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

class AcceleratorCatalogTest {

  private static final DeviceSelectorEnvironment ENV = DeviceSelectorEnvironment.create();

  @Test
  void shippedCatalogNamesTheIssuesTypesAndEverySelectorPassesApiValidation() {
    AcceleratorCatalog catalog = shippedCatalog();
    assertThat(catalog.types())
        .contains(
            "nvidia-tesla-a100",
            "nvidia-a100-80gb",
            "nvidia-l4",
            "nvidia-h100-80gb",
            "nvidia-tesla-t4",
            "tpu-v5-lite-podslice",
            "tpu-v6e-slice");
    assertThat(catalog.enabledProfiles())
        .containsExactly("gke-gpu", "gke-tpu", "kdra-gpu", "kdra-tpu");
    assertThat(catalog.validate(ENV)).isEmpty();
    assertThat(defaultCatalog().validate(ENV)).isEmpty();
  }

  static Stream<Arguments> devices() {
    return Stream.of(
        Arguments.of(
            named(
                "our A100 40GB SXM",
                celDevice("gpu.kdra.io", Map.of("productName", "NVIDIA A100-SXM4-40GB"))),
            List.of("nvidia-tesla-a100")),
        Arguments.of(
            named(
                "our A100 40GB PCIe",
                celDevice("gpu.kdra.io", Map.of("productName", "NVIDIA A100-PCIE-40GB"))),
            List.of("nvidia-tesla-a100")),
        Arguments.of(
            named(
                "our A100 80GB",
                celDevice("gpu.kdra.io", Map.of("productName", "NVIDIA A100-SXM4-80GB"))),
            List.of("nvidia-a100-80gb")),
        Arguments.of(
            named("our L4", celDevice("gpu.kdra.io", Map.of("productName", "NVIDIA L4"))),
            List.of("nvidia-l4")),
        Arguments.of(
            named("our T4", celDevice("gpu.kdra.io", Map.of("productName", "Tesla T4"))),
            List.of("nvidia-tesla-t4")),
        Arguments.of(
            named(
                "our H100 (A3 High and Mega look the same)",
                celDevice("gpu.kdra.io", Map.of("productName", "NVIDIA H100 80GB HBM3"))),
            List.of("nvidia-h100-80gb", "nvidia-h100-mega-80gb")),
        Arguments.of(
            named(
                "our TPU v5e",
                celDevice(
                    "tpu.kdra.io", Map.of("type", "tpu-v5-lite-podslice", "topology", "2x2"))),
            List.of("tpu-v5-lite-podslice")),
        Arguments.of(
            named(
                "an L4 of GKE's NVIDIA driver: profile not enabled by default",
                celDevice("gpu.nvidia.com", Map.of("productName", "NVIDIA L4"))),
            List.of()),
        Arguments.of(
            named(
                "our driver without productName: no match, no CEL error",
                celDevice("gpu.kdra.io", Map.of("uuid", "GPU-1"))),
            List.of()),
        Arguments.of(
            named("another driver without attributes", celDevice("cpu.example.com", Map.of())),
            List.of()),
        Arguments.of(
            named(
                "an unknown GPU",
                celDevice("gpu.kdra.io", Map.of("productName", "NVIDIA GeForce RTX 4090"))),
            List.of()));
  }

  @ParameterizedTest(name = "{0}")
  @MethodSource("devices")
  void defaultSelectorsMatchExactlyTheExpectedTypes(CelDevice device, List<String> expected) {
    AcceleratorCatalog catalog = defaultCatalog();
    List<String> matching =
        catalog.types().stream()
            .filter(
                t ->
                    catalog
                        .deviceSelector(catalog.find(t).orElseThrow())
                        .map(s -> ENV.compile(s).matches(device))
                        .orElse(false))
            .toList();
    assertThat(matching).containsExactlyInAnyOrderElementsOf(expected);
  }

  @Test
  void gkeProfilesAddTheirDriverAsAnAlternative() {
    AcceleratorCatalog catalog = shippedCatalog().using(List.of("kdra-gpu", "gke-gpu"), Map.of());
    String selector = catalog.deviceSelector(catalog.find("nvidia-l4").orElseThrow()).orElseThrow();
    assertThat(selector)
        .startsWith("(device.driver == \"gpu.nvidia.com\" && (")
        .contains(") || (device.driver == \"gpu.kdra.io\" && (");
    assertThat(
            ENV.compile(selector)
                .matches(celDevice("gpu.nvidia.com", Map.of("productName", "NVIDIA L4"))))
        .isTrue();
    assertThat(
            ENV.compile(selector)
                .matches(celDevice("gpu.kdra.io", Map.of("productName", "NVIDIA L4"))))
        .isTrue();
  }

  @Test
  void driverNamesCanBeChangedWithoutTouchingTheCatalog() {
    AcceleratorCatalog catalog =
        shippedCatalog().using(List.of("kdra-gpu"), Map.of("kdra-gpu", "gpu.example.org"));
    String selector = catalog.deviceSelector(catalog.find("nvidia-l4").orElseThrow()).orElseThrow();
    assertThat(
            ENV.compile(selector)
                .matches(celDevice("gpu.example.org", Map.of("productName", "NVIDIA L4"))))
        .isTrue();
    assertThat(
            ENV.compile(selector)
                .matches(celDevice("gpu.kdra.io", Map.of("productName", "NVIDIA L4"))))
        .isFalse();
  }

  @Test
  void aKindWithoutEnabledProfilesHasNoSelector() {
    AcceleratorCatalog gpuOnly = shippedCatalog().using(List.of("kdra-gpu"), Map.of());
    assertThat(gpuOnly.deviceSelector(gpuOnly.find("tpu-v6e-slice").orElseThrow())).isEmpty();
  }

  @Test
  void topologyRestrictsTpuDevicesAndRejectsAnythingButAxB() {
    AcceleratorCatalog catalog = defaultCatalog();
    Accelerator v5e = catalog.find("tpu-v5-lite-podslice").orElseThrow();
    String selector = catalog.topologySelector(v5e, "2x4").orElseThrow();
    assertThat(
            ENV.compile(selector)
                .matches(
                    celDevice(
                        "tpu.kdra.io", Map.of("type", "tpu-v5-lite-podslice", "topology", "2x4"))))
        .isTrue();
    assertThat(
            ENV.compile(selector)
                .matches(
                    celDevice(
                        "tpu.kdra.io", Map.of("type", "tpu-v5-lite-podslice", "topology", "2x2"))))
        .isFalse();
    assertThat(ENV.compile(selector).matches(celDevice("tpu.kdra.io", Map.of()))).isFalse();
    assertThatThrownBy(() -> catalog.topologySelector(v5e, "2x4\" || true || \""))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("topology");
  }

  static Stream<Arguments> overlays() {
    return Stream.of(
        Arguments.of(
            named(
                "adds a type",
                """
            accelerators:
              nvidia-future:
                kind: gpu
                names: ["NVIDIA Future"]
            """),
            "nvidia-future",
            "\"NVIDIA Future\""),
        Arguments.of(
            named(
                "replaces a type's names",
                """
            accelerators:
              nvidia-l4:
                kind: gpu
                names: ["NVIDIA L4 Rev2"]
            """),
            "nvidia-l4",
            "\"NVIDIA L4 Rev2\""),
        Arguments.of(
            named(
                "raw selector for one profile",
                """
            accelerators:
              nvidia-l4:
                kind: gpu
                names: ["NVIDIA L4"]
                selectors:
                  kdra-gpu: 'device.capacity["{driver}"].memory.compareTo(quantity("24Gi")) >= 0'
            """),
            "nvidia-l4",
            "device.capacity[\"gpu.kdra.io\"].memory"),
        Arguments.of(
            named(
                "another driver name for a profile",
                """
            profiles:
              kdra-gpu:
                driver: gpu.example.org
                kind: gpu
                selector: '"productName" in device.attributes["{driver}"] && device.attributes["{driver}"].productName in {values}'
            """),
            "nvidia-l4",
            "device.driver == \"gpu.example.org\""));
  }

  @ParameterizedTest(name = "{0}")
  @MethodSource("overlays")
  void overlayReplacesEntriesByName(String overlay, String type, String expectedFragment) {
    AcceleratorCatalog catalog =
        shippedCatalog().overlay(overlay).using(List.of("kdra-gpu"), Map.of());
    assertThat(catalog.deviceSelector(catalog.find(type).orElseThrow()).orElseThrow())
        .contains(expectedFragment);
    assertThat(catalog.types()).contains("nvidia-tesla-a100");
    assertThat(catalog.validate(ENV)).isEmpty();
  }

  @Test
  void overlayWithReplaceDropsTheShippedEntries() {
    AcceleratorCatalog catalog =
        shippedCatalog()
            .overlay(
                """
        replace: true
        profiles:
          mine:
            driver: gpu.mine.org
            kind: gpu
            selector: 'device.attributes["{driver}"].model in {values}'
        accelerators:
          nvidia-l4:
            kind: gpu
            names: ["L4"]
        """);
    assertThat(catalog.types()).containsExactly("nvidia-l4");
    assertThat(catalog.enabledProfiles()).containsExactly("mine");
  }

  static Stream<Arguments> badCatalogs() {
    return Stream.of(
        Arguments.of(
            named("a typo in a key", "accelerators:\n  x:\n    kind: gpu\n    nams: [a]\n"),
            "nams"),
        Arguments.of(
            named(
                "a kind that is neither", "accelerators:\n  x:\n    kind: fpga\n    names: [a]\n"),
            "accelerators.x: kind must be gpu or tpu"),
        Arguments.of(
            named("neither names nor selectors", "accelerators:\n  x:\n    kind: gpu\n"),
            "accelerators.x: needs names or selectors"),
        Arguments.of(
            named(
                "a selector for an unknown profile",
                "accelerators:\n  x:\n    kind: gpu\n    selectors:\n      nope: 'true'\n"),
            "unknown profile nope"),
        Arguments.of(
            named(
                "a profile without selector", "profiles:\n  p:\n    driver: d.io\n    kind: gpu\n"),
            "profiles.p: driver and selector are required"),
        Arguments.of(named("not YAML", "accelerators: [\n"), "not a valid catalog"));
  }

  @ParameterizedTest(name = "{0}")
  @MethodSource("badCatalogs")
  void badOverlaysAreRejectedWithTheEntryNamed(String overlay, String message) {
    assertThatThrownBy(() -> shippedCatalog().overlay(overlay))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining(message);
  }

  @Test
  void unknownProfileNamesInConfigurationAreRejected() {
    assertThatThrownBy(() -> shippedCatalog().using(List.of("kdra-gpu", "nvidia"), Map.of()))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("unknown accelerator catalog profile nvidia");
  }

  @Test
  void invalidCelInAnOverlayIsFoundByValidate() {
    AcceleratorCatalog catalog =
        shippedCatalog()
            .overlay(
                """
        accelerators:
          nvidia-l4:
            kind: gpu
            names: ["NVIDIA L4"]
            selectors:
              kdra-gpu: 'device.attributes["{driver}"].productName =='
        """)
            .using(List.of("kdra-gpu"), Map.of());
    assertThat(catalog.validate(ENV))
        .singleElement()
        .asString()
        .startsWith("accelerators.nvidia-l4: ");
  }
}
