package io.kdra.core.cel.golang;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.junit.jupiter.params.provider.Arguments.arguments;

import java.time.Duration;
import java.time.Instant;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * Durations and timestamps as cel-go has them: each expected value is what a Go program printed for
 * the same text (time.ParseDuration; time.Parse(time.RFC3339) formatted as UTC RFC3339Nano; null:
 * an error).
 */
class GoTimeTest {

  static Stream<Arguments> goDurations() {
    return Stream.of(
        arguments("1h", 3600000000000L),
        arguments("1h30m", 5400000000000L),
        arguments("-1.5s", -1500000000L),
        arguments(".5m", 30000000000L),
        arguments("1.s", 1000000000L),
        arguments(".s", null),
        arguments("", null),
        arguments("0", 0L),
        arguments("+0", 0L),
        arguments("-0", 0L),
        arguments("1", null),
        arguments("1x", null),
        arguments("1H", null),
        arguments("1h ", null),
        arguments("1μs", 1000L),
        arguments("1µs", 1000L),
        arguments("1us", 1000L),
        arguments("1h-1m", null),
        arguments("2562047h", 9223369200000000000L),
        arguments("2562048h", null),
        arguments("9223372036854775807ns", 9223372036854775807L),
        arguments("9223372036854775808ns", null),
        arguments("-9223372036854775808ns", -9223372036854775808L),
        arguments("2562047h47m16.854775807s", 9223372036854775807L),
        arguments("-2562047h47m16.854775808s", -9223372036854775808L),
        arguments("1.0000000000000000001h", 3600000000000L),
        arguments("0.1ns", 0L),
        arguments("1.9ns", 1L),
        arguments("00000000000000000001s", 1000000000L));
  }

  @ParameterizedTest
  @MethodSource("goDurations")
  void parsesDurationsAsGo(String text, Long nanos) {
    assertThat(GoTime.parseDuration(text).map(Duration::toNanos).orElse(null))
        .as("%s", text)
        .isEqualTo(nanos);
  }

  static Stream<Arguments> goTimestamps() {
    return Stream.of(
        arguments("2024-01-01T10:00:00Z", "2024-01-01T10:00:00Z"),
        arguments("2024-01-01t10:00:00z", null),
        arguments("2024-01-01T10:00:00z", null),
        arguments("2024-01-01T1:00:00Z", "2024-01-01T01:00:00Z"),
        arguments("2024-01-01T10:0:00Z", null),
        arguments("2024-01-01T10:00:00,5Z", "2024-01-01T10:00:00.5Z"),
        arguments("2024-01-01T10:00:00.5Z", "2024-01-01T10:00:00.5Z"),
        arguments("2024-01-01T10:00:00.1234567891Z", "2024-01-01T10:00:00.123456789Z"),
        arguments("2024-01-01T10:00:00.Z", null),
        arguments("2024-01-01T10:00:00+05:30", "2024-01-01T04:30:00Z"),
        arguments("2024-01-01T10:00:00-07:00", "2024-01-01T17:00:00Z"),
        arguments("2024-01-01T10:00:00+24:00", "2023-12-31T10:00:00Z"),
        arguments("2024-01-01T10:00:00+23:60", "2023-12-31T10:00:00Z"),
        arguments("2024-01-01T10:00:00+25:00", null),
        arguments("2024-01-01T10:00:00+0530", null),
        arguments("2024-01-01T10:00:00", null),
        arguments("2024-01-01", null),
        arguments("2023-02-29T00:00:00Z", null),
        arguments("2024-02-29T00:00:00Z", "2024-02-29T00:00:00Z"),
        arguments("2024-13-01T00:00:00Z", null),
        arguments("2024-00-01T00:00:00Z", null),
        arguments("2024-01-00T00:00:00Z", null),
        arguments("2024-01-01T24:00:00Z", null),
        arguments("2024-01-01T10:00:60Z", null),
        // parsed by Go, outside cel-go's years 1 to 9999
        arguments("0000-01-01T00:00:00Z", null),
        arguments("9999-12-31T23:59:59.999999999Z", "9999-12-31T23:59:59.999999999Z"),
        arguments("2024-1-01T00:00:00Z", null),
        arguments("+024-01-01T00:00:00Z", null),
        arguments("2024-01-01T10:00:00Z ", null));
  }

  @ParameterizedTest
  @MethodSource("goTimestamps")
  void parsesTimestampsAsGo(String text, String utc) {
    assertThat(GoTime.parseRfc3339(text).map(GoTime::formatRfc3339Nano).orElse(null))
        .as("%s", text)
        .isEqualTo(utc);
  }

  @Test
  void arithmeticFailsWhereCelGosCheckedArithmeticDoes() {
    Duration max = Duration.ofNanos(Long.MAX_VALUE);
    Duration min = Duration.ofNanos(Long.MIN_VALUE);
    assertThatThrownBy(() -> GoTime.add(max, Duration.ofNanos(1)))
        .isInstanceOf(GoTime.OutOfRange.class)
        .hasMessage("integer overflow");
    assertThatThrownBy(() -> GoTime.subtract(min, Duration.ofNanos(1)))
        .hasMessage("integer overflow");
    Instant last = Instant.parse("9999-12-31T23:59:59Z");
    assertThat(GoTime.add(last, Duration.ofNanos(999_999_999)))
        .isEqualTo(Instant.parse("9999-12-31T23:59:59.999999999Z"));
    assertThatThrownBy(() -> GoTime.add(last, Duration.ofSeconds(1)))
        .hasMessage("timestamp overflow");
    // x - y is x + (-y): the smallest duration has no negation
    assertThatThrownBy(() -> GoTime.subtract(Instant.EPOCH, min)).hasMessage("integer overflow");
    // the span of all timestamps is no int64 of nanoseconds
    assertThatThrownBy(() -> GoTime.subtract(last, Instant.parse("0001-01-01T00:00:00Z")))
        .hasMessage("integer overflow");
    assertThat(GoTime.subtract(Instant.parse("1970-01-01T00:00:01Z"), Instant.ofEpochSecond(0, 1)))
        .isEqualTo(Duration.ofNanos(999_999_999));
    assertThat(GoTime.add(Instant.ofEpochSecond(0, 5), Duration.ofNanos(-10)))
        .isEqualTo(Instant.ofEpochSecond(-1, 999_999_995));
    assertThatThrownBy(() -> GoTime.fromUnixSeconds(GoTime.MAX_UNIX_SECONDS + 1))
        .hasMessage("timestamp overflow");
    assertThat(GoTime.fromUnixSeconds(GoTime.MIN_UNIX_SECONDS))
        .isEqualTo(Instant.parse("0001-01-01T00:00:00Z"));
  }

  @Test
  void readsZonesAsGo() {
    Instant t = Instant.parse("2024-01-01T10:00:00Z");
    assertThat(GoTime.inZone(t, "").getHour()).isEqualTo(10);
    assertThat(GoTime.inZone(t, "UTC").getHour()).isEqualTo(10);
    assertThat(GoTime.inZone(t, "02:00").getHour()).isEqualTo(12);
    assertThat(GoTime.inZone(t, "-00:30").getHour()).isEqualTo(9);
    assertThat(GoTime.inZone(t, "+99:00").getHour()).isEqualTo(13); // 4 days and 3 hours on
    assertThat(GoTime.inZone(t, "Asia/Kolkata").getMinute()).isEqualTo(30);
    assertThatThrownBy(() -> GoTime.inZone(t, "Nowhere/City"))
        .hasMessage("unknown time zone Nowhere/City");
    assertThatThrownBy(() -> GoTime.inZone(t, "../UTC")).hasMessage("time: invalid location name");
    assertThatThrownBy(() -> GoTime.inZone(t, "02:00:00"))
        .hasMessage("strconv.Atoi: parsing \"00:00\": invalid syntax");
  }
}
