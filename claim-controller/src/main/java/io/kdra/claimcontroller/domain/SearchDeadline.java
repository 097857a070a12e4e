package io.kdra.claimcontroller.domain;

import java.time.Duration;

/**
 * How long one scheduling attempt's device search may run, and how long a pod whose search ran out
 * of time waits before its next attempt. Pure; the caller reads the clock and counts attempts.
 *
 * <p>A pod's first search runs under the scheduling lock, so its limit is what every other pod may
 * have to wait. Upstream's DynamicResources filter allows 10 s per node; ours bounds the whole
 * attempt (all nodes), starting at {@code initial} and doubling with each attempt of the same pod
 * up to {@code max}. The service's {@code initial}, 250 ms, is about twice the slowest honest
 * search we measured (127 ms at p99 for {@code firstAvailable} over 10,000 nodes): a pathological
 * claim costs the others that much once, an honest search slowed for a moment only its backoff.
 * After a timed-out attempt the pod waits its backoff, but at least {@link #OTHERS_SHARE_FACTOR}
 * times its limit, and its later searches run off the lock ({@link SearchSite}); the wait still
 * keeps its share of the CPU to a tenth.
 *
 * @param initial the first attempt's limit
 * @param max the longest limit
 */
public record SearchDeadline(Duration initial, Duration max) {

  /** A timed-out pod waits at least this many times its limit: the others keep 9 parts in 10. */
  public static final int OTHERS_SHARE_FACTOR = 9;

  public SearchDeadline {
    if (initial.isNegative() || initial.isZero() || max.compareTo(initial) < 0) {
      throw new IllegalArgumentException("need 0 < initial <= max, got " + initial + ", " + max);
    }
  }

  /** The limit of attempt number {@code attempt} of one pod (1 for its first). */
  public Duration limit(int attempt) {
    return new Backoff(initial, max).delay(attempt);
  }

  /**
   * Whether an attempt that started at {@code startNanos} with {@code limit} has run out at {@code
   * nowNanos} ({@link System#nanoTime} readings: only their difference counts, overflow included).
   */
  public static boolean passed(long startNanos, Duration limit, long nowNanos) {
    return nowNanos - startNanos >= limit.toNanos();
  }

  /** The delay before the next attempt of a pod whose attempt number {@code attempt} timed out. */
  public Duration retryDelay(Backoff backoff, int attempt) {
    Duration fairShare = limit(attempt).multipliedBy(OTHERS_SHARE_FACTOR);
    Duration backedOff = backoff.delay(attempt);
    return backedOff.compareTo(fairShare) >= 0 ? backedOff : fairShare;
  }
}
