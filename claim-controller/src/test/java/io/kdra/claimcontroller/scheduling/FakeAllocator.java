package io.kdra.claimcontroller.scheduling;

import io.fabric8.kubernetes.api.model.Node;
import io.fabric8.kubernetes.api.model.NodeSelectorBuilder;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.resource.v1.AllocationResult;
import io.fabric8.kubernetes.api.model.resource.v1.AllocationResultBuilder;
import io.fabric8.kubernetes.api.model.resource.v1.ResourceClaim;
import io.kdra.core.alloc.AllocatedState;
import io.kdra.core.alloc.Deadline;
import io.kdra.core.model.DeviceId;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.function.Predicate;

/**
 * A hand-written allocator for tests: every node has {@code devicesPerNode} devices {@code
 * dev-0..}; a claim takes the lowest free one on the first candidate node with enough free devices,
 * counting what the allocated state already holds. Records its calls.
 */
final class FakeAllocator implements PodAllocator {

  static final String DRIVER = "gpu.example.com";

  final int devicesPerNode;
  int calls;

  FakeAllocator(int devicesPerNode) {
    this.devicesPerNode = devicesPerNode;
  }

  @Override
  public Decision allocate(
      Pod pod,
      List<Node> candidates,
      List<ResourceClaim> unallocated,
      AllocatedState allocated,
      ClusterView view,
      Deadline deadline) {
    calls++;
    for (Node node : candidates) {
      String n = node.getMetadata().getName();
      Predicate<String> taken = d -> allocated.isAllocated(new DeviceId(DRIVER, n, d));
      Map<String, AllocationResult> out = new LinkedHashMap<>();
      int next = 0;
      for (ResourceClaim c : unallocated) {
        while (next < devicesPerNode && taken.test("dev-" + next)) {
          next++;
        }
        if (next >= devicesPerNode) {
          break;
        }
        out.put(c.getMetadata().getUid(), result(n, "dev-" + next));
        next++;
      }
      if (out.size() == unallocated.size()) {
        return new Decision.Placed(n, out);
      }
    }
    return new Decision.NotPlaced(
        "cannot allocate all claims: no device left",
        Map.of(unallocated.get(0).getMetadata().getName(), "no free device"),
        "NoDevice");
  }

  static AllocationResult result(String node, String device) {
    return new AllocationResultBuilder()
        .withNewDevices()
        .addNewResult()
        .withRequest("gpu")
        .withDriver(DRIVER)
        .withPool(node)
        .withDevice(device)
        .endResult()
        .endDevices()
        .withNodeSelector(
            new NodeSelectorBuilder()
                .addNewNodeSelectorTerm()
                .addNewMatchField()
                .withKey("metadata.name")
                .withOperator("In")
                .withValues(node)
                .endMatchField()
                .endNodeSelectorTerm()
                .build())
        .build();
  }
}
