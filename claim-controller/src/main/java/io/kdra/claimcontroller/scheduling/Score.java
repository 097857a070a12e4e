package io.kdra.claimcontroller.scheduling;

import io.fabric8.kubernetes.api.model.Pod;
import io.kdra.claimcontroller.domain.NodeScoring;

/**
 * kube-scheduler's Score for this scheduler: the feasible nodes scored by the default score plugins
 * ({@link NodeScoring}), so the soft rules (preferred affinity, spreading, balanced use) count. The
 * DynamicResources score, which needs the devices, is the allocator's ({@link ScoreOrder}). Under
 * the scheduling lock.
 */
final class Score {

  private final DraManager dra;
  private final AllocatableCache allocatable;

  Score(DraManager dra, AllocatableCache allocatable) {
    this.dra = dra;
    this.allocatable = allocatable;
  }

  NodeScoring.Scores score(Pod pod, Filter.Nodes nodes) {
    String uid = pod.getMetadata().getUid();
    NodeUsageCache usage = dra.usage();
    return NodeScoring.score(
        new NodeScoring.Input(
            pod,
            nodes.result().feasible(),
            nodes.all(),
            nodes.used(),
            allocatable::of,
            () -> Filter.others(uid, usage.placed()),
            Filter.others(uid, usage.placedWithAffinity()),
            dra.view()::namespaceLabels,
            nodes.volumes()));
  }
}
