package io.kdra.devicedriver.discovery;

import static org.assertj.core.api.Assertions.assertThat;

import io.kdra.core.cel.CelDevice;
import io.kdra.core.cel.DeviceSelectorEnvironment;
import io.kdra.core.model.AttributeValue;
import io.kdra.core.model.QualifiedName;
import io.kdra.core.model.Quantity;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.HashMap;
import java.util.Map;
import java.util.Optional;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * The example selectors of docs/user/device-driver.md compile in the DRA CEL environment and match
 * the devices our backends publish, so the documented names and types are real.
 */
class DocumentedSelectorsTest {
  private static final String DRIVER = "gpu.kdra.io";
  private static final DeviceSelectorEnvironment CEL = DeviceSelectorEnvironment.create();

  static CelDevice cel(NodeDevice d) {
    Map<QualifiedName, AttributeValue> attributes = new HashMap<>();
    d.attributes().forEach((k, v) -> attributes.put(QualifiedName.of(k, DRIVER), v));
    Map<QualifiedName, Quantity> capacity = new HashMap<>();
    d.capacity().forEach((k, v) -> capacity.put(QualifiedName.of(k, DRIVER), v));
    return CelDevice.of(DRIVER, attributes, capacity, false);
  }

  @ParameterizedTest(name = "{0}")
  @ValueSource(
      strings = {
        "device.driver == \"gpu.kdra.io\" && device.attributes[\"gpu.kdra.io\"].type == \"gpu\"",
        "device.attributes[\"gpu.kdra.io\"].productName.startsWith(\"NVIDIA H\")",
        "device.capacity[\"gpu.kdra.io\"].memory.compareTo(quantity(\"80Gi\")) >= 0",
        "device.attributes[\"gpu.kdra.io\"].cudaComputeCapability.isGreaterThan(semver(\"8.0.0\"))",
        "device.attributes[\"gpu.kdra.io\"].driverVersion.isGreaterThan(semver(\"550.0.0\"))",
        "!device.attributes[\"gpu.kdra.io\"].migEnabled",
        "device.attributes[\"resource.kubernetes.io\"].pcieRoot == \"pci0000:00\""
      })
  void gpuSelectorsMatchASimulatedH100(String expression) throws Exception {
    NodeDevice gpu0 =
        new SimulatedBackend(Path.of("/nonexistent")).discover().device("gpu-0").orElseThrow();
    assertThat(CEL.compile(expression).matches(cel(gpu0))).isTrue();
  }

  @Test
  void tpuSelectorMatchesATpuChip(@TempDir Path root) throws Exception {
    Files.createDirectories(root.resolve("dev"));
    Files.writeString(root.resolve("dev/accel0"), "");
    NodeDevice chip =
        new TpuBackend(root, Optional.of("tpu-v6e-slice"), Optional.of("2x4"), Map::of)
            .discover()
            .device("tpu-0")
            .orElseThrow();
    assertThat(
            CEL.compile(
                    "device.attributes[\"gpu.kdra.io\"].tpuGen == \"v6e\" && "
                        + "device.attributes[\"gpu.kdra.io\"].topology == \"2x4\"")
                .matches(cel(chip)))
        .isTrue();
  }
}
