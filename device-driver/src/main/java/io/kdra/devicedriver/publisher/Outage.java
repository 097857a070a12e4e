package io.kdra.devicedriver.publisher;

import java.time.Duration;

/**
 * How loud one outage of the inventory stream is: a warning when it starts, a reminder every {@code
 * reminder} while it lasts, quiet in between; one line when it ends. Pure, on the reporter's
 * thread.
 */
final class Outage {

  /** What a failed attempt is worth saying. */
  enum Report {
    STARTED,
    STILL_DOWN,
    QUIET
  }

  private final Duration reminder;
  private int failures;
  private long sinceMillis;
  private long lastWarnMillis;

  Outage(Duration reminder) {
    this.reminder = reminder;
  }

  /** Counts a failed attempt at {@code nowMillis}. */
  Report failed(long nowMillis) {
    if (++failures == 1) {
      sinceMillis = nowMillis;
      lastWarnMillis = nowMillis;
      return Report.STARTED;
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
