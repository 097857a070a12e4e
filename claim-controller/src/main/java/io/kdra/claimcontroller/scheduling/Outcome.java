package io.kdra.claimcontroller.scheduling;

import java.util.Map;

/** What one scheduling attempt for a pod achieved; the reconciler maps it to a requeue. */
public sealed interface Outcome {

  /** The pod is bound to {@code node}. */
  record Bound(String node) implements Outcome {}

  /** Nothing to do now; an informer event (claim created, template appeared) brings it back. */
  record Waiting(String reason) implements Outcome {}

  /**
   * No node fits: the pod gets {@code PodScheduled=False} and is retried with backoff.
   *
   * @param perClaim claim name to the allocator's explanation for it (may be empty)
   * @param reason short stable reason, for metrics
   */
  record Unschedulable(String message, Map<String, String> perClaim, String reason)
      implements Outcome {

    /** The reason of a pod whose device search ran out of time ({@link #timedOut}). */
    public static final String DEADLINE_EXCEEDED = "DeadlineExceeded";

    /**
     * The device search stopped at the attempt's deadline: nothing says the pod cannot fit, so it
     * is retried by backoff alone, not woken by every cluster change.
     */
    public boolean timedOut() {
      return DEADLINE_EXCEEDED.equals(reason);
    }
  }

  /** The decision went stale while writing (a claim changed): try again soon. */
  record Retry(String reason) implements Outcome {}
}
