package io.kdra.devicedriver.discovery;

import static org.assertj.core.api.Assertions.assertThat;

import io.kdra.core.model.AttributeValue;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The TPU backend on fake device trees. */
class TpuBackendTest {
  @TempDir Path root;

  private static final Map<String, String> GKE_LABELS =
      Map.of(TpuBackend.ACCELERATOR_LABEL, "tpu-v6e-slice", TpuBackend.TOPOLOGY_LABEL, "2x4");

  @Test
  void accelDevicesWithGkeLabels() throws Exception {
    Files.createDirectories(root.resolve("dev"));
    for (String n : new String[] {"accel0", "accel1", "accel2", "accel3", "accel10", "null"}) {
      Files.writeString(root.resolve("dev").resolve(n), "");
    }
    Inventory inv =
        new TpuBackend(root, Optional.empty(), Optional.empty(), () -> GKE_LABELS).discover();
    assertThat(inv.devices())
        .extracting(NodeDevice::name)
        .containsExactly("tpu-0", "tpu-1", "tpu-10", "tpu-2", "tpu-3");
    NodeDevice t10 = inv.device("tpu-10").orElseThrow();
    assertThat(t10.deviceNodes()).containsExactly("/dev/accel10");
    assertThat(t10.attributes())
        .containsEntry("index", new AttributeValue.IntValue(10))
        .containsEntry("tpuGen", new AttributeValue.StringValue("v6e"))
        .containsEntry("accelerator", new AttributeValue.StringValue("tpu-v6e-slice"))
        .containsEntry("topology", new AttributeValue.StringValue("2x4"))
        .containsEntry("chipCount", new AttributeValue.IntValue(5))
        .containsEntry("brand", new AttributeValue.StringValue("Google"))
        .containsEntry("type", new AttributeValue.StringValue("tpu"));
    assertThat(inv.commonDeviceNodes()).isEmpty();
  }

  @Test
  void vfioGroupsWhenThereAreNoAccelNodesAndConfigWinsOverLabels() throws Exception {
    Files.createDirectories(root.resolve("dev/vfio"));
    for (String n : new String[] {"vfio", "12", "3", "7"}) {
      Files.writeString(root.resolve("dev/vfio").resolve(n), "");
    }
    AtomicInteger labelReads = new AtomicInteger();
    Inventory inv =
        new TpuBackend(
                root,
                Optional.of("tpu-v5-lite-podslice"),
                Optional.of("2x2"),
                () -> {
                  labelReads.incrementAndGet();
                  return GKE_LABELS;
                })
            .discover();
    assertThat(labelReads).hasValue(0);
    assertThat(inv.devices())
        .extracting(d -> d.deviceNodes().get(0))
        .containsExactly("/dev/vfio/3", "/dev/vfio/7", "/dev/vfio/12");
    assertThat(inv.device("tpu-2").orElseThrow().attributes())
        .containsEntry("tpuGen", new AttributeValue.StringValue("v5litepod"))
        .containsEntry("topology", new AttributeValue.StringValue("2x2"));
    assertThat(inv.commonDeviceNodes()).containsExactly("/dev/vfio/vfio");
  }

  @Test
  void unknownFactsAreLeftOut() throws Exception {
    Files.createDirectories(root.resolve("dev"));
    Files.writeString(root.resolve("dev/accel0"), "");
    Inventory inv = new TpuBackend(root, Optional.empty(), Optional.empty(), Map::of).discover();
    assertThat(inv.device("tpu-0").orElseThrow().attributes())
        .doesNotContainKeys("accelerator", "tpuGen", "topology");
  }

  @Test
  void noChipsNoDevices() throws Exception {
    assertThat(
            new TpuBackend(root, Optional.empty(), Optional.empty(), Map::of).discover().devices())
        .isEmpty();
  }

  @Test
  void generations() {
    assertThat(TpuBackend.generation("tpu-v4-podslice")).contains("v4");
    assertThat(TpuBackend.generation("tpu-v5p-slice")).contains("v5p");
    assertThat(TpuBackend.generation("tpu-v9z-slice")).contains("v9z");
    assertThat(TpuBackend.generation("something")).isEmpty();
  }
}
