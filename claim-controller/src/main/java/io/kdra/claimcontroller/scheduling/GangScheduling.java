package io.kdra.claimcontroller.scheduling;

import io.fabric8.kubernetes.api.model.Pod;
import io.kdra.claimcontroller.domain.PodGroupPolicy;
import io.kdra.claimcontroller.scheduling.Decided.Placement;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.TreeMap;
import java.util.function.BooleanSupplier;

/**
 * Places the pods of a PodGroup ({@code spec.schedulingGroup}, Kubernetes 1.37's Workload API) with
 * a gang policy all or nothing: when a member is attempted and at least {@code minCount} members
 * exist, every pending member is decided in one pass under the scheduling lock ({@link GangPass},
 * over the {@link GangMembers}), each seeing the devices and node resources the ones before it
 * took; the pass is written only if at least {@code minCount} (less the members already placed)
 * fit, else what it took is given back before the lock is released, so a gang that cannot run holds
 * nothing. The members' writes (reservations, bindings) follow, outside the lock, each as a lone
 * pod's ({@link GangWrites}).
 */
final class GangScheduling {

  /** Upstream's reason while fewer than minCount members exist (gangscheduling's PreEnqueue). */
  static final String WAITING_FOR_MEMBERS =
      "waiting for minCount pods from a gang to appear in scheduling queue";

  private final SchedulingCycle cycle;
  private final GangPass pass;
  private final GangWrites writes;
  private final BooleanSupplier mayWrite;

  GangScheduling(
      SchedulingCycle cycle,
      BindingCycle binding,
      TemplateClaimController templates,
      DraManager dra,
      BooleanSupplier mayWrite) {
    this.cycle = cycle;
    this.pass = new GangPass(cycle, new GangMembers(templates, dra), dra);
    this.writes = new GangWrites(cycle, binding);
    this.mayWrite = mayWrite;
  }

  /**
   * The attempt's outcome for {@code pod} when it belongs to a PodGroup whose policy places its
   * pods together; empty when it is scheduled alone (no group, or the basic policy without a
   * topology constraint). {@code found} is the pod's PodGroup as read for this attempt.
   */
  Optional<Outcome> schedule(Pod pod, int attempt, Optional<PodGroupPolicy> found) {
    Optional<String> groupName = PodGroupPolicy.groupOf(pod);
    if (groupName.isEmpty()) {
      return Optional.empty();
    }
    Optional<Outcome> missing = missing(pod, found);
    if (missing.isPresent()) {
      return missing;
    }
    PodGroupPolicy policy = found.get();
    if (!policy.constrains()) {
      return Optional.empty();
    }
    GangPass.Result result;
    // the members are counted under the lock too: another attempt's pass assumes members (they
    // look placed) and gives them back under it
    synchronized (cycle.lock()) {
      if (!mayWrite.getAsBoolean()) {
        return Optional.of(PodScheduling.FENCED);
      }
      result = pass.decide(pod, policy, attempt);
    }
    return Optional.of(
        result.outcome() != null ? result.outcome() : writes.write(pod, policy, result));
  }

  /**
   * What {@link #schedule} would decide for {@code pod}'s group now, without writing: the pass runs
   * under the lock as {@link #schedule}'s does, and every placement it keeps is given back before
   * the lock is released. Empty when the pod is scheduled alone.
   */
  Optional<GangWhatIf> whatIf(Pod pod, Optional<PodGroupPolicy> found) {
    Optional<Outcome> missing = missing(pod, found);
    if (missing.isPresent()) {
      return Optional.of(GangWhatIf.refused(missing.get()));
    }
    if (found.isEmpty() || !found.get().constrains()) {
      return Optional.empty();
    }
    synchronized (cycle.lock()) {
      GangPass.Result result = pass.decide(pod, found.get(), 1);
      if (result.outcome() != null) {
        return Optional.of(GangWhatIf.refused(result.outcome()));
      }
      List<Map.Entry<CycleState, Placement>> kept =
          new ArrayList<>(result.kept().placed().entrySet());
      Map<String, String> placed = new TreeMap<>();
      for (int i = kept.size() - 1; i >= 0; i--) {
        CycleState m = kept.get(i).getKey();
        placed.put(m.pod().getMetadata().getName(), kept.get(i).getValue().node());
        cycle.unreserve(m, kept.get(i).getValue());
      }
      return Optional.of(new GangWhatIf(placed, null));
    }
  }

  /**
   * Upstream's gangscheduling PreEnqueue for a pod whose PodGroup does not exist ({@code found}
   * empty): it waits, and kube-controller-manager makes no claim for it meanwhile. Brought back by
   * the group's creation (the PodGroup informer), and by backoff where none runs.
   */
  static Optional<Outcome> missing(Pod pod, Optional<PodGroupPolicy> found) {
    Optional<String> groupName = PodGroupPolicy.groupOf(pod);
    if (groupName.isEmpty() || found.isPresent()) {
      return Optional.empty();
    }
    return Optional.of(
        new Outcome.Unschedulable(
            "waiting for pods's pod group \""
                + groupName.get()
                + "\" to appear in scheduling queue",
            Map.of(),
            "PodGroupMissing"));
  }
}
