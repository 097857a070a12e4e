package io.kdra.claimcontroller.domain;

import java.time.Duration;

/**
 * How long one scheduling attempt's device search may run, and how long a pod whose search ran out
 * of time waits before its next attempt. Pure; the caller reads the clock and counts attempts.
 *
 * <p>The search runs under the scheduling lock, so its limit is what every other pod may have to
 * wait. Upstream's DynamicResources filter allows 10 s per node; ours bounds the whole attempt (all
 * nodes), starting at {@code initial} and doubling with each attempt of the same pod up to {@code
 * max}, so that an honest but slow search (the slowest we measured: 127 ms at p99 for {@code
 * firstAvailable} over 10,000 nodes) gets through on a later attempt while a pathological one costs
 * the others little the first time. After a timed-out attempt the pod waits its backoff, but at
 * least {@link #OTHERS_SHARE_FACTOR} times its limit: it then holds the lock at most a tenth of the
 * time, and the other pods keep at least 90% of their throughput.
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
