package io.kdra.core.cel.golang;

import java.math.BigDecimal;
import java.math.MathContext;
import java.math.RoundingMode;
import java.text.DecimalFormat;
import java.text.DecimalFormatSymbols;
import java.util.Locale;

/**
 * Doubles as golang.org/x/text's en_US message printer writes them for cel-go's {@code format()}
 * ({@code %f} and {@code %e}).
 */
public final class GoLocalizedFloat {

  private GoLocalizedFloat() {}

  /** golang.org/x/text's en_US printer for %.Nf: grouped thousands, no negative zero. */
  public static String fixed(double d, int precision) {
    if (Double.isNaN(d)) {
      return "NaN";
    }
    if (Double.isInfinite(d)) {
      return d > 0 ? "∞" : "-∞";
    }
    BigDecimal value = new BigDecimal(d).setScale(precision, RoundingMode.HALF_EVEN);
    DecimalFormat f =
        new DecimalFormat(
            "#,##0" + (precision > 0 ? "." + "0".repeat(precision) : ""),
            DecimalFormatSymbols.getInstance(Locale.US));
    f.setRoundingMode(RoundingMode.HALF_EVEN);
    String s = f.format(value);
    // negative zero prints unsigned; a negative value that rounds to zero keeps its sign
    return d < 0 && !s.startsWith("-")
        ? "-" + s
        : (d == 0 && s.startsWith("-") ? s.substring(1) : s);
  }

  private static final String SUPERSCRIPTS = "⁰¹²³⁴⁵⁶⁷⁸⁹";

  /**
   * golang.org/x/text's en_US printer for cel-go's {@code %<precision>e}: the precision is used as
   * the width (a cel-go quirk), the mantissa always has six decimals and the exponent is written as
   * ×10 with superscript digits ({@code 1.234500×10⁰³}).
   */
  public static String scientific(double d, int width) {
    String s;
    if (Double.isNaN(d)) {
      s = "NaN";
    } else if (Double.isInfinite(d)) {
      s = d > 0 ? "∞" : "-∞";
    } else {
      int exp = 0;
      BigDecimal mantissa = BigDecimal.ZERO.setScale(6);
      if (d != 0) {
        BigDecimal v =
            new BigDecimal(Math.abs(d)).round(new MathContext(7, RoundingMode.HALF_EVEN));
        exp = v.precision() - v.scale() - 1;
        mantissa = v.movePointLeft(exp).setScale(6, RoundingMode.HALF_EVEN);
      }
      String digits = Integer.toString(Math.abs(exp));
      if (digits.length() < 2) {
        digits = "0" + digits;
      }
      StringBuilder sup = new StringBuilder(exp < 0 ? "⁻" : "");
      digits.chars().forEach(c -> sup.append(SUPERSCRIPTS.charAt(c - '0')));
      s = (d < 0 ? "-" : "") + mantissa.toPlainString() + "×10" + sup;
    }
    int length = s.codePointCount(0, s.length());
    return length < width ? " ".repeat(width - length) + s : s;
  }
}
