package io.kdra.devicedriver.discovery;

import static org.assertj.core.api.Assertions.assertThat;

import java.time.Duration;
import java.time.Instant;
import java.util.stream.Stream;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

class DiscoveryLivenessTest {
  private static final Instant T = Instant.parse("2026-12-01T10:00:00Z");

  static Stream<Arguments> limits() {
    return Stream.of(
        // interval, command timeout, stuck after
        Arguments.of("10s", "10s", "60s"), // defaults: 3 x 20 s
        Arguments.of("1s", "1s", "60s"), // never below a minute
        Arguments.of("60s", "10s", "210s"),
        Arguments.of("5m", "30s", "990s"));
  }

  @ParameterizedTest(name = "interval {0}, timeout {1}: stuck after {2}")
  @MethodSource("limits")
  void aDiscoveryIsStuckAfterThreeOverduePasses(String interval, String timeout, String after) {
    assertThat(DiscoveryLiveness.forPasses(seconds(interval), seconds(timeout)).stuckAfter())
        .isEqualTo(seconds(after));
  }

  static Stream<Arguments> progress() {
    return Stream.of(
        // last progress this long ago, stuck?
        Arguments.of("0s", false),
        Arguments.of("59s", false),
        Arguments.of("60s", false),
        Arguments.of("61s", true),
        Arguments.of("3600s", true));
  }

  @ParameterizedTest(name = "last pass ended {0} ago: stuck {1}")
  @MethodSource("progress")
  void stuckOnlyWhenNoPassEndedForLongerThanTheLimit(String ago, boolean stuck) {
    DiscoveryLiveness rule = new DiscoveryLiveness(Duration.ofSeconds(60));
    assertThat(rule.stuck(T.minus(seconds(ago)), T).isPresent()).isEqualTo(stuck);
  }

  @org.junit.jupiter.api.Test
  void theReasonSaysHowLongAndWhatItMeans() {
    DiscoveryLiveness rule = new DiscoveryLiveness(Duration.ofSeconds(60));
    assertThat(rule.stuck(T.minusSeconds(95), T))
        .hasValueSatisfying(r -> assertThat(r).contains("95s").contains("60s"));
  }

  private static Duration seconds(String s) {
    if (s.endsWith("m")) {
      return Duration.ofMinutes(Long.parseLong(s.substring(0, s.length() - 1)));
    }
    return Duration.ofSeconds(Long.parseLong(s.substring(0, s.length() - 1)));
  }
}
