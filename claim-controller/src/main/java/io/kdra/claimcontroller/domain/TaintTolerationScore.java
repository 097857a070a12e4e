package io.kdra.claimcontroller.domain;

import io.fabric8.kubernetes.api.model.Node;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.Taint;
import io.fabric8.kubernetes.api.model.Toleration;
import java.util.List;

/**
 * kube-scheduler's TaintToleration score ({@code tainttoleration/taint_toleration.go}): a node
 * scores by how few of its {@code PreferNoSchedule} taints the pod does not tolerate (tolerations
 * with that effect or none count), normalised reversed, so the node with the fewest scores 100.
 * Pure.
 */
final class TaintTolerationScore {

  private TaintTolerationScore() {}

  /** Normalised scores, in {@code nodes}' order. */
  static long[] score(Pod pod, List<Node> nodes) {
    List<Toleration> preferNoSchedule =
        pod.getSpec().getTolerations() == null
            ? List.of()
            : pod.getSpec().getTolerations().stream()
                .filter(
                    t ->
                        t.getEffect() == null
                            || t.getEffect().isEmpty()
                            || "PreferNoSchedule".equals(t.getEffect()))
                .toList();
    long[] raw = new long[nodes.size()];
    for (int i = 0; i < raw.length; i++) {
      List<Taint> taints =
          nodes.get(i).getSpec() == null ? null : nodes.get(i).getSpec().getTaints();
      if (taints == null) {
        continue;
      }
      for (Taint t : taints) {
        if ("PreferNoSchedule".equals(t.getEffect())
            && preferNoSchedule.stream().noneMatch(tol -> Taints.tolerates(tol, t))) {
          raw[i]++;
        }
      }
    }
    return NodeScoring.defaultNormalize(raw, true);
  }
}
