package io.kdra.claimcontroller.scheduling;

import io.kdra.claimcontroller.domain.NodeFilter;
import io.kdra.claimcontroller.domain.SearchDeadline;
import io.kdra.claimcontroller.domain.SearchSite;
import io.kdra.core.alloc.AllocatedState;
import io.kdra.core.alloc.Deadline;
import io.kdra.core.alloc.RankedSearch;
import java.time.Duration;
import java.util.Map;
import java.util.concurrent.Semaphore;
import java.util.concurrent.TimeUnit;
import java.util.function.BooleanSupplier;
import java.util.function.LongSupplier;

/**
 * The scheduling cycle of a pod whose device search ran out of time before ({@link
 * SearchSite#OFF_LOCK}): its search runs off the scheduling lock, so that the other pods are
 * decided meanwhile. Under the lock, the cycle filters and scores the nodes and takes a {@link
 * Snapshot} (no copy: the allocated state is persistent); off it, the search runs on that snapshot
 * with the attempt's limit. A search that finds nothing is the attempt's outcome, as under the
 * lock. A placement it finds is never written as found: the lock is taken again and the cycle
 * decides the pod anew, on that node alone and with the first attempt's limit, against the devices
 * taken since; only that decision is reserved and written, so no device goes to two claims. When
 * the node no longer fits, the pod is retried soon ({@link Outcome.Retry}).
 *
 * <p>One search at a time runs off the lock (a permit, waited for at most the attempt's limit), on
 * the caller's thread, with an allocator of its own ({@link PodAllocator#detached}) so that it
 * never holds what the searches under the lock need.
 */
final class OffLockSearch {

  /** A placement found off the lock is redone under it with the first attempt's limit. */
  static final int REDO_ATTEMPT = 1;

  /**
   * What the search reads, taken under the lock; immutable.
   *
   * @param state the attempt's pod and claims
   * @param nodes the nodes the pod may go to, and why the others not
   * @param order the feasible nodes, best score first; null when there is none
   * @param allocated what every claim held, with the nominations held against the pod
   */
  record Snapshot(
      CycleState state,
      NodeFilter.Result nodes,
      RankedSearch.Ranked order,
      AllocatedState allocated) {}

  private final Semaphore permit = new Semaphore(1, true);
  private final SchedulingCycle cycle;
  private final PodAllocator allocator;
  private final ClusterView view;
  private final ClaimTracer tracer;
  private final BooleanSupplier mayWrite;
  private final SearchDeadline deadline;
  private final LongSupplier nanoClock;

  OffLockSearch(
      SchedulingCycle cycle,
      PodAllocator allocator,
      ClusterView view,
      PodScheduling.Settings settings) {
    this.cycle = cycle;
    this.allocator = allocator.detached();
    this.view = view;
    this.tracer = settings.tracer();
    this.mayWrite = settings.mayWrite();
    this.deadline = settings.deadline();
    this.nanoClock = settings.nanoClock();
  }

  /**
   * Where {@code s}'s pod goes, reserved as {@link SchedulingCycle#decide} reserves it, or why it
   * goes nowhere now; its search off the lock with the limit of attempt number {@code attempt}.
   */
  Decided decide(CycleState s, int attempt) {
    Duration limit = deadline.limit(attempt);
    try {
      if (!permit.tryAcquire(limit.toNanos(), TimeUnit.NANOSECONDS)) {
        return new Decided.NotPlaced(busy(limit));
      }
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      return new Decided.NotPlaced(new Outcome.Retry("interrupted waiting to search"));
    }
    Snapshot snapshot;
    PodAllocator.Decision found;
    AttemptSpans spans;
    try {
      synchronized (cycle.lock()) {
        if (!mayWrite.getAsBoolean()) {
          return new Decided.NotPlaced(PodScheduling.FENCED);
        }
        snapshot = cycle.snapshot(s);
      }
      if (snapshot.order() == null) {
        return new Decided.NotPlaced(
            new Outcome.Unschedulable(snapshot.nodes().summary(), Map.of(), "NoFeasibleNode"));
      }
      spans = AttemptSpans.start(tracer, s, snapshot.nodes().feasible().size());
      found = spans.around(() -> search(snapshot, limit));
    } finally {
      permit.release();
    }
    if (found instanceof PodAllocator.Decision.Unexplained u) {
      found = u.explain();
    }
    spans.end();
    if (found instanceof PodAllocator.Decision.NotPlaced np) {
      return new Decided.NotPlaced(
          new Outcome.Unschedulable(np.message(snapshot.nodes()), np.perClaim(), np.reason()));
    }
    return redo(s, ((PodAllocator.Decision.Placed) found).node());
  }

  /** Off the lock: the allocator's search over the snapshot, stopping at {@code limit}. */
  private PodAllocator.Decision search(Snapshot snapshot, Duration limit) {
    long start = nanoClock.getAsLong();
    Deadline until = () -> SearchDeadline.passed(start, limit, nanoClock.getAsLong());
    CycleState s = snapshot.state();
    return allocator.allocateRanked(
        s.pod(), snapshot.order(), s.unallocated(), s.earlier(), snapshot.allocated(), view, until);
  }

  /** Under the lock again: the pod decided anew on {@code node}, the one its search found. */
  private Decided redo(CycleState s, String node) {
    Decided redone;
    synchronized (cycle.lock()) {
      if (!mayWrite.getAsBoolean()) {
        return new Decided.NotPlaced(PodScheduling.FENCED);
      }
      redone = cycle.decide(s, Filter.Within.node(node), REDO_ATTEMPT);
    }
    String why;
    if (redone instanceof Decided.Unexplained u) {
      why = u.explain().message();
    } else if (redone instanceof Decided.NotPlaced no
        && no.outcome() instanceof Outcome.Unschedulable u
        && !u.timedOut()) {
      why = u.message();
    } else {
      return redone; // placed, fenced, or out of time: as any attempt under the lock
    }
    return new Decided.NotPlaced(
        new Outcome.Retry(
            "node "
                + node
                + ", found by a search off the scheduling lock, no longer fits: "
                + why));
  }

  /** The outcome of a pod that waited its whole limit for another pod's search off the lock. */
  private static Outcome.Unschedulable busy(Duration limit) {
    return new Outcome.Unschedulable(
        "another pod's device search ran off the scheduling lock for longer than this attempt's"
            + " limit, "
            + limit.toMillis()
            + " ms; retrying",
        Map.of(),
        Outcome.Unschedulable.DEADLINE_EXCEEDED);
  }
}
