package io.kdra.core.alloc;

import static io.kdra.core.testing.AllocFixtures.DRIVER;
import static io.kdra.core.testing.AllocFixtures.deviceClass;
import static io.kdra.core.testing.AllocFixtures.gpu;
import static io.kdra.core.testing.AllocFixtures.node;
import static io.kdra.core.testing.AllocFixtures.slice;
import static io.kdra.core.testing.AllocFixtures.sub;
import static org.junit.jupiter.api.Named.named;
import static org.junit.jupiter.params.provider.Arguments.arguments;

import io.fabric8.kubernetes.api.model.Node;
import io.fabric8.kubernetes.api.model.resource.v1.ResourceClaim;
import io.kdra.core.testing.Scenario;
import java.util.List;
import java.util.stream.Stream;
import org.junit.jupiter.params.provider.Arguments;

/**
 * What the allocator case tables share: class selectors, a node, a slice of GPUs, the row shape.
 */
final class AllocatorCases {

  private AllocatorCases() {}

  static final String ANY_GPU = "device.driver == \"" + DRIVER + "\"";
  static final String MEM_40 =
      "device.capacity[\"" + DRIVER + "\"].memory.compareTo(quantity(\"40Gi\")) >= 0";
  static final String PCIE = "resource.kubernetes.io/pcieRoot";
  static final Node NODE_A = node("node-a");

  static io.fabric8.kubernetes.api.model.resource.v1.DeviceSubRequest allOf(
      io.fabric8.kubernetes.api.model.resource.v1.DeviceSubRequest sub) {
    sub.setAllocationMode("All");
    sub.setCount(null);
    return sub;
  }

  static Arguments tc(
      String name, Scenario s, Node node, List<ResourceClaim> claims, String... expected) {
    return arguments(named(name, s), node, claims, List.of(expected));
  }

  static Scenario gpus(String... devices) {
    var list = Stream.of(devices).map(d -> gpu(d, "A100", "40Gi", "pci0")).toList();
    return Scenario.of(
            slice(
                    "s",
                    "node-a",
                    list.toArray(new io.fabric8.kubernetes.api.model.resource.v1.Device[0]))
                .build())
        .withClasses(deviceClass("gpu", ANY_GPU));
  }
}
