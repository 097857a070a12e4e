package io.kdra.claimcontroller.domain;

import io.fabric8.kubernetes.api.model.Pod;
import java.util.HashSet;
import java.util.Optional;
import java.util.Set;

/**
 * The nodes kube-scheduler's PreFilter phase leaves to the filters, as its framework merges the
 * PreFilter results (1.37 {@code RunPreFilterPlugins}): NodeName's ({@code spec.nodeName}, the one
 * node) first, then NodeAffinity's ({@link NodeAffinityPreFilter}), intersected. A node left out is
 * rejected with the framework's reason naming the plugins that narrowed the set; when their names
 * exclude each other, every node is, with the framework's "simultaneously" reason. Pure.
 */
public final class PreFilterNodeNames {

  private final Optional<Set<String>> names;
  private final String reason;

  private PreFilterNodeNames(Optional<Set<String>> names, String reason) {
    this.names = names;
    this.reason = reason;
  }

  /** The PreFilter's answer for the pod. */
  public static PreFilterNodeNames of(Pod pod) {
    String nodeName = pod.getSpec() == null ? null : pod.getSpec().getNodeName();
    boolean named = nodeName != null && !nodeName.isEmpty();
    Optional<Set<String>> affinity = NodeAffinityPreFilter.nodeNames(pod);
    if (affinity.isPresent() && affinity.get().isEmpty()) {
      // NodeAffinity's PreFilter fails the pod on every node
      return new PreFilterNodeNames(Optional.of(Set.of()), NodeAffinityPreFilter.REASON_CONFLICT);
    }
    if (!named) {
      return new PreFilterNodeNames(affinity, NodeAffinityPreFilter.REASON_NOT_NAMED);
    }
    if (affinity.isEmpty()) {
      return new PreFilterNodeNames(
          Optional.of(Set.of(nodeName)), "node(s) didn't satisfy plugin(s) [NodeName]");
    }
    Set<String> both = new HashSet<>(affinity.get());
    both.retainAll(Set.of(nodeName));
    if (both.isEmpty()) {
      return new PreFilterNodeNames(
          Optional.of(Set.of()),
          "node(s) didn't satisfy plugin(s) [NodeAffinity NodeName] simultaneously");
    }
    return new PreFilterNodeNames(
        Optional.of(both), "node(s) didn't satisfy plugin(s) [NodeAffinity NodeName]");
  }

  /**
   * The reason when the PreFilter leaves no node at all: upstream's framework then stops before the
   * later PreFilters (the volume plugins') run, so this is every node's reason, whatever else
   * fails.
   */
  public Optional<String> refusal() {
    return names.isPresent() && names.get().isEmpty() ? Optional.of(reason) : Optional.empty();
  }

  /** The reason the PreFilter rejects {@code node}, if it does. */
  public Optional<String> reject(String node) {
    if (names.isEmpty() || names.get().contains(node)) {
      return Optional.empty();
    }
    return Optional.of(reason);
  }
}
