package io.kdra.devicedriver.discovery;

import java.time.Duration;
import java.time.Instant;
import java.util.Objects;
import java.util.Optional;

/**
 * The liveness rule of discovery: it is stuck when no pass has ended, successfully or not, for
 * longer than {@code stuckAfter}. Pure.
 *
 * <p>Progress, not success: a GPU that is broken makes discovery fail promptly, pass after pass;
 * that is the devices' health (they are tainted and shown Unknown), and restarting the driver would
 * not mend it. What a restart does mend is a discovery thread that hangs (a command that never
 * returns, a lock never released) or a periodic task that died: then no pass ends any more.
 *
 * @param stuckAfter how long without an ended pass counts as stuck
 */
public record DiscoveryLiveness(Duration stuckAfter) {

  /** Below this, a loaded node or a long GC pause could look like a hang. */
  static final Duration MINIMUM = Duration.ofMinutes(1);

  public DiscoveryLiveness {
    Objects.requireNonNull(stuckAfter, "stuckAfter");
  }

  /**
   * The limit for passes every {@code interval}, each bounded by {@code commandTimeout}: a pass
   * starts {@code interval} after the previous one ended and ends within about the timeout, so
   * three such periods without an ended pass cannot be a slow pass, only a stuck one. At least
   * {@link #MINIMUM}.
   */
  public static DiscoveryLiveness forPasses(Duration interval, Duration commandTimeout) {
    Duration three = interval.plus(commandTimeout).multipliedBy(3);
    return new DiscoveryLiveness(three.compareTo(MINIMUM) < 0 ? MINIMUM : three);
  }

  /**
   * Why discovery counts as stuck at {@code now}; empty while it is not.
   *
   * @param lastProgress when the last pass ended (or discovery started, before any ended)
   */
  public Optional<String> stuck(Instant lastProgress, Instant now) {
    Duration since = Duration.between(lastProgress, now);
    if (since.compareTo(stuckAfter) <= 0) {
      return Optional.empty();
    }
    return Optional.of(
        "no discovery pass has ended for "
            + since.toSeconds()
            + "s (limit "
            + stuckAfter.toSeconds()
            + "s): the discovery thread hangs or has stopped");
  }
}
