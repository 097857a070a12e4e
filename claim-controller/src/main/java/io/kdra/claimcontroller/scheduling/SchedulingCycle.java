package io.kdra.claimcontroller.scheduling;

import io.fabric8.kubernetes.api.model.resource.v1.AllocationResult;
import io.fabric8.kubernetes.api.model.resource.v1.ResourceClaim;
import io.kdra.claimcontroller.domain.NodeScoring;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;

/**
 * The scheduling cycle (kube-scheduler's {@code schedulingCycle}): {@link Filter}'s nodes, {@link
 * Score}, {@link Filter}'s allocation, then {@link Reserve}, traced around by {@link AttemptSpans}.
 * Runs under one lock, {@link #lock}, so that two pods are never decided at once; once a
 * placement's devices and node are reserved, the lock is released and the next pod is decided while
 * the {@link BindingCycle} writes this one's. So that no pod holds the lock for long, the device
 * search stops at the attempt's deadline, and the diagnosis of a pod that fits nowhere runs after
 * the lock ({@link Decided.Unexplained#explain}); a pod whose search ran out before searches off
 * the lock ({@link OffLockSearch}), on a {@link #snapshot} taken under it.
 */
final class SchedulingCycle {

  private final Object lock = new Object();
  private final DraManager dra;
  private final Filter filter;
  private final Score score;
  private final Reserve reserve;
  private final ClaimTracer tracer;

  SchedulingCycle(DraManager dra, Filter filter, Score score, Reserve reserve, ClaimTracer tracer) {
    this.dra = dra;
    this.filter = filter;
    this.score = score;
    this.reserve = reserve;
    this.tracer = tracer;
  }

  /** The lock every decision runs under (held by {@link GangScheduling} over its whole pass). */
  Object lock() {
    return lock;
  }

  /**
   * Under the lock: where {@code s}'s pod goes, reserved, or why it cannot go anywhere now; its
   * nodes narrowed to those {@code within} accepts (null: all), its device search stopping at the
   * deadline of the pod's attempt number {@code attempt}. {@code s}'s claims are read again first
   * ({@link DraManager#current}): which of them are still to allocate is decided here, under the
   * lock, never from what was read before it.
   */
  Decided decide(CycleState attempted, Filter.Within within, int attempt) {
    CycleState s = current(attempted);
    Filter.Nodes nodes = filter.nodes(s, within);
    if (nodes.result().feasible().isEmpty()) {
      return new Decided.NotPlaced(
          new Outcome.Unschedulable(nodes.result().summary(), Map.of(), "NoFeasibleNode"));
    }
    NodeScoring.Scores scores = score.score(s.pod(), nodes);
    AttemptSpans spans = AttemptSpans.start(tracer, s, nodes.result().feasible().size());
    Filter.Allocation allocation = spans.around(() -> filter.allocate(s, nodes, scores, attempt));
    if (allocation.decision() instanceof PodAllocator.Decision.NotPlaced np) {
      spans.end();
      return new Decided.NotPlaced(
          new Outcome.Unschedulable(np.message(nodes.result()), np.perClaim(), np.reason()));
    }
    if (allocation.decision() instanceof PodAllocator.Decision.Unexplained u) {
      return new Decided.Unexplained(nodes.result(), u, spans);
    }
    PodAllocator.Decision.Placed placed = (PodAllocator.Decision.Placed) allocation.decision();
    spans.around(
        () -> {
          spans.placed(s.claims(), placed.node(), placed.allocations(), allocation.special());
          return null;
        });
    Decided.Placement placement =
        new Decided.Placement(
            placed.node(),
            placed.allocations(),
            relied(s.claims(), placed.allocations()),
            spans,
            allocation.special());
    Optional<String> bug = reserve.reserve(s.pod(), s.claims(), placement);
    if (bug.isPresent()) {
      spans.end();
      return new Decided.NotPlaced(new Outcome.Retry(bug.get()));
    }
    return placement;
  }

  /**
   * Under the lock: what a search of {@code s}'s pod off the lock reads ({@link OffLockSearch}):
   * the filter and score of {@link #decide}, without the search. Cheap: no copy is made (the
   * allocated state is persistent, the node lists are the attempt's own).
   */
  OffLockSearch.Snapshot snapshot(CycleState attempted) {
    CycleState s = current(attempted);
    Filter.Nodes nodes = filter.nodes(s, null);
    if (nodes.result().feasible().isEmpty()) {
      return new OffLockSearch.Snapshot(s, nodes.result(), null, nodes.state());
    }
    NodeScoring.Scores scores = score.score(s.pod(), nodes);
    return new OffLockSearch.Snapshot(s, nodes.result(), ScoreOrder.of(scores), nodes.state());
  }

  /**
   * The allocations the placement relies on, by claim UID: those of the pod's claims allocated
   * already, as seen under the lock (assumed ones included). Its writes reserve a claim only while
   * it is still allocated so ({@link io.kdra.claimcontroller.domain.Reservation#decide}).
   */
  static Map<String, AllocationResult> relied(
      List<ResourceClaim> claims, Map<String, AllocationResult> allocating) {
    Map<String, AllocationResult> out = new HashMap<>();
    for (ResourceClaim c : claims) {
      String uid = c.getMetadata().getUid();
      if (!allocating.containsKey(uid)
          && c.getStatus() != null
          && c.getStatus().getAllocation() != null) {
        out.put(uid, c.getStatus().getAllocation());
      }
    }
    return out;
  }

  /** {@code s} with its claims as they are now, allocations assumed under this lock included. */
  private CycleState current(CycleState s) {
    return s.withClaims(dra.current(s.claims()));
  }

  /** Under the lock: gives back a placement {@link #decide} reserved and that is not written. */
  void unreserve(CycleState s, Decided.Placement placement) {
    reserve.unreserve(s.pod(), s.claims(), placement);
    placement.spans().end();
  }
}
