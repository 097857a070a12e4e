package io.kdra.core.cel.golang;

import java.time.Duration;
import java.time.Instant;
import java.time.LocalDate;
import java.time.LocalDateTime;
import java.time.ZoneId;
import java.time.ZoneOffset;
import java.util.Map;
import java.util.Optional;
import java.util.Set;

/**
 * Durations and timestamps as cel-go has them: a duration is Go's {@code time.Duration} (int64
 * nanoseconds), a timestamp lies in years 1 to 9999, text becomes one through Go's {@code
 * time.ParseDuration} and {@code time.Parse(time.RFC3339, s)}, and arithmetic fails where cel-go's
 * checked arithmetic does ({@code common/types/overflow.go}). cel-java's own take protobuf's wider
 * ranges and a stricter duration grammar, so the API server and we accepted different selectors
 * ({@code duration(".5m")} upstream only, {@code duration("2562048h")} and {@code
 * timestamp("2024-01-01t10:00:00z")} here only).
 *
 * <p>One difference stays: a Go timestamp keeps the offset it was parsed with, which {@code
 * string()} and {@code format} print (its getters read UTC); cel-java's timestamps are instants,
 * printed in UTC.
 */
public final class GoTime {

  /** Unix seconds of 0001-01-01T00:00:00Z, cel-go's earliest timestamp. */
  static final long MIN_UNIX_SECONDS = -62135596800L;

  /** Unix seconds of 9999-12-31T23:59:59Z, cel-go's latest (whole) second. */
  static final long MAX_UNIX_SECONDS = 253402300799L;

  private static final long NANOS_PER_SECOND = 1_000_000_000L;
  private static final long ONE_SHL_63 = Long.MIN_VALUE; // 1<<63 as an unsigned value

  private static final Map<String, Long> UNITS =
      Map.of(
          "ns", 1L,
          "us", 1_000L,
          "\u00b5s", 1_000L, // micro sign
          "\u03bcs", 1_000L, // Greek small letter mu
          "ms", 1_000_000L,
          "s", NANOS_PER_SECOND,
          "m", 60 * NANOS_PER_SECOND,
          "h", 3600 * NANOS_PER_SECOND);

  /** An arithmetic result outside cel-go's ranges, with cel-go's message. */
  public static final class OutOfRange extends ArithmeticException {
    public OutOfRange(String message) {
      super(message);
    }
  }

  private GoTime() {}

  /** Go's {@code time.ParseDuration}; empty where Go returns an error. */
  public static Optional<Duration> parseDuration(String text) {
    String s = text;
    boolean negative = false;
    if (!s.isEmpty() && (s.charAt(0) == '-' || s.charAt(0) == '+')) {
      negative = s.charAt(0) == '-';
      s = s.substring(1);
    }
    if (s.equals("0")) {
      return Optional.of(Duration.ZERO);
    }
    if (s.isEmpty()) {
      return Optional.empty();
    }
    long total = 0; // unsigned, at most 1<<63
    int i = 0;
    while (i < s.length()) {
      char c = s.charAt(i);
      if (!(c == '.' || isDigit(c))) {
        return Optional.empty();
      }
      // the integer part, [0-9]*
      long whole = 0;
      int start = i;
      for (; i < s.length() && isDigit(s.charAt(i)); i++) {
        if (Long.compareUnsigned(whole, Long.divideUnsigned(ONE_SHL_63, 10)) > 0) {
          return Optional.empty();
        }
        whole = whole * 10 + (s.charAt(i) - '0');
        if (Long.compareUnsigned(whole, ONE_SHL_63) > 0) {
          return Optional.empty();
        }
      }
      boolean digitsBefore = i > start;
      // the fraction, (\.[0-9]*)?: digits past what fits are dropped, as Go does
      long fraction = 0;
      double scale = 1;
      boolean digitsAfter = false;
      if (i < s.length() && s.charAt(i) == '.') {
        i++;
        int fractionStart = i;
        boolean overflow = false;
        for (; i < s.length() && isDigit(s.charAt(i)); i++) {
          if (overflow) {
            continue;
          }
          if (Long.compareUnsigned(fraction, Long.MAX_VALUE / 10) > 0) {
            overflow = true;
            continue;
          }
          long next = fraction * 10 + (s.charAt(i) - '0');
          if (Long.compareUnsigned(next, ONE_SHL_63) > 0) {
            overflow = true;
            continue;
          }
          fraction = next;
          scale *= 10;
        }
        digitsAfter = i > fractionStart;
      }
      if (!digitsBefore && !digitsAfter) {
        return Optional.empty();
      }
      int unitStart = i;
      for (; i < s.length(); i++) {
        char u = s.charAt(i);
        if (u == '.' || isDigit(u)) {
          break;
        }
      }
      Long unit = UNITS.get(s.substring(unitStart, i));
      if (unit == null) {
        return Optional.empty();
      }
      if (Long.compareUnsigned(whole, Long.divideUnsigned(ONE_SHL_63, unit)) > 0) {
        return Optional.empty();
      }
      long value = whole * unit;
      if (fraction > 0) {
        value += (long) ((double) fraction * ((double) unit / scale));
        if (Long.compareUnsigned(value, ONE_SHL_63) > 0) {
          return Optional.empty();
        }
      }
      total += value;
      if (Long.compareUnsigned(total, ONE_SHL_63) > 0) {
        return Optional.empty();
      }
    }
    if (negative) {
      return Optional.of(Duration.ofNanos(-total)); // -(1<<63) is Long.MIN_VALUE itself
    }
    if (total == ONE_SHL_63) {
      return Optional.empty();
    }
    return Optional.of(Duration.ofNanos(total));
  }

  /**
   * Go's {@code time.Parse(time.RFC3339, s)}, the instant only; empty where Go returns an error or
   * the instant lies outside years 1 to 9999 (cel-go's "timestamp overflow", see {@link #inRange}).
   * Go's general parser, which {@code time.Parse} falls back to, is more lenient than RFC 3339: a
   * one-digit hour, a comma before the fraction, offsets up to 24:60.
   */
  public static Optional<Instant> parseRfc3339(String text) {
    Parser p = new Parser(text);
    if (p.rest() < 4 || !isDigit(p.peek())) {
      return Optional.empty();
    }
    Integer year = p.digits(4);
    if (year == null || !p.skip('-')) {
      return Optional.empty();
    }
    Integer month = p.number(true);
    if (month == null || month < 1 || month > 12 || !p.skip('-')) {
      return Optional.empty();
    }
    Integer day = p.number(true);
    if (day == null || !p.skip('T')) {
      return Optional.empty();
    }
    Integer hour = p.number(false);
    if (hour == null || hour > 23 || !p.skip(':')) {
      return Optional.empty();
    }
    Integer minute = p.number(true);
    if (minute == null || minute > 59 || !p.skip(':')) {
      return Optional.empty();
    }
    Integer second = p.number(true);
    if (second == null || second > 59) {
      return Optional.empty();
    }
    long nanos = 0;
    if (p.rest() >= 2 && (p.peek() == '.' || p.peek() == ',') && isDigit(p.peekAt(1))) {
      int n = 2;
      while (n < p.rest() && isDigit(p.peekAt(n))) {
        n++;
      }
      // Go reads at most nine digits and drops the rest
      String digits = p.take(n).substring(1, Math.min(n, 10));
      nanos = Long.parseLong(digits);
      for (int i = digits.length(); i < 9; i++) {
        nanos *= 10;
      }
    }
    long offsetSeconds = 0;
    if (p.rest() >= 1 && p.peek() == 'Z') {
      p.take(1);
    } else {
      if (p.rest() < 6 || p.peekAt(3) != ':') {
        return Optional.empty();
      }
      String zone = p.take(6);
      Integer hours = twoDigits(zone.substring(1, 3));
      Integer minutes = twoDigits(zone.substring(4, 6));
      if (hours == null || minutes == null || hours > 24 || minutes > 60) {
        return Optional.empty();
      }
      offsetSeconds = (hours * 60L + minutes) * 60;
      switch (zone.charAt(0)) {
        case '+' -> {}
        case '-' -> offsetSeconds = -offsetSeconds;
        default -> {
          return Optional.empty();
        }
      }
    }
    if (p.rest() > 0) {
      return Optional.empty();
    }
    if (day < 1 || day > LocalDate.of(year, month, 1).lengthOfMonth()) {
      return Optional.empty();
    }
    long seconds =
        LocalDate.of(year, month, day).atTime(hour, minute, second).toEpochSecond(ZoneOffset.UTC)
            - offsetSeconds;
    Instant instant = Instant.ofEpochSecond(seconds, nanos);
    return inRange(instant) ? Optional.of(instant) : Optional.empty();
  }

  /** Whether cel-go holds this timestamp: Unix seconds of years 1 to 9999. */
  static boolean inRange(Instant t) {
    return t.getEpochSecond() >= MIN_UNIX_SECONDS && t.getEpochSecond() <= MAX_UNIX_SECONDS;
  }

  /** {@code timestamp(int)}: Unix seconds, in range. */
  public static Instant fromUnixSeconds(long seconds) {
    if (seconds < MIN_UNIX_SECONDS || seconds > MAX_UNIX_SECONDS) {
      throw new OutOfRange("timestamp overflow");
    }
    return Instant.ofEpochSecond(seconds);
  }

  public static Duration add(Duration a, Duration b) {
    return Duration.ofNanos(exact(() -> Math.addExact(a.toNanos(), b.toNanos())));
  }

  public static Duration subtract(Duration a, Duration b) {
    return Duration.ofNanos(exact(() -> Math.subtractExact(a.toNanos(), b.toNanos())));
  }

  /** cel-go's addTimeDurationChecked: seconds and nanoseconds apart, then the range. */
  public static Instant add(Instant t, Duration d) {
    long nanos = d.toNanos();
    long seconds = exact(() -> Math.addExact(t.getEpochSecond(), nanos / NANOS_PER_SECOND));
    long n = t.getNano() + nanos % NANOS_PER_SECOND;
    if (n < 0 || n >= NANOS_PER_SECOND) {
      long carry = n / NANOS_PER_SECOND;
      long s = seconds;
      seconds = exact(() -> Math.addExact(s, carry));
      n -= carry * NANOS_PER_SECOND;
      if (n < 0) {
        long s2 = seconds;
        seconds = exact(() -> Math.addExact(s2, -1));
        n += NANOS_PER_SECOND;
      }
    }
    if (seconds < MIN_UNIX_SECONDS || seconds > MAX_UNIX_SECONDS) {
      throw new OutOfRange("timestamp overflow");
    }
    return Instant.ofEpochSecond(seconds, n);
  }

  /** cel-go's subtractTimeDurationChecked: the negated duration added. */
  public static Instant subtract(Instant t, Duration d) {
    long negated = exact(() -> Math.negateExact(d.toNanos()));
    return add(t, Duration.ofNanos(negated));
  }

  /** cel-go's subtractTimeChecked: whole seconds scaled to nanoseconds, then the nanoseconds. */
  public static Duration subtract(Instant a, Instant b) {
    long seconds = exact(() -> Math.subtractExact(a.getEpochSecond(), b.getEpochSecond()));
    long nanos = a.getNano() - b.getNano();
    long scaled = exact(() -> Math.multiplyExact(seconds, NANOS_PER_SECOND));
    return Duration.ofNanos(exact(() -> Math.addExact(scaled, nanos)));
  }

  /**
   * {@code t.UTC().Format(time.RFC3339Nano)}: a four-digit year, the fraction without trailing
   * zeros, Z.
   */
  public static String formatRfc3339Nano(Instant t) {
    var utc = t.atOffset(ZoneOffset.UTC);
    StringBuilder b = new StringBuilder(35);
    pad(b, utc.getYear(), 4).append('-');
    pad(b, utc.getMonthValue(), 2).append('-');
    pad(b, utc.getDayOfMonth(), 2).append('T');
    pad(b, utc.getHour(), 2).append(':');
    pad(b, utc.getMinute(), 2).append(':');
    pad(b, utc.getSecond(), 2);
    int nanos = utc.getNano();
    if (nanos != 0) {
      String fraction = String.format("%09d", nanos);
      int end = fraction.length();
      while (fraction.charAt(end - 1) == '0') {
        end--;
      }
      b.append('.').append(fraction, 0, end);
    }
    return b.append('Z').toString();
  }

  /**
   * The wall-clock fields of {@code t} in a time zone as cel-go's getters with a zone argument read
   * it: a text with a colon is an offset {@code [+-]hh:mm} ({@code strconv.Atoi} on both sides, any
   * size), other text a zone of the tz database through Go's {@code time.LoadLocation}, where ""
   * and "UTC" are UTC.
   *
   * @throws IllegalArgumentException with Go's message, for a zone Go cannot load or read
   */
  public static LocalDateTime inZone(Instant t, String zone) {
    int colon = zone.indexOf(':');
    if (colon < 0) {
      ZoneId id = loadLocation(zone);
      return LocalDateTime.ofInstant(t, id);
    }
    int hours = atoi(zone.substring(0, colon));
    int minutes = atoi(zone.substring(colon + 1));
    long offsetMinutes = zone.charAt(0) == '-' ? hours * 60L - minutes : hours * 60L + minutes;
    return LocalDateTime.ofEpochSecond(
        Math.addExact(t.getEpochSecond(), offsetMinutes * 60), t.getNano(), ZoneOffset.UTC);
  }

  private static ZoneId loadLocation(String name) {
    if (name.isEmpty() || name.equals("UTC")) {
      return ZoneOffset.UTC;
    }
    if (name.equals("Local")) {
      return ZoneId.systemDefault();
    }
    if (name.contains("..") || name.startsWith("/") || name.startsWith("\\")) {
      throw new IllegalArgumentException("time: invalid location name");
    }
    if (!TzDatabase.IDS.contains(name)) {
      throw new IllegalArgumentException("unknown time zone " + name);
    }
    return ZoneId.of(name);
  }

  /** The tz database's zone names, read on first use (a copy per call otherwise). */
  private static final class TzDatabase {
    static final Set<String> IDS = Set.copyOf(ZoneId.getAvailableZoneIds());
  }

  /** Go's {@code strconv.Atoi} for what fits an int: an optional sign and ASCII digits. */
  private static int atoi(String s) {
    if (!s.matches("[+-]?[0-9]+")) {
      throw new IllegalArgumentException(
          "strconv.Atoi: parsing " + GoQuote.string(s) + ": invalid syntax");
    }
    try {
      return Integer.parseInt(s);
    } catch (NumberFormatException e) {
      throw new IllegalArgumentException(
          "strconv.Atoi: parsing " + GoQuote.string(s) + ": value out of range");
    }
  }

  private static StringBuilder pad(StringBuilder b, int value, int width) {
    String digits = Integer.toString(value);
    for (int i = digits.length(); i < width; i++) {
      b.append('0');
    }
    return b.append(digits);
  }

  private interface LongOp {
    long get();
  }

  /** An int64 operation whose overflow is cel-go's "integer overflow". */
  private static long exact(LongOp op) {
    try {
      return op.get();
    } catch (ArithmeticException e) {
      throw new OutOfRange("integer overflow");
    }
  }

  private static boolean isDigit(char c) {
    return c >= '0' && c <= '9';
  }

  private static Integer twoDigits(String s) {
    return isDigit(s.charAt(0)) && isDigit(s.charAt(1))
        ? (s.charAt(0) - '0') * 10 + (s.charAt(1) - '0')
        : null;
  }

  /** A cursor over the text, with Go's getnum. */
  private static final class Parser {
    private final String s;
    private int i;

    Parser(String s) {
      this.s = s;
    }

    int rest() {
      return s.length() - i;
    }

    char peek() {
      return s.charAt(i);
    }

    char peekAt(int k) {
      return s.charAt(i + k);
    }

    String take(int n) {
      String t = s.substring(i, i + n);
      i += n;
      return t;
    }

    boolean skip(char c) {
      if (rest() == 0 || peek() != c) {
        return false;
      }
      i++;
      return true;
    }

    /** Exactly n digits. */
    Integer digits(int n) {
      if (rest() < n) {
        return null;
      }
      int v = 0;
      for (int k = 0; k < n; k++) {
        if (!isDigit(peekAt(k))) {
          return null;
        }
        v = v * 10 + (peekAt(k) - '0');
      }
      i += n;
      return v;
    }

    /** Go's getnum: two digits, or one where not fixed and the next is no digit. */
    Integer number(boolean fixed) {
      if (rest() == 0 || !isDigit(peek())) {
        return null;
      }
      if (rest() < 2 || !isDigit(peekAt(1))) {
        if (fixed) {
          return null;
        }
        return take(1).charAt(0) - '0';
      }
      return digits(2);
    }
  }
}
