package io.kdra.core.cel.golang;

import java.math.BigDecimal;
import java.time.Duration;

/** Go's text forms of numbers that cel-go prints: {@code strconv.FormatFloat(f, 'g'|'f', -1)}. */
public final class GoFloat {

  private GoFloat() {}

  /**
   * {@code strconv.FormatFloat(d, 'g', -1, 64)}, which is also {@code fmt}'s {@code %g}: shortest
   * digits, %e from exponent -5 or 6.
   */
  public static String shortest(double d) {
    if (Double.isNaN(d)) {
      return "NaN";
    }
    if (Double.isInfinite(d)) {
      return d > 0 ? "+Inf" : "-Inf";
    }
    if (d == 0) {
      return 1 / d < 0 ? "-0" : "0";
    }
    BigDecimal value = new BigDecimal(Double.toString(d)).stripTrailingZeros();
    String digits = value.unscaledValue().abs().toString();
    int exp = digits.length() - 1 - value.scale();
    String sign = d < 0 ? "-" : "";
    if (exp < -4 || exp >= 6) {
      String mantissa = digits.length() > 1 ? digits.charAt(0) + "." + digits.substring(1) : digits;
      String e = Integer.toString(Math.abs(exp));
      return sign + mantissa + "e" + (exp < 0 ? "-" : "+") + (e.length() < 2 ? "0" + e : e);
    }
    return sign + value.abs().toPlainString();
  }

  /** cel-go's duration text: seconds as {@code strconv.FormatFloat(s, 'f', -1, 64)} + "s". */
  public static String duration(Duration d) {
    // Go's Duration.Seconds(): whole seconds and the remainder, both truncated towards zero
    long nanos = d.toNanos();
    double seconds = (double) (nanos / 1_000_000_000L) + (double) (nanos % 1_000_000_000L) / 1e9;
    if (seconds == 0) {
      return "0s";
    }
    return new BigDecimal(Double.toString(seconds)).stripTrailingZeros().toPlainString() + "s";
  }
}
