package io.kdra.core.model;

import java.math.BigDecimal;
import java.math.BigInteger;
import java.math.RoundingMode;
import java.util.Objects;

/**
 * An exact Kubernetes resource quantity ({@code 40Gi}, {@code 500m}, {@code 1.5G}, {@code 1e3}),
 * with the parsing, comparison and canonical formatting of {@code k8s.io/apimachinery}'s {@code
 * resource.Quantity}.
 *
 * <p>Values are exact decimals; precision finer than 10<sup>-9</sup> is rounded away from zero at
 * parse time, as upstream does. The format (binary, decimal or exponent) of the parsed text is kept
 * so that {@link #toString()} prints the same canonical form as {@code Quantity.String()}.
 * Instances are immutable; {@link #equals} compares values only, like {@code Quantity.Cmp}.
 */
public final class Quantity implements Comparable<Quantity> {

  /** How a quantity is printed; the format of the text it was parsed from. */
  public enum Format {
    /** Powers of 1024: Ki, Mi, Gi, Ti, Pi, Ei. */
    BINARY_SI,
    /** Powers of 1000: n, u, m, "", k, M, G, T, P, E. */
    DECIMAL_SI,
    /** Scientific notation: 1e3, 5E-3. */
    DECIMAL_EXPONENT
  }

  public static final Quantity ZERO = new Quantity(BigDecimal.ZERO, Format.DECIMAL_SI);

  private static final int NANO_SCALE = 9;
  private static final BigInteger THOUSAND = BigInteger.valueOf(1000);
  private static final BigInteger BINARY_STEP = BigInteger.valueOf(1024);
  private static final String[] BINARY_SUFFIXES = {"", "Ki", "Mi", "Gi", "Ti", "Pi", "Ei"};
  private static final BigDecimal INT64_MIN = BigDecimal.valueOf(Long.MIN_VALUE);
  private static final BigDecimal INT64_MAX = BigDecimal.valueOf(Long.MAX_VALUE);

  private final BigDecimal value;
  private final Format format;

  private Quantity(BigDecimal value, Format format) {
    this.value = value;
    this.format = format;
  }

  /** An integer quantity in decimal format, e.g. a count of bytes. */
  public static Quantity of(long value) {
    return new Quantity(BigDecimal.valueOf(value), Format.DECIMAL_SI);
  }

  /** A quantity with the given exact value and format; precision beyond nano is rounded up. */
  public static Quantity of(BigDecimal value, Format format) {
    return new Quantity(roundToNano(value), Objects.requireNonNull(format));
  }

  /**
   * Parses a quantity as {@code resource.ParseQuantity} does, on the scanner the CEL library's
   * Go-faithful quantity shares ({@link QuantityText}). Stricter than Go where Go's leniency is an
   * accident: the number needs a digit (Go reads {@code "Gi"} and {@code "-"} as zero) and an
   * exponent is at most 1000 (Go truncates it to 32 bits); binary values are not capped at the
   * int64 maximum.
   *
   * @throws IllegalArgumentException with a message naming the text and what is wrong with it
   */
  public static Quantity parse(String text) {
    if (text == null || text.isEmpty()) {
      throw new IllegalArgumentException(
          "quantities must match the regular expression "
              + "'^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$': empty string");
    }
    QuantityText.Parts parts = QuantityText.scan(text);
    if (!parts.hasDigits()) {
      throw invalid(text, "no digits");
    }
    boolean negative = !parts.positive();
    String suffix = parts.suffix(text);
    BigDecimal magnitude = new BigDecimal(text.substring(parts.signLength(), parts.numberEnd()));
    QuantityText.Suffix known = QuantityText.interpret(suffix);
    Format format;
    BigDecimal multiplier;
    if (known != null && known.format() != Format.DECIMAL_EXPONENT) {
      format = known.format();
      multiplier =
          known.base() == 2
              ? new BigDecimal(BigInteger.TWO.pow(known.exponent()))
              : BigDecimal.ONE.scaleByPowerOfTen(known.exponent());
    } else {
      // stricter than Go: the exponent a whole number of at most 1000, not truncated to 32 bits
      if (suffix.isEmpty() || suffix.charAt(0) != 'e' && suffix.charAt(0) != 'E') {
        throw invalid(text, "unknown suffix '" + suffix + "'");
      }
      String exponent = suffix.substring(1);
      if (!exponent.matches("[+-]?[0-9]+")) {
        throw invalid(text, "exponent '" + suffix + "' is not a whole number");
      }
      int exp;
      try {
        exp = Integer.parseInt(exponent);
      } catch (NumberFormatException e) {
        throw invalid(text, "exponent out of range");
      }
      if (Math.abs(exp) > 1000) {
        throw invalid(text, "exponent out of range");
      }
      format = Format.DECIMAL_EXPONENT;
      multiplier = BigDecimal.ONE.scaleByPowerOfTen(exp);
    }
    BigDecimal amount = magnitude.multiply(multiplier);
    if (negative) {
      amount = amount.negate();
    }
    return new Quantity(roundToNano(amount), format);
  }

  /**
   * Parses the API model's quantity (amount and format as fabric8 split them): the one way the
   * services read fabric8's quantities. Absent (null, or no amount) is null.
   *
   * @throws IllegalArgumentException as {@link #parse}
   */
  public static Quantity fromApi(io.fabric8.kubernetes.api.model.Quantity q) {
    if (q == null || q.getAmount() == null) {
      return null;
    }
    return parse(q.getAmount() + (q.getFormat() == null ? "" : q.getFormat()));
  }

  /** True when {@link #parse} would accept the text. */
  public static boolean isQuantity(String text) {
    try {
      parse(text);
      return true;
    } catch (IllegalArgumentException e) {
      return false;
    }
  }

  private static IllegalArgumentException invalid(String text, String reason) {
    return new IllegalArgumentException("invalid quantity \"" + text + "\": " + reason);
  }

  private static BigDecimal roundToNano(BigDecimal amount) {
    BigDecimal rounded =
        amount.scale() > NANO_SCALE ? amount.setScale(NANO_SCALE, RoundingMode.UP) : amount;
    return rounded.signum() == 0 ? BigDecimal.ZERO : rounded;
  }

  /** The exact value. */
  public BigDecimal value() {
    return value;
  }

  public Format format() {
    return format;
  }

  /** -1, 0 or 1, as the sign of the value. */
  public int sign() {
    return value.signum();
  }

  /** True when the value is a whole number that fits into a signed 64-bit integer. */
  public boolean isInteger() {
    return isWhole() && value.compareTo(INT64_MIN) >= 0 && value.compareTo(INT64_MAX) <= 0;
  }

  private boolean isWhole() {
    return value.signum() == 0 || value.stripTrailingZeros().scale() <= 0;
  }

  /**
   * The value as a long.
   *
   * @throws ArithmeticException when the value has a fraction or does not fit into 64 bits
   */
  public long asLong() {
    if (!isWhole()) {
      throw new ArithmeticException("cannot convert value to integer: " + this + " has a fraction");
    }
    if (!isInteger()) {
      throw new ArithmeticException(
          "cannot convert value to integer: " + this + " is out of the range of a 64-bit integer");
    }
    return value.longValueExact();
  }

  /** The value as the nearest double; may lose precision. */
  public double asApproximateDouble() {
    return value.doubleValue();
  }

  /** The sum, in this quantity's format. */
  public Quantity add(Quantity other) {
    return new Quantity(value.add(other.value), format);
  }

  /** The difference, in this quantity's format. */
  public Quantity subtract(Quantity other) {
    return new Quantity(value.subtract(other.value), format);
  }

  public boolean isZero() {
    return value.signum() == 0;
  }

  @Override
  public int compareTo(Quantity other) {
    return value.compareTo(other.value);
  }

  @Override
  public boolean equals(Object o) {
    return o instanceof Quantity q && value.compareTo(q.value) == 0;
  }

  @Override
  public int hashCode() {
    return value.stripTrailingZeros().hashCode();
  }

  /** The canonical text, exactly as {@code resource.Quantity.String()} prints it. */
  @Override
  public String toString() {
    if (value.signum() == 0) {
      return "0";
    }
    if (format == Format.BINARY_SI
        && value.abs().compareTo(BigDecimal.valueOf(1024)) >= 0
        && isWhole()) {
      return binaryCanonical();
    }
    return decimalCanonical(format == Format.DECIMAL_EXPONENT);
  }

  private String binaryCanonical() {
    BigInteger mantissa = value.toBigIntegerExact();
    int power = 0;
    while (power < BINARY_SUFFIXES.length - 1) {
      BigInteger[] qr = mantissa.divideAndRemainder(BINARY_STEP);
      if (qr[1].signum() != 0) {
        break;
      }
      mantissa = qr[0];
      power++;
    }
    return mantissa + BINARY_SUFFIXES[power];
  }

  /** Mantissa times 10^exponent with the exponent a multiple of 3 and the mantissa integral. */
  private String decimalCanonical(boolean exponentForm) {
    BigDecimal stripped = value.stripTrailingZeros();
    BigInteger mantissa = stripped.unscaledValue();
    int exponent = -stripped.scale();
    int remainder = Math.floorMod(exponent, 3);
    if (remainder != 0) {
      mantissa = mantissa.multiply(BigInteger.TEN.pow(remainder));
      exponent -= remainder;
    }
    if (exponentForm) {
      return exponent == 0 ? mantissa.toString() : mantissa + "e" + exponent;
    }
    while (exponent > 18) {
      mantissa = mantissa.multiply(THOUSAND);
      exponent -= 3;
    }
    return mantissa + decimalSuffix(exponent);
  }

  private static String decimalSuffix(int exponent) {
    return switch (exponent) {
      case -9 -> "n";
      case -6 -> "u";
      case -3 -> "m";
      case 0 -> "";
      case 3 -> "k";
      case 6 -> "M";
      case 9 -> "G";
      case 12 -> "T";
      case 15 -> "P";
      case 18 -> "E";
      default -> throw new IllegalStateException("exponent " + exponent);
    };
  }
}
