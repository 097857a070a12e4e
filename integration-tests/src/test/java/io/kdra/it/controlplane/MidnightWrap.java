package io.kdra.it.controlplane;

import java.time.Duration;
import java.time.LocalTime;

/**
 * kube-api-test (7.5.2) measures its start-up timeout on {@link LocalTime}: the deadline {@code
 * start + timeout} wraps at midnight, and a poll before midnight then sees itself past a deadline
 * of "00:01", so a start begun within the timeout of midnight fails at its first not-yet-ready poll
 * ("Kube API Server did not start properly"). A start that could reach midnight waits for it
 * instead: at most twice the timeout, once a day.
 */
final class MidnightWrap {

  private MidnightWrap() {}

  /**
   * How long to wait before a start at {@code now} whose phases each may poll for {@code timeout}:
   * zero unless the start (its phases begin within one timeout of it) could poll with a wrapped
   * deadline; then until just past midnight.
   */
  static Duration waitBefore(LocalTime now, Duration timeout) {
    Duration reach = timeout.multipliedBy(2);
    Duration untilMidnight = Duration.between(now, LocalTime.MAX).plusNanos(1);
    if (untilMidnight.compareTo(reach) > 0) {
      return Duration.ZERO;
    }
    return untilMidnight.plusSeconds(1);
  }

  /** Waits out {@link #waitBefore} for a start now, saying why. */
  static void awaitSafeStart(Duration timeout) {
    Duration wait = waitBefore(LocalTime.now(), timeout);
    if (wait.isZero()) {
      return;
    }
    System.out.printf(
        "[control-plane] waiting %d s for midnight to pass: kube-api-test's start-up timeout"
            + " wraps at midnight%n",
        wait.toSeconds());
    try {
      Thread.sleep(wait.toMillis());
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new IllegalStateException("interrupted while waiting for midnight to pass", e);
    }
  }
}
