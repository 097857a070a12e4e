package io.kdra.core.alloc;

import io.fabric8.kubernetes.api.model.Node;
import io.fabric8.kubernetes.api.model.NodeSelector;
import io.fabric8.kubernetes.api.model.Pod;
import java.util.BitSet;
import java.util.List;
import java.util.Objects;

/**
 * The nodes a pod may run on before devices are considered: its node name, node selector and
 * required node affinity, and the node selectors of its claims that are allocated already (as
 * kube-scheduler's DynamicResources filter). The one place these checks live in dra-core. Pure.
 */
final class NodeEligibility {

  private NodeEligibility() {}

  /**
   * The positions in {@code sorted} of the nodes the pod may run on; null when every node may be
   * used (the pod has no node constraints and no allocated claim restricts it), so that no set is
   * built per pod.
   */
  static BitSet eligible(Pod pod, List<Node> sorted, List<NodeSelector> allocatedSelectors) {
    boolean pinned = allocatedSelectors.stream().anyMatch(Objects::nonNull);
    if (!hasNodeConstraints(pod) && !pinned) {
      return null;
    }
    BitSet eligible = new BitSet(sorted.size());
    for (int i = 0; i < sorted.size(); i++) {
      if (fits(pod, sorted.get(i), allocatedSelectors)) {
        eligible.set(i);
      }
    }
    return eligible;
  }

  /** Whether the pod constrains its nodes at all; when not, {@link #fits} is always true. */
  private static boolean hasNodeConstraints(Pod pod) {
    if (pod == null || pod.getSpec() == null) {
      return false;
    }
    var spec = pod.getSpec();
    return (spec.getNodeName() != null && !spec.getNodeName().isEmpty())
        || (spec.getNodeSelector() != null && !spec.getNodeSelector().isEmpty())
        || (spec.getAffinity() != null
            && spec.getAffinity().getNodeAffinity() != null
            && spec.getAffinity()
                    .getNodeAffinity()
                    .getRequiredDuringSchedulingIgnoredDuringExecution()
                != null);
  }

  /**
   * Whether the pod may run on the node: {@link #fits(Pod, Node)}, and every allocated claim of the
   * pod may be used there ({@link NodeSelectors#allowAll}).
   */
  static boolean fits(Pod pod, Node node, List<NodeSelector> allocatedSelectors) {
    return fits(pod, node) && NodeSelectors.allowAll(allocatedSelectors, node);
  }

  /** Whether the pod may run on the node: node name, node selector, required node affinity. */
  static boolean fits(Pod pod, Node node) {
    if (pod == null || pod.getSpec() == null) {
      return true;
    }
    var spec = pod.getSpec();
    if (spec.getNodeName() != null
        && !spec.getNodeName().isEmpty()
        && !spec.getNodeName().equals(node.getMetadata().getName())) {
      return false;
    }
    if (!NodeSelectors.labelsMatch(spec.getNodeSelector(), node)) {
      return false;
    }
    if (spec.getAffinity() != null && spec.getAffinity().getNodeAffinity() != null) {
      NodeSelector required =
          spec.getAffinity().getNodeAffinity().getRequiredDuringSchedulingIgnoredDuringExecution();
      if (required != null && !NodeSelectors.matches(required, node)) {
        return false;
      }
    }
    return true;
  }
}
