package io.kdra.it.controlplane;

import static org.assertj.core.api.Assertions.assertThat;

import java.time.Duration;
import java.time.LocalTime;
import java.util.stream.Stream;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

class MidnightWrapTest {

  static Stream<Arguments> starts() {
    Duration timeout = Duration.ofSeconds(120);
    return Stream.of(
        Arguments.of("noon", LocalTime.NOON, timeout, Duration.ZERO),
        Arguments.of("just after midnight", LocalTime.of(0, 0, 1), timeout, Duration.ZERO),
        Arguments.of("five minutes before", LocalTime.of(23, 55), timeout, Duration.ZERO),
        Arguments.of(
            "four minutes before: its last phase could poll with a wrapped deadline",
            LocalTime.of(23, 56),
            timeout,
            Duration.ofSeconds(241)),
        Arguments.of("one minute before", LocalTime.of(23, 59), timeout, Duration.ofSeconds(61)),
        Arguments.of("a second before", LocalTime.of(23, 59, 59), timeout, Duration.ofSeconds(2)),
        Arguments.of(
            "a short timeout needs a short wait only near midnight",
            LocalTime.of(23, 59, 30),
            Duration.ofSeconds(10),
            Duration.ZERO));
  }

  @ParameterizedTest(name = "{0}")
  @MethodSource("starts")
  void waitsOnlyWhenTheDeadlineCouldWrap(
      String name, LocalTime now, Duration timeout, Duration expected) {
    assertThat(MidnightWrap.waitBefore(now, timeout)).isEqualTo(expected);
  }

  @ParameterizedTest(name = "{0}")
  @MethodSource("starts")
  void afterTheWaitTheDeadlinesOfTheStartDoNotWrap(
      String name, LocalTime now, Duration timeout, Duration ignored) {
    LocalTime start = now.plus(MidnightWrap.waitBefore(now, timeout));
    // each phase begins within one timeout of the start and polls for one more
    LocalTime lastDeadline = start.plus(timeout.multipliedBy(2));
    assertThat(lastDeadline).as("the deadline wrapped past midnight").isAfter(start);
  }
}
