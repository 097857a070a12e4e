package io.kdra.claimcontroller.domain;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.time.Duration;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

class SearchDeadlineTest {

  static final SearchDeadline DEADLINE =
      new SearchDeadline(Duration.ofMillis(100), Duration.ofSeconds(1));

  /** Upstream's pod backoff: 1 s, doubling, at most 10 s. */
  static final Backoff UPSTREAM = new Backoff(Duration.ofSeconds(1), Duration.ofSeconds(10));

  @ParameterizedTest(name = "attempt {0}: {1} ms")
  @CsvSource({"0, 100", "1, 100", "2, 200", "3, 400", "4, 800", "5, 1000", "40, 1000"})
  void theLimitDoublesWithEachAttemptUpToTheMax(int attempt, long millis) {
    assertThat(DEADLINE.limit(attempt)).isEqualTo(Duration.ofMillis(millis));
  }

  @ParameterizedTest(name = "start {0}, now {1}: {2}")
  @CsvSource({
    "0, 99999999, false",
    "0, 100000000, true",
    "5000, 100004999, false",
    // nanoTime readings may overflow between start and now: only the difference counts
    "9223372036854775807, -9223372036754775810, false",
    "9223372036854775807, -9223372036754775809, true",
  })
  void passedComparesTheElapsedTimeWithTheLimit(long start, long now, boolean passed) {
    assertThat(SearchDeadline.passed(start, Duration.ofMillis(100), now)).isEqualTo(passed);
  }

  @ParameterizedTest(name = "attempt {0}: wait {1} ms")
  @CsvSource({
    // 9 x 100 ms limit < 1 s backoff: the backoff
    "1, 1000",
    // 9 x 200 ms = 1.8 s < 2 s
    "2, 2000",
    // 9 x 400 ms = 3.6 s < 4 s backoff
    "3, 4000",
    // 9 x 800 ms = 7.2 s < 8 s
    "4, 8000",
    // 9 x 1 s = 9 s < 10 s (upstream's max backoff)
    "5, 10000",
    "9, 10000",
  })
  void aTimedOutPodWaitsItsBackoffButAtLeastNineTimesItsLimit(int attempt, long millis) {
    assertThat(DEADLINE.retryDelay(UPSTREAM, attempt)).isEqualTo(Duration.ofMillis(millis));
  }

  @ParameterizedTest(name = "limit {0} ms, backoff {1} ms: wait {2} ms")
  @CsvSource({"1000, 1000, 9000", "500, 10000, 10000", "2000, 1000, 18000"})
  void theFairShareFloorWinsOverAShortBackoff(long limit, long backoff, long wait) {
    SearchDeadline d = new SearchDeadline(Duration.ofMillis(limit), Duration.ofMillis(limit));
    Backoff b = new Backoff(Duration.ofMillis(backoff), Duration.ofMillis(backoff));
    assertThat(d.retryDelay(b, 3)).isEqualTo(Duration.ofMillis(wait));
  }

  @ParameterizedTest(name = "{0} .. {1}")
  @CsvSource({"0, 1000", "-1, 1000", "1000, 999"})
  void refusesAnEmptyOrInvertedRange(long initial, long max) {
    assertThatThrownBy(() -> new SearchDeadline(Duration.ofMillis(initial), Duration.ofMillis(max)))
        .isInstanceOf(IllegalArgumentException.class);
  }
}
