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

  @Test
  void warnsOnceWhenItStartsThenEveryReminderAndAgainAfterItEnds() {
    Outage outage = new Outage(Duration.ofMinutes(5));
    List<Report> reports = new ArrayList<>();
    for (long t : new long[] {0, 2 * S, 4 * S, 300 * S, 302 * S, 599 * S, 600 * S}) {
      reports.add(outage.failed(t));
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
    assertThat(outage.failed(700 * S)).as("a new outage").isEqualTo(Report.STARTED);
    assertThat(outage.lasted(702 * S)).isEqualTo(Duration.ofSeconds(2));
  }
}
