package io.kdra.claimcontroller.domain;

import io.fabric8.kubernetes.api.model.Affinity;
import io.fabric8.kubernetes.api.model.Node;
import io.fabric8.kubernetes.api.model.NodeSelector;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.PreferredSchedulingTerm;
import io.kdra.core.alloc.NodeSelectors;
import java.util.List;

/**
 * kube-scheduler's NodeAffinity score ({@code nodeaffinity/node_affinity.go}): a node scores the
 * sum of the weights of the pod's {@code preferredDuringSchedulingIgnoredDuringExecution} terms it
 * matches, normalised so the best scores 100. A pod without such terms is not scored (upstream's
 * PreScore Skip). Pure.
 */
final class NodeAffinityScore {

  private NodeAffinityScore() {}

  /** Normalised scores in {@code nodes}' order, or null when the pod has no preferred term. */
  static long[] score(Pod pod, List<Node> nodes) {
    Affinity a = pod.getSpec().getAffinity();
    List<PreferredSchedulingTerm> terms =
        a == null || a.getNodeAffinity() == null
            ? null
            : a.getNodeAffinity().getPreferredDuringSchedulingIgnoredDuringExecution();
    if (terms == null || terms.isEmpty()) {
      return null;
    }
    List<PreferredSchedulingTerm> weighted =
        terms.stream()
            .filter(t -> t.getWeight() != null && t.getWeight() != 0 && t.getPreference() != null)
            .toList();
    long[] raw = new long[nodes.size()];
    for (int i = 0; i < raw.length; i++) {
      for (PreferredSchedulingTerm t : weighted) {
        if (NodeSelectors.matches(new NodeSelector(List.of(t.getPreference())), nodes.get(i))) {
          raw[i] += t.getWeight();
        }
      }
    }
    return NodeScoring.defaultNormalize(raw, false);
  }
}
