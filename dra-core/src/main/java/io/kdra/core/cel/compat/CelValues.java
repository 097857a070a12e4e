package io.kdra.core.cel.compat;

import com.google.common.primitives.UnsignedLong;
import com.google.protobuf.ByteString;
import com.google.protobuf.Duration;
import com.google.protobuf.Timestamp;
import dev.cel.common.values.CelByteString;
import dev.cel.runtime.CelEvaluationException;
import java.time.Instant;
import java.util.List;
import java.util.Map;
import java.util.Objects;

/** CEL value comparisons and equality as cel-go defines them, for the hand-written libraries. */
public final class CelValues {

  private CelValues() {}

  /**
   * Orders two values of one comparable CEL type (numbers across int, uint and double, as with
   * heterogeneous comparisons); strings by code point, as Go compares UTF-8 bytes.
   */
  public static int compare(Object a, Object b) throws CelEvaluationException {
    if (a instanceof Number && b instanceof Number) {
      if (isNaN(a) || isNaN(b)) {
        // cel-go's Compare is an error, which sort(), min(), max() and isSorted() take for
        // "neither less nor greater"; the operators fail (orderedCompare)
        return 0;
      }
      return compareNumbers(a, b);
    }
    if (a instanceof String x && b instanceof String y) {
      return compareCodePoints(x, y);
    }
    if (a instanceof Boolean x && b instanceof Boolean y) {
      return Boolean.compare(x, y);
    }
    if (a instanceof ByteString x && b instanceof ByteString y) {
      return Integer.signum(ByteString.unsignedLexicographicalComparator().compare(x, y));
    }
    if (a instanceof CelByteString x && b instanceof CelByteString y) {
      return Integer.signum(
          ByteString.unsignedLexicographicalComparator()
              .compare(ByteString.copyFrom(x.toByteArray()), ByteString.copyFrom(y.toByteArray())));
    }
    if (a instanceof Duration x && b instanceof Duration y) {
      int c = Long.compare(x.getSeconds(), y.getSeconds());
      return c != 0 ? c : Integer.compare(x.getNanos(), y.getNanos());
    }
    if (a instanceof Timestamp x && b instanceof Timestamp y) {
      int c = Long.compare(x.getSeconds(), y.getSeconds());
      return c != 0 ? c : Integer.compare(x.getNanos(), y.getNanos());
    }
    if (a instanceof java.time.Duration x && b instanceof java.time.Duration y) {
      return Integer.signum(x.compareTo(y));
    }
    if (a instanceof Instant x && b instanceof Instant y) {
      return Integer.signum(x.compareTo(y));
    }
    if (a instanceof Comparable<?> && a.getClass() == b.getClass()) {
      @SuppressWarnings("unchecked")
      Comparable<Object> c = (Comparable<Object>) a;
      return Integer.signum(c.compareTo(b));
    }
    throw new CelEvaluationException("no such overload");
  }

  public static int compareCodePoints(String a, String b) {
    int i = 0;
    int j = 0;
    while (i < a.length() && j < b.length()) {
      int ca = a.codePointAt(i);
      int cb = b.codePointAt(j);
      if (ca != cb) {
        return ca < cb ? -1 : 1;
      }
      i += Character.charCount(ca);
      j += Character.charCount(cb);
    }
    boolean aLeft = i < a.length();
    boolean bLeft = j < b.length();
    return aLeft == bLeft ? 0 : (aLeft ? 1 : -1);
  }

  /** {@link #compare} for {@code <}, {@code <=} ...: a NaN fails, as in cel-go. */
  public static int orderedCompare(Object a, Object b) throws CelEvaluationException {
    if (isNaN(a) || isNaN(b)) {
      throw new CelEvaluationException("NaN values cannot be ordered");
    }
    return compare(a, b);
  }

  private static boolean isNaN(Object v) {
    return v instanceof Double d && d.isNaN();
  }

  private static int compareNumbers(Object a, Object b) {
    if (a instanceof Double || b instanceof Double) {
      return Double.compare(toDouble(a), toDouble(b));
    }
    if (a instanceof UnsignedLong x && b instanceof UnsignedLong y) {
      return Integer.signum(x.compareTo(y));
    }
    if (a instanceof UnsignedLong x) {
      long y = ((Number) b).longValue();
      return y < 0 ? 1 : Integer.signum(x.compareTo(UnsignedLong.valueOf(y)));
    }
    if (b instanceof UnsignedLong) {
      return -compareNumbers(b, a);
    }
    return Long.compare(((Number) a).longValue(), ((Number) b).longValue());
  }

  private static double toDouble(Object n) {
    return n instanceof UnsignedLong u ? u.doubleValue() : ((Number) n).doubleValue();
  }

  /** CEL equality: numbers by value across types, lists and maps element-wise. */
  public static boolean equal(Object a, Object b) {
    if (a instanceof Number && b instanceof Number) {
      if (a instanceof Double x && x.isNaN() || b instanceof Double y && y.isNaN()) {
        return false;
      }
      return compareNumbers(a, b) == 0;
    }
    if (a instanceof List<?> x && b instanceof List<?> y) {
      if (x.size() != y.size()) {
        return false;
      }
      for (int i = 0; i < x.size(); i++) {
        if (!equal(x.get(i), y.get(i))) {
          return false;
        }
      }
      return true;
    }
    if (a instanceof Map<?, ?> x && b instanceof Map<?, ?> y) {
      if (x.size() != y.size()) {
        return false;
      }
      for (Map.Entry<?, ?> e : x.entrySet()) {
        if (!y.containsKey(e.getKey()) || !equal(e.getValue(), y.get(e.getKey()))) {
          return false;
        }
      }
      return true;
    }
    return Objects.equals(a, b);
  }

  public static Object zeroDuration(Object sample) {
    return sample instanceof java.time.Duration
        ? java.time.Duration.ZERO
        : Duration.getDefaultInstance();
  }

  /** Adds two durations within CEL's range (about ±10,000 years), else an overflow error. */
  public static Object addDurations(Object a, Object b) throws CelEvaluationException {
    java.time.Duration x = toJava(a);
    java.time.Duration y = toJava(b);
    java.time.Duration sum;
    try {
      sum = x.plus(y);
    } catch (ArithmeticException e) {
      throw new CelEvaluationException("integer overflow");
    }
    if (Math.abs(sum.getSeconds()) > 315_576_000_000L) {
      throw new CelEvaluationException("integer overflow");
    }
    if (a instanceof java.time.Duration) {
      return sum;
    }
    return Duration.newBuilder()
        .setSeconds(sum.getSeconds() + (sum.getSeconds() < 0 && sum.getNano() > 0 ? 1 : 0))
        .setNanos(
            sum.getSeconds() < 0 && sum.getNano() > 0
                ? sum.getNano() - 1_000_000_000
                : sum.getNano())
        .build();
  }

  private static java.time.Duration toJava(Object d) {
    if (d instanceof java.time.Duration j) {
      return j;
    }
    Duration p = (Duration) d;
    return java.time.Duration.ofSeconds(p.getSeconds(), p.getNanos());
  }
}
