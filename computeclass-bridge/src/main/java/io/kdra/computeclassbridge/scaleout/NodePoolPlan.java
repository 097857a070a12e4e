package io.kdra.computeclassbridge.scaleout;

import io.fabric8.kubernetes.api.model.GenericKubernetesResource;
import io.kdra.computeclassbridge.mapping.PriorityNote;
import java.util.List;

/**
 * The Karpenter NodePools one ComputeClass implies.
 *
 * @param nodePools sorted by name; weights follow the priorities
 * @param skipped priorities that need no NodePool of their own (no accelerator, or the same
 *     machines as an earlier one): expected, not an error
 * @param problems priorities that name an accelerator no configured instance type has: the
 *     ComputeClass is degraded, since the autoscaler cannot create nodes for them
 */
public record NodePoolPlan(
    List<GenericKubernetesResource> nodePools,
    List<PriorityNote> skipped,
    List<PriorityNote> problems) {

  public NodePoolPlan {
    nodePools = List.copyOf(nodePools);
    skipped = List.copyOf(skipped);
    problems = List.copyOf(problems);
  }
}
