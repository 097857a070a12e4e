package io.kdra.claimcontroller.domain;

import io.fabric8.kubernetes.api.model.NodeSelectorRequirement;
import io.fabric8.kubernetes.api.model.NodeSelectorTerm;
import io.fabric8.kubernetes.api.model.Pod;
import java.util.HashSet;
import java.util.List;
import java.util.Optional;
import java.util.Set;

/**
 * kube-scheduler's NodeAffinity PreFilter: when every required node affinity term names nodes with
 * {@code metadata.name In} (matchFields), only the nodes they name are considered; every other node
 * is rejected before any filter runs, for that reason. Terms are ORed (the union of their names), a
 * term's name requirements ANDed (the intersection); names that exclude each other in every term
 * make the pod fit nowhere. Pure.
 */
public final class NodeAffinityPreFilter {

  /**
   * The reason for a node the terms do not name (the framework's, for nodes a PreFilter left out).
   */
  public static final String REASON_NOT_NAMED = "node(s) didn't satisfy plugin(s) [NodeAffinity]";

  /** Upstream's {@code errReasonConflict}: the terms' names exclude each other. */
  public static final String REASON_CONFLICT = "pod affinity terms conflict";

  private NodeAffinityPreFilter() {}

  /** The nodes the pod's required node affinity names; empty: every node is considered. */
  public static Optional<Set<String>> nodeNames(Pod pod) {
    var affinity = pod.getSpec() == null ? null : pod.getSpec().getAffinity();
    var required =
        affinity == null || affinity.getNodeAffinity() == null
            ? null
            : affinity.getNodeAffinity().getRequiredDuringSchedulingIgnoredDuringExecution();
    List<NodeSelectorTerm> terms = required == null ? null : required.getNodeSelectorTerms();
    if (terms == null || terms.isEmpty()) {
      return Optional.empty();
    }
    Set<String> names = new HashSet<>();
    for (NodeSelectorTerm t : terms) {
      Set<String> termNames = null;
      for (NodeSelectorRequirement r :
          t.getMatchFields() == null ? List.<NodeSelectorRequirement>of() : t.getMatchFields()) {
        if ("metadata.name".equals(r.getKey()) && "In".equals(r.getOperator())) {
          Set<String> values = r.getValues() == null ? Set.of() : Set.copyOf(r.getValues());
          if (termNames == null) {
            termNames = new HashSet<>(values);
          } else {
            termNames.retainAll(values);
          }
        }
      }
      if (termNames == null) {
        return Optional.empty(); // a term without names: every node may match it
      }
      names.addAll(termNames);
    }
    return Optional.of(names);
  }

  /**
   * The reason the PreFilter rejects {@code node}, if it does.
   *
   * @param names what {@link #nodeNames} gave
   */
  public static Optional<String> reject(Optional<Set<String>> names, String node) {
    if (names.isEmpty()) {
      return Optional.empty();
    }
    if (names.get().isEmpty()) {
      return Optional.of(REASON_CONFLICT);
    }
    return names.get().contains(node) ? Optional.empty() : Optional.of(REASON_NOT_NAMED);
  }
}
