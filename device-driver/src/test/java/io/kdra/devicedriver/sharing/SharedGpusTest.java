package io.kdra.devicedriver.sharing;

import static org.assertj.core.api.Assertions.assertThat;

import io.kdra.core.model.AttributeValue;
import io.kdra.core.model.Quantity;
import io.kdra.devicedriver.discovery.Inventory;
import io.kdra.devicedriver.discovery.NodeDevice;
import io.kdra.devicedriver.testing.Inventories;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

class SharedGpusTest {
  private static SharingSettings settings(SharingSettings.Strategy strategy, int shares) {
    return new SharingSettings(strategy, shares, Quantity.parse("1Gi"), Path.of("/run/mps"));
  }

  private static Inventory typedGpus(int n) {
    return new Inventory(
        Inventories.gpus(n).devices().stream()
            .map(
                d -> {
                  var a = new java.util.HashMap<>(d.attributes());
                  a.put("type", new AttributeValue.StringValue("gpu"));
                  return new NodeDevice(
                      d.name(),
                      a,
                      d.capacity(),
                      d.consumesCounters(),
                      d.health(),
                      d.healthMessage(),
                      d.deviceNodes(),
                      d.env());
                })
            .toList(),
        List.of(),
        List.of("/dev/nvidiactl"));
  }

  @Test
  void exclusiveLeavesTheInventoryAsItIs() {
    Inventory in = typedGpus(2);
    assertThat(SharedGpus.apply(in, SharingSettings.EXCLUSIVE)).isSameAs(in);
  }

  @Test
  void timeSlicingMakesEveryWholeGpuAShareableDeviceWithPolicies() {
    Inventory out =
        SharedGpus.apply(typedGpus(2), settings(SharingSettings.Strategy.TIME_SLICING, 4));

    NodeDevice gpu = out.device("gpu-1").orElseThrow();
    assertThat(gpu.allowMultipleAllocations()).isTrue();
    assertThat(gpu.capacity())
        .containsEntry("shares", Quantity.of(4))
        .containsEntry("memory", Quantity.parse("80Gi"));
    CapacityPolicyAssert.range(gpu.requestPolicies().get("shares"), "1", "1", "4", "1");
    // an unnamed memory request takes an equal share: 80Gi / 4
    CapacityPolicyAssert.range(gpu.requestPolicies().get("memory"), "20Gi", "1Gi", null, "1Gi");
    assertThat(gpu.attributes())
        .containsEntry("sharing", new AttributeValue.StringValue("TimeSlicing"));
    assertThat(gpu.deviceNodes()).containsExactly("/dev/nvidia1");
  }

  @Test
  void mpsIsNamedInTheAttributeAndOddMemoryRoundsTheDefaultDownToAStep() {
    Inventory in =
        new Inventory(
            List.of(
                new NodeDevice(
                    "gpu-0",
                    Map.of("type", new AttributeValue.StringValue("gpu")),
                    Map.of("memory", Quantity.parse("81559Mi")),
                    List.of(),
                    NodeDevice.Health.HEALTHY,
                    "",
                    List.of(),
                    Map.of())),
            List.of(),
            List.of());

    NodeDevice gpu =
        SharedGpus.apply(in, settings(SharingSettings.Strategy.MPS, 8))
            .device("gpu-0")
            .orElseThrow();

    assertThat(gpu.attributes()).containsEntry("sharing", new AttributeValue.StringValue("MPS"));
    // 81559Mi / 8 = 10194.875Mi: 9Gi is the largest whole step below
    assertThat(gpu.requestPolicies().get("memory").defaultValue()).isEqualTo(Quantity.parse("9Gi"));
  }

  @Test
  void migEnabledGpusPartitionsAndOtherDevicesAreNotShared() {
    NodeDevice mig =
        new NodeDevice(
            "gpu-0",
            Map.of(
                "type", new AttributeValue.StringValue("gpu"),
                "migEnabled", new AttributeValue.BoolValue(true)),
            Map.of("memory", Quantity.parse("40Gi")),
            List.of(),
            null,
            "",
            List.of(),
            Map.of());
    NodeDevice partition =
        new NodeDevice(
            "gpu-1-mig-1g5gb-0",
            Map.of("type", new AttributeValue.StringValue("mig")),
            Map.of(),
            List.of(
                new NodeDevice.CounterConsumption(
                    "gpu-1", Map.of("memory-slice-0", Quantity.of(1)))),
            null,
            "",
            List.of(),
            Map.of());
    NodeDevice tpu =
        NodeDevice.of("tpu-0", Map.of("type", new AttributeValue.StringValue("tpu")), Map.of());
    Inventory in = new Inventory(List.of(mig, partition, tpu), List.of(), List.of());

    Inventory out = SharedGpus.apply(in, settings(SharingSettings.Strategy.TIME_SLICING, 8));

    assertThat(out.devices()).noneMatch(NodeDevice::allowMultipleAllocations);
  }
}
