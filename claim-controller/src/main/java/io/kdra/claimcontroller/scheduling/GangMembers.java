package io.kdra.claimcontroller.scheduling;

import io.fabric8.kubernetes.api.model.Pod;
import io.kdra.claimcontroller.domain.PodClaimResolver;
import io.kdra.claimcontroller.domain.PodGroupClaims;
import io.kdra.claimcontroller.domain.PodGroupPolicy;
import io.kdra.claimcontroller.domain.Pods;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashSet;
import java.util.List;
import java.util.Optional;
import java.util.Set;

/**
 * A PodGroup's members as one gang pass sees them: which are placed (bound, or being bound by this
 * process) and where, which are pending, and which of those could be placed now, each with its
 * claims (the PodGroup's own claims included, {@link PodGroupClaims}).
 */
final class GangMembers {

  /**
   * The group at the start of a pass.
   *
   * @param all the members scheduled by the pod's scheduler and not done, sorted by name
   * @param placedOn the nodes of the placed members
   * @param placed how many members are placed
   * @param pending the members not placed, sorted by name
   */
  record Group(List<Pod> all, Set<String> placedOn, int placed, List<Pod> pending) {}

  private final TemplateClaimController templates;
  private final ClusterView view;
  private final RecentWrites recent;

  GangMembers(TemplateClaimController templates, DraManager dra) {
    this.templates = templates;
    this.view = dra.view();
    this.recent = dra.recent();
  }

  /** The members of {@code policy}'s group that {@code pod}'s scheduler places. */
  Group of(Pod pod, PodGroupPolicy policy) {
    String namespace = pod.getMetadata().getNamespace();
    String scheduler = pod.getSpec().getSchedulerName();
    List<Pod> group =
        view.pods().stream()
            .filter(p -> namespace.equals(p.getMetadata().getNamespace()))
            .filter(p -> Optional.of(policy.name()).equals(PodGroupPolicy.groupOf(p)))
            .filter(p -> Pods.isScheduledBy(p, scheduler) && !Pods.isDone(p))
            .sorted(Comparator.comparing((Pod p) -> p.getMetadata().getName()))
            .toList();
    Set<String> placedOn = new HashSet<>();
    List<Pod> pending = new ArrayList<>();
    int placed = 0;
    for (Pod p : group) {
      Optional<String> node = nodeOf(p);
      if (node.isPresent()) {
        placedOn.add(node.get());
        placed++;
      } else {
        pending.add(p);
      }
    }
    return new Group(group, placedOn, placed, pending);
  }

  /**
   * The member with its claims, when it could be placed now as a lone pod could: no scheduling
   * gates, every claim there and not being deleted, no unsupported volume.
   */
  Optional<CycleState> prepare(Pod p, PodGroupClaims group) {
    if (p.getSpec().getSchedulingGates() != null && !p.getSpec().getSchedulingGates().isEmpty()) {
      return Optional.empty();
    }
    PodClaimResolver.Resolution r = templates.resolve(p, group);
    if (!r.complete()
        || !PreEnqueue.missing(r).isEmpty()
        || !PreEnqueue.beingDeleted(r).isEmpty()
        || PreFilter.refusal(p, view).isPresent()) {
      return Optional.empty();
    }
    return Optional.of(PreFilter.state(p, r, group, view));
  }

  /** A member's node: bound, or being bound by this process. */
  private Optional<String> nodeOf(Pod p) {
    if (Pods.isBound(p)) {
      return Optional.of(p.getSpec().getNodeName());
    }
    return recent.bindingNode(p.getMetadata().getUid());
  }
}
