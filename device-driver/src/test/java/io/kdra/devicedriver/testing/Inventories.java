package io.kdra.devicedriver.testing;

import io.kdra.core.model.AttributeValue;
import io.kdra.core.model.Quantity;
import io.kdra.devicedriver.discovery.Inventory;
import io.kdra.devicedriver.discovery.NodeDevice;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;

/** Small inventories for tests. */
public final class Inventories {
  private Inventories() {}

  /** {@code n} GPUs named gpu-0.. with device nodes /dev/nvidia<i>, plus /dev/nvidiactl. */
  public static Inventory gpus(int n) {
    List<NodeDevice> devices = new ArrayList<>();
    for (int i = 0; i < n; i++) {
      devices.add(
          new NodeDevice(
              "gpu-" + i,
              Map.of(
                  "index", new AttributeValue.IntValue(i),
                  "productName", new AttributeValue.StringValue("Simulated GPU")),
              Map.of("memory", Quantity.parse("80Gi")),
              List.of(),
              NodeDevice.Health.HEALTHY,
              "",
              List.of("/dev/nvidia" + i),
              Map.of()));
    }
    return new Inventory(devices, List.of(), List.of("/dev/nvidiactl"));
  }

  /** The inventory with the named devices shareable (allowMultipleAllocations), same capacity. */
  public static Inventory shared(Inventory inventory, String... names) {
    List<String> shared = List.of(names);
    return new Inventory(
        inventory.devices().stream()
            .map(d -> shared.contains(d.name()) ? d.shared(d.capacity(), Map.of()) : d)
            .toList(),
        inventory.sharedCounters(),
        inventory.commonDeviceNodes());
  }
}
