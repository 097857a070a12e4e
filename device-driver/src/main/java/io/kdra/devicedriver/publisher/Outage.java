package io.kdra.devicedriver.publisher;

import java.time.Duration;
import java.util.HashSet;
import java.util.Set;

/**
 * How loud one outage of the inventory stream is: a warning when it starts, a warning the first
 * time each other reason comes up (an outage that began with a closed connection and goes on with
 * refused handshakes, the usual course of a CA rotated on one side only, must say the second reason
 * too), a reminder every {@code reminder} while it lasts, quiet in between; one line when it ends.
 * Pure, on the reporter's thread.
 */
final class Outage {

  /** What a failed attempt is worth saying. */
  enum Report {
    STARTED,
    /** A reason this outage has not given before. */
    NEW_REASON,
    STILL_DOWN,
    QUIET
  }

  private static final int MAX_REASONS = 8;

  private final Duration reminder;
  private int failures;
  private long sinceMillis;
  private long lastWarnMillis;
  private final Set<String> reasons = new HashSet<>();

  Outage(Duration reminder) {
    this.reminder = reminder;
  }

  /** Counts a failed attempt at {@code nowMillis}, failed for {@code reason}. */
  Report failed(long nowMillis, String reason) {
    if (++failures == 1) {
      sinceMillis = nowMillis;
      lastWarnMillis = nowMillis;
      reasons.clear();
      reasons.add(reason);
      return Report.STARTED;
    }
    // bounded: reasons that vary without end (a counter in the text) stop being new
    if (reasons.size() < MAX_REASONS && reasons.add(reason)) {
      lastWarnMillis = nowMillis;
      return Report.NEW_REASON;
    }
    if (nowMillis - lastWarnMillis >= reminder.toMillis()) {
      lastWarnMillis = nowMillis;
      return Report.STILL_DOWN;
    }
    return Report.QUIET;
  }

  /** Failed attempts since the last success. */
  int failures() {
    return failures;
  }

  /** How long the outage has lasted, in whole seconds. */
  Duration lasted(long nowMillis) {
    return Duration.ofSeconds((nowMillis - sinceMillis) / 1000);
  }

  /** The stream works again. */
  void ended() {
    failures = 0;
  }
}
