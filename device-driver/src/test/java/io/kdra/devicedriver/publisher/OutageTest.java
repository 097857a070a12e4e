package io.kdra.devicedriver.publisher;

import static org.assertj.core.api.Assertions.assertThat;

import io.kdra.devicedriver.publisher.Outage.Report;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

/** How loud each failed attempt of one outage is, for a timeline of attempts. */
class OutageTest {

  private static final long S = 1000;
  private static final String CLOSED = "UNAVAILABLE: Network closed for unknown reason";
  private static final String UNTRUSTED =
      "UNAVAILABLE: io exception (CertificateException: the publisher's certificate is not"
          + " trusted ...)";

  @Test
  void warnsOnceWhenItStartsThenEveryReminderAndAgainAfterItEnds() {
    Outage outage = new Outage(Duration.ofMinutes(5));
    List<Report> reports = new ArrayList<>();
    for (long t : new long[] {0, 2 * S, 4 * S, 300 * S, 302 * S, 599 * S, 600 * S}) {
      reports.add(outage.failed(t, CLOSED));
    }
    assertThat(reports)
        .containsExactly(
            Report.STARTED,
            Report.QUIET,
            Report.QUIET,
            Report.STILL_DOWN,
            Report.QUIET,
            Report.QUIET,
            Report.STILL_DOWN);
    assertThat(outage.failures()).isEqualTo(7);
    assertThat(outage.lasted(601 * S + 999)).isEqualTo(Duration.ofSeconds(601));

    outage.ended();
    assertThat(outage.failures()).isZero();
    assertThat(outage.failed(700 * S, CLOSED)).as("a new outage").isEqualTo(Report.STARTED);
    assertThat(outage.lasted(702 * S)).isEqualTo(Duration.ofSeconds(2));
  }

  @Test
  void eachReasonIsSaidTheFirstTimeItComesUpInAnOutage() {
    Outage outage = new Outage(Duration.ofMinutes(5));
    List<Report> reports = new ArrayList<>();
    String[] reasons = {CLOSED, UNTRUSTED, UNTRUSTED, CLOSED, UNTRUSTED};
    for (int i = 0; i < reasons.length; i++) {
      reports.add(outage.failed(i * S, reasons[i]));
    }
    assertThat(reports)
        .containsExactly(
            Report.STARTED, Report.NEW_REASON, Report.QUIET, Report.QUIET, Report.QUIET);

    outage.ended();
    assertThat(outage.failed(10 * S, UNTRUSTED)).isEqualTo(Report.STARTED);
    assertThat(outage.failed(11 * S, CLOSED))
        .as("said in the last outage only")
        .isEqualTo(Report.NEW_REASON);
  }

  @Test
  void reasonsThatNeverRepeatStopBeingSaidAfterAFew() {
    Outage outage = new Outage(Duration.ofMinutes(5));
    long said = 0;
    for (int i = 0; i < 100; i++) {
      if (outage.failed(i, "attempt " + i) != Report.QUIET) {
        said++;
      }
    }
    assertThat(said).isEqualTo(8);
  }
}
