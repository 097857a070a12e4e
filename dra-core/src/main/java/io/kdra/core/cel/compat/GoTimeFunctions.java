package io.kdra.core.cel.compat;

import dev.cel.runtime.CelEvaluationException;
import dev.cel.runtime.CelFunctionBinding;
import io.kdra.core.cel.golang.GoFloat;
import io.kdra.core.cel.golang.GoTime;
import java.time.Duration;
import java.time.Instant;
import java.time.LocalDateTime;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.function.Supplier;
import java.util.function.ToLongFunction;

/**
 * The runtime of the standard duration and timestamp overloads as cel-go's (see {@link GoTime}), in
 * place of cel-java's of the same names. The literal validator evaluates {@code duration("...")}
 * and {@code timestamp("...")} with these too, so a literal is refused at compile time where
 * upstream refuses it.
 */
public final class GoTimeFunctions {

  /** cel-java's standard overloads these replace, by their enum names. */
  public static final Set<String> REPLACED =
      Set.of(
          "STRING_TO_DURATION",
          "STRING_TO_TIMESTAMP",
          "INT64_TO_TIMESTAMP",
          "DURATION_TO_STRING",
          "TIMESTAMP_TO_STRING",
          "ADD_DURATION_DURATION",
          "ADD_TIMESTAMP_DURATION",
          "ADD_DURATION_TIMESTAMP",
          "SUBTRACT_DURATION_DURATION",
          "SUBTRACT_TIMESTAMP_DURATION",
          "SUBTRACT_TIMESTAMP_TIMESTAMP",
          // cel-go's duration getters give the whole duration in the unit, cel-java's a part
          "DURATION_TO_HOURS",
          "DURATION_TO_MINUTES",
          "DURATION_TO_SECONDS",
          "DURATION_TO_MILLISECONDS",
          // cel-go reads zones with Go's rules ("" is UTC, "02:00" an offset)
          "TIMESTAMP_TO_YEAR_WITH_TZ",
          "TIMESTAMP_TO_MONTH_WITH_TZ",
          "TIMESTAMP_TO_DAY_OF_YEAR_WITH_TZ",
          "TIMESTAMP_TO_DAY_OF_MONTH_WITH_TZ",
          "TIMESTAMP_TO_DAY_OF_MONTH_1_BASED_WITH_TZ",
          "TIMESTAMP_TO_DAY_OF_WEEK_WITH_TZ",
          "TIMESTAMP_TO_HOURS_WITH_TZ",
          "TIMESTAMP_TO_MINUTES_WITH_TZ",
          "TIMESTAMP_TO_SECONDS_WITH_TZ",
          "TIMESTAMP_TO_MILLISECONDS_WITH_TZ");

  /** Each getter with a zone: its overload and the field it reads, as cel-go counts it. */
  private static final Map<String, ToLongFunction<LocalDateTime>> ZONED_GETTERS =
      Map.of(
          "timestamp_to_year_with_tz",
          LocalDateTime::getYear,
          "timestamp_to_month_with_tz",
          t -> t.getMonthValue() - 1,
          "timestamp_to_day_of_year_with_tz",
          t -> t.getDayOfYear() - 1,
          "timestamp_to_day_of_month_with_tz",
          t -> t.getDayOfMonth() - 1,
          "timestamp_to_day_of_month_1_based_with_tz",
          LocalDateTime::getDayOfMonth,
          "timestamp_to_day_of_week_with_tz",
          t -> t.getDayOfWeek().getValue() % 7, // Sunday 0
          "timestamp_to_hours_with_tz",
          LocalDateTime::getHour,
          "timestamp_to_minutes_with_tz",
          LocalDateTime::getMinute,
          "timestamp_to_seconds_with_tz",
          LocalDateTime::getSecond,
          "timestamp_to_milliseconds_with_tz",
          t -> t.getNano() / 1_000_000);

  /** Go's Duration.Hours() and the like, truncated to an int as cel-go does. */
  private static final Map<String, Long> DURATION_UNITS =
      Map.of(
          "duration_to_hours", 3_600_000_000_000L,
          "duration_to_minutes", 60_000_000_000L,
          "duration_to_seconds", 1_000_000_000L,
          "duration_to_milliseconds", 1_000_000L);

  private GoTimeFunctions() {}

  public static List<CelFunctionBinding> bindings() {
    List<CelFunctionBinding> bindings = new ArrayList<>(conversionsAndArithmetic());
    ZONED_GETTERS.forEach(
        (overload, field) ->
            bindings.add(
                CelFunctionBinding.from(
                    overload,
                    Instant.class,
                    String.class,
                    (t, zone) -> {
                      try {
                        return field.applyAsLong(GoTime.inZone(t, zone));
                      } catch (IllegalArgumentException | java.time.DateTimeException e) {
                        throw new CelEvaluationException(e.getMessage());
                      }
                    })));
    DURATION_UNITS.forEach(
        (overload, unit) ->
            bindings.add(
                CelFunctionBinding.from(overload, Duration.class, d -> d.toNanos() / unit)));
    return bindings;
  }

  private static List<CelFunctionBinding> conversionsAndArithmetic() {
    return List.of(
        CelFunctionBinding.from(
            "string_to_duration",
            String.class,
            s ->
                GoTime.parseDuration(s)
                    .orElseThrow(
                        () ->
                            new CelEvaluationException(
                                "type conversion error from 'string' to "
                                    + "'google.protobuf.Duration'"))),
        CelFunctionBinding.from(
            "string_to_timestamp",
            String.class,
            s ->
                GoTime.parseRfc3339(s)
                    .orElseThrow(
                        () ->
                            new CelEvaluationException(
                                "type conversion error from 'string' to "
                                    + "'google.protobuf.Timestamp'"))),
        CelFunctionBinding.from(
            "int64_to_timestamp", Long.class, n -> checked(() -> GoTime.fromUnixSeconds(n))),
        CelFunctionBinding.from("duration_to_string", Duration.class, GoFloat::duration),
        CelFunctionBinding.from("timestamp_to_string", Instant.class, GoTime::formatRfc3339Nano),
        CelFunctionBinding.from(
            "add_duration_duration",
            Duration.class,
            Duration.class,
            (a, b) -> checked(() -> GoTime.add(a, b))),
        CelFunctionBinding.from(
            "add_timestamp_duration",
            Instant.class,
            Duration.class,
            (t, d) -> checked(() -> GoTime.add(t, d))),
        CelFunctionBinding.from(
            "add_duration_timestamp",
            Duration.class,
            Instant.class,
            (d, t) -> checked(() -> GoTime.add(t, d))),
        CelFunctionBinding.from(
            "subtract_duration_duration",
            Duration.class,
            Duration.class,
            (a, b) -> checked(() -> GoTime.subtract(a, b))),
        CelFunctionBinding.from(
            "subtract_timestamp_duration",
            Instant.class,
            Duration.class,
            (t, d) -> checked(() -> GoTime.subtract(t, d))),
        CelFunctionBinding.from(
            "subtract_timestamp_timestamp",
            Instant.class,
            Instant.class,
            (a, b) -> checked(() -> GoTime.subtract(a, b))));
  }

  private static <T> T checked(Supplier<T> op) throws CelEvaluationException {
    try {
      return op.get();
    } catch (GoTime.OutOfRange e) {
      throw new CelEvaluationException(e.getMessage());
    }
  }
}
