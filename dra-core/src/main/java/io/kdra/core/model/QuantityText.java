package io.kdra.core.model;

/**
 * The one scanner of quantity text, apimachinery's {@code parseQuantityString} and {@code
 * suffixer.interpret}: both {@link Quantity#parse} and the CEL library's Go-faithful quantity build
 * on it, each applying its own acceptance rules and error texts to the parts.
 */
public final class QuantityText {

  private static final String SUFFIX_CHARS = "eEinumkKMGTP";

  private QuantityText() {}

  /**
   * A quantity's text cut into parts as Go cuts it.
   *
   * @param positive no leading minus
   * @param signLength 1 with a leading sign, else 0
   * @param value Go's {@code value}: the number as written (sign and zeros included), "0" when the
   *     text is a sign and zeros only
   * @param num the integer digits without leading zeros, "0" when there are none
   * @param denom the fraction digits
   * @param numberEnd where the number (digits and at most one dot) ends
   * @param hasDigits whether the number has at least one digit
   * @param wellFormed whether the rest is suffix characters, an optional sign and digits, as Go's
   *     {@code ErrFormatWrong} requires
   */
  public record Parts(
      boolean positive,
      int signLength,
      String value,
      String num,
      String denom,
      int numberEnd,
      boolean hasDigits,
      boolean wellFormed) {

    /** The text after the number. */
    public String suffix(String text) {
      return text.substring(numberEnd);
    }
  }

  /** A recognised suffix: the value is the number times base^exponent. */
  public record Suffix(int base, int exponent, Quantity.Format format) {}

  /** {@code parseQuantityString}, without its error: see {@link Parts#wellFormed}. */
  public static Parts scan(String str) {
    boolean positive = true;
    int pos = 0;
    int end = str.length();
    if (end > 0 && (str.charAt(0) == '-' || str.charAt(0) == '+')) {
      positive = str.charAt(0) == '+';
      pos++;
    }
    int signLength = pos;
    while (pos < end && str.charAt(pos) == '0') {
      pos++;
    }
    if (pos >= end) {
      return new Parts(positive, signLength, "0", "0", "", end, end > signLength, true);
    }
    int i = pos;
    while (i < end && isDigit(str.charAt(i))) {
      i++;
    }
    boolean hasDigits = i > signLength;
    if (i >= end) {
      return new Parts(positive, signLength, str, str.substring(pos), "", end, hasDigits, true);
    }
    String num = str.substring(pos, i);
    pos = i;
    if (num.isEmpty()) {
      num = "0";
    }
    String denom = "";
    if (str.charAt(pos) == '.') {
      pos++;
      i = pos;
      while (i < end && isDigit(str.charAt(i))) {
        i++;
      }
      denom = str.substring(pos, i);
      hasDigits |= !denom.isEmpty();
      if (i >= end) {
        return new Parts(positive, signLength, str, num, denom, end, hasDigits, true);
      }
      pos = i;
    }
    int numberEnd = pos;
    String value = str.substring(0, pos);
    i = pos;
    while (i < end && SUFFIX_CHARS.indexOf(str.charAt(i)) >= 0) {
      i++;
    }
    if (i < end && (str.charAt(i) == '-' || str.charAt(i) == '+')) {
      i++;
    }
    while (i < end && isDigit(str.charAt(i))) {
      i++;
    }
    return new Parts(positive, signLength, value, num, denom, numberEnd, hasDigits, i >= end);
  }

  /**
   * {@code suffixer.interpret}: the SI and binary suffixes, and {@code e}/{@code E} with an int64
   * exponent (truncated to 32 bits, as Go's {@code int32(parsed)}); null for any other suffix.
   */
  public static Suffix interpret(String suffix) {
    Quantity.Format decimal = Quantity.Format.DECIMAL_SI;
    Quantity.Format binary = Quantity.Format.BINARY_SI;
    return switch (suffix) {
      case "" -> new Suffix(10, 0, decimal);
      case "n" -> new Suffix(10, -9, decimal);
      case "u" -> new Suffix(10, -6, decimal);
      case "m" -> new Suffix(10, -3, decimal);
      case "k" -> new Suffix(10, 3, decimal);
      case "M" -> new Suffix(10, 6, decimal);
      case "G" -> new Suffix(10, 9, decimal);
      case "T" -> new Suffix(10, 12, decimal);
      case "P" -> new Suffix(10, 15, decimal);
      case "E" -> new Suffix(10, 18, decimal);
      case "Ki" -> new Suffix(2, 10, binary);
      case "Mi" -> new Suffix(2, 20, binary);
      case "Gi" -> new Suffix(2, 30, binary);
      case "Ti" -> new Suffix(2, 40, binary);
      case "Pi" -> new Suffix(2, 50, binary);
      case "Ei" -> new Suffix(2, 60, binary);
      default -> {
        char c = suffix.charAt(0);
        if (suffix.length() < 2 || c != 'e' && c != 'E') {
          yield null;
        }
        try {
          long parsed = Long.parseLong(suffix.substring(1));
          yield new Suffix(10, (int) parsed, Quantity.Format.DECIMAL_EXPONENT);
        } catch (NumberFormatException e) {
          yield null;
        }
      }
    };
  }

  private static boolean isDigit(char c) {
    return c >= '0' && c <= '9';
  }
}
