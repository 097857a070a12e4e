package io.kdra.devicedriver.publisher;

import static org.assertj.core.api.Assertions.assertThat;

import io.kdra.core.model.Quantity;
import io.kdra.devicedriver.discovery.CapacityPolicy;
import io.kdra.devicedriver.discovery.Inventory;
import io.kdra.devicedriver.discovery.NodeDevice;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import org.junit.jupiter.api.Test;

class SnapshotMapperTest {
  @Test
  void aSharedDeviceCarriesAllowMultipleAllocationsAndItsRequestPolicies() {
    NodeDevice gpu =
        NodeDevice.of("gpu-0", Map.of(), Map.of("memory", Quantity.parse("80Gi")))
            .shared(
                Map.of("memory", Quantity.parse("80Gi"), "shares", Quantity.of(8)),
                Map.of(
                    "shares",
                        new CapacityPolicy(
                            Quantity.of(1),
                            List.of(),
                            Optional.of(Quantity.of(1)),
                            Optional.of(Quantity.of(8)),
                            Optional.of(Quantity.of(1))),
                    "memory",
                        new CapacityPolicy(
                            Quantity.parse("10Gi"),
                            List.of(Quantity.parse("10Gi"), Quantity.parse("40Gi")),
                            Optional.empty(),
                            Optional.empty(),
                            Optional.empty())));

    var device =
        SnapshotMapper.snapshot("gpu.kdra.io", "node-a", 1, Inventory.of(List.of(gpu)))
            .getDevices(0);

    assertThat(device.getAllowMultipleAllocations()).isTrue();
    assertThat(device.getCapacityMap()).containsEntry("shares", "8");
    var shares = device.getRequestPoliciesOrThrow("shares");
    assertThat(shares.getDefault()).isEqualTo("1");
    assertThat(shares.getValidRange().getMin()).isEqualTo("1");
    assertThat(shares.getValidRange().getMax()).isEqualTo("8");
    assertThat(shares.getValidRange().getStep()).isEqualTo("1");
    var memory = device.getRequestPoliciesOrThrow("memory");
    assertThat(memory.getValidValuesList()).containsExactly("10Gi", "40Gi");
    assertThat(memory.hasValidRange()).isFalse();
  }

  @Test
  void anExclusiveDeviceHasNeither() {
    var device =
        SnapshotMapper.snapshot(
                "gpu.kdra.io",
                "node-a",
                1,
                Inventory.of(List.of(NodeDevice.of("gpu-0", Map.of(), Map.of()))))
            .getDevices(0);

    assertThat(device.getAllowMultipleAllocations()).isFalse();
    assertThat(device.getRequestPoliciesMap()).isEmpty();
  }
}
