package io.kdra.alloc.cli;

import io.fabric8.kubernetes.api.model.NodeSelector;
import io.fabric8.kubernetes.api.model.NodeSelectorRequirement;
import io.fabric8.kubernetes.api.model.resource.v1.AllocationResult;
import io.fabric8.kubernetes.api.model.resource.v1.DeviceRequestAllocationResult;
import io.fabric8.kubernetes.api.model.resource.v1.ResourceClaim;
import io.kdra.core.whatif.WhatIf;
import java.util.List;
import java.util.Optional;
import java.util.stream.Collectors;

/** One human line per allocated claim: where it landed and which devices it got. */
public final class Summary {

  private Summary() {}

  /**
   * {@code ns/claim -> node-b: gpu (gpu.example.com/node-b/gpu-0)}; empty for a claim that was not
   * allocated (its reason goes to stderr like in the other formats).
   */
  public static Optional<String> line(ResourceClaim claim) {
    AllocationResult allocation =
        claim.getStatus() == null ? null : claim.getStatus().getAllocation();
    if (allocation == null) {
      return Optional.empty();
    }
    String devices =
        allocation.getDevices().getResults().stream()
            .map(Summary::device)
            .collect(Collectors.joining(", "));
    return Optional.of(
        WhatIf.key(claim.getMetadata())
            + " -> "
            + where(allocation.getNodeSelector())
            + ": "
            + devices);
  }

  private static String device(DeviceRequestAllocationResult r) {
    return r.getRequest() + " (" + r.getDriver() + "/" + r.getPool() + "/" + r.getDevice() + ")";
  }

  /** The node for node-local allocations, else the selector in words. */
  public static String where(NodeSelector selector) {
    if (selector == null
        || selector.getNodeSelectorTerms() == null
        || selector.getNodeSelectorTerms().isEmpty()) {
      return "any node";
    }
    var term = selector.getNodeSelectorTerms().get(0);
    List<NodeSelectorRequirement> fields = term.getMatchFields();
    if (fields != null
        && fields.size() == 1
        && "metadata.name".equals(fields.get(0).getKey())
        && "In".equals(fields.get(0).getOperator())
        && fields.get(0).getValues().size() == 1) {
      return fields.get(0).getValues().get(0);
    }
    return "nodes matching "
        + (term.getMatchExpressions() == null
            ? List.of()
            : term.getMatchExpressions().stream()
                .map(r -> r.getKey() + " " + r.getOperator() + " " + r.getValues())
                .toList());
  }
}
