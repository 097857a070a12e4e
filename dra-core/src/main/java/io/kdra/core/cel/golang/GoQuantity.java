package io.kdra.core.cel.golang;

import io.kdra.core.model.Quantity;
import io.kdra.core.model.QuantityText;
import java.math.BigDecimal;
import java.math.RoundingMode;

/**
 * A quantity as upstream's CEL {@code quantity} library holds it: a {@code *resource.Quantity} of
 * k8s.io/apimachinery, with its two internal forms (an int64 with a base-10 scale, or an {@code
 * inf.Dec}) and the mutations Go's methods make in place, because {@code isInteger()} and {@code
 * asInteger()} answer from the form ({@code AsInt64}), not from the value: {@code 1.5Gi}, {@code
 * 1000m}, values of 19 digits and overflowed sums are not integers there. Hand-written port of
 * {@code ParseQuantity}, {@code int64Amount} and the parts of {@code Quantity} the library calls,
 * including two of Go's aliasing effects that a selector can observe: {@code Cmp} converts its
 * receiver to the inf.Dec form when the other side has it ({@code q.compareTo(quantity("1.5Gi"))}
 * makes {@code q.isInteger()} false). {@code add()}/{@code sub()} work on a deep copy (since 1.37;
 * before, a struct copy shared a Dec-form receiver's inf.Dec and changed it). Mutable, as Go's;
 * used by one evaluation only.
 */
public final class GoQuantity {

  /** A shared {@code *inf.Dec}: struct copies of a quantity share it, as in Go. */
  private static final class Dec {
    BigDecimal value;

    Dec(BigDecimal value) {
      this.value = value;
    }
  }

  static final String FORMAT_WRONG =
      "quantities must match the regular expression "
          + "'^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$'";
  static final String NUMERIC = "unable to parse numeric part of quantity";
  static final String SUFFIX = "unable to parse quantity's suffix";

  private static final int MAX_INT64_FACTORS = 18;
  private static final int NANO = -9;
  private static final BigDecimal MAX_ALLOWED = BigDecimal.valueOf(Long.MAX_VALUE);

  private long value;
  private int scale;
  private Dec dec;
  private Quantity.Format format;

  /** An add()/sub() result: a {@code *Quantity} CEL value upstream, see {@link #isPointer}. */
  private final boolean pointer;

  private GoQuantity(long value, int scale, Dec dec, Quantity.Format format, boolean pointer) {
    this.value = value;
    this.scale = scale;
    this.dec = dec;
    this.format = format;
    this.pointer = pointer;
  }

  /** {@code resource.NewQuantity(v, DecimalExponent)}, as add(int) and sub(int) convert. */
  public static GoQuantity ofInt(long v) {
    return new GoQuantity(v, 0, null, Quantity.Format.DECIMAL_EXPONENT, false);
  }

  /** A quantity as the API server would hand it over: parsed from its canonical text. */
  public static GoQuantity of(Quantity q) {
    return parse(q.toString());
  }

  /**
   * {@code resource.ParseQuantity}.
   *
   * @throws IllegalArgumentException with Go's error text
   */
  public static GoQuantity parse(String str) {
    if (str.isEmpty()) {
      throw new IllegalArgumentException(FORMAT_WRONG);
    }
    if (str.equals("0")) {
      return new GoQuantity(0, 0, null, Quantity.Format.DECIMAL_SI, false);
    }
    QuantityText.Parts p = QuantityText.scan(str);
    if (!p.wellFormed()) {
      throw new IllegalArgumentException(FORMAT_WRONG);
    }
    QuantityText.Suffix suffix = QuantityText.interpret(p.suffix(str));
    if (suffix == null) {
      throw new IllegalArgumentException(SUFFIX);
    }
    Quantity.Format format = suffix.format();
    int base = suffix.base();
    int exponent = suffix.exponent();

    int precision = 0;
    int scale = 0;
    long mantissa = 1;
    if (format == Quantity.Format.BINARY_SI) {
      if (exponent >= 0 && p.denom().isEmpty()) {
        mantissa = 1L << exponent;
        precision = 15 - p.num().length() - (int) ((float) exponent * 3 / 10) - 1;
      } else {
        precision = -1;
      }
    } else {
      scale = exponent;
      precision = MAX_INT64_FACTORS - (p.num().length() + p.denom().length());
    }
    if (precision >= 0) {
      scale -= p.denom().length();
      if (scale >= NANO) {
        long shifted;
        try {
          shifted = Long.parseLong(p.num() + p.denom());
        } catch (NumberFormatException e) {
          throw new IllegalArgumentException(NUMERIC);
        }
        Long result = int64Multiply(shifted, mantissa);
        if (result != null) {
          return new GoQuantity(p.positive() ? result : -result, scale, null, format, false);
        }
      }
    }

    BigDecimal amount;
    try {
      amount = new BigDecimal(p.value());
    } catch (NumberFormatException e) {
      throw new IllegalArgumentException(NUMERIC);
    }
    if (base == 10) {
      amount = new BigDecimal(amount.unscaledValue(), amount.scale() - exponent);
    } else {
      amount = new BigDecimal(amount.unscaledValue().shiftLeft(exponent), amount.scale());
    }
    int sign = amount.signum();
    amount = amount.abs();
    if (amount.unscaledValue().signum() != 0) {
      amount = amount.setScale(-NANO, RoundingMode.UP);
    }
    if (format == Quantity.Format.BINARY_SI && amount.compareTo(MAX_ALLOWED) > 0) {
      amount = MAX_ALLOWED;
    }
    if (format == Quantity.Format.BINARY_SI
        && amount.compareTo(BigDecimal.ONE) < 0
        && amount.signum() > 0) {
      format = Quantity.Format.DECIMAL_SI;
    }
    if (sign < 0) {
      amount = amount.negate();
    }
    return new GoQuantity(0, 0, new Dec(amount), format, false);
  }

  /** A copy with its own inf.Dec, for another evaluation. */
  public GoQuantity copy() {
    return new GoQuantity(value, scale, dec == null ? null : new Dec(dec.value), format, pointer);
  }

  /** Whether this is an add()/sub() result ({@code *Quantity}, not {@code Quantity}). */
  public boolean isPointer() {
    return pointer;
  }

  /** The exact value. */
  BigDecimal exact() {
    return dec != null ? dec.value : BigDecimal.valueOf(value, -scale);
  }

  Quantity.Format format() {
    return format;
  }

  /** {@code AsInt64}'s success: the int64 form at a scale that fits. */
  public boolean isInteger() {
    return asInt64() != null;
  }

  /** {@code AsInt64}, null where it fails. */
  public Long asInt64() {
    if (dec != null) {
      return null;
    }
    if (scale == 0) {
      return value;
    }
    if (scale < 0) {
      return null;
    }
    return positiveScaleInt64(value, scale);
  }

  public int sign() {
    return dec != null ? dec.value.signum() : Long.signum(value);
  }

  /** {@code AsApproximateFloat64}. */
  public double approximateFloat() {
    double base;
    int exponent;
    if (dec != null) {
      base = dec.value.unscaledValue().doubleValue();
      exponent = -dec.value.scale();
    } else {
      base = (double) value;
      exponent = scale;
    }
    return exponent == 0 ? base : base * pow10(exponent);
  }

  /**
   * {@code q.Cmp(y)} on the pointer CEL holds: when either side is an inf.Dec, the receiver is
   * converted to one in place ({@code AsDec}); the argument is a copy.
   */
  public int cmp(GoQuantity y) {
    if (dec == null && y.dec != null) {
      toDec();
    }
    return Integer.signum(exact().compareTo(y.exact()));
  }

  /** {@code Quantity.Equal}: value receiver and argument, no side effects. */
  public boolean equalValue(GoQuantity y) {
    return exact().compareTo(y.exact()) == 0;
  }

  /** {@code copy := q.DeepCopy(); copy.Add(y)}: a new *Quantity, the receiver unchanged. */
  public GoQuantity add(GoQuantity y) {
    GoQuantity c = deepCopyAsPointer();
    if (c.dec == null && y.dec == null) {
      if (c.value == 0) {
        c.format = y.format;
      }
      if (c.addInt64(y.value, y.scale)) {
        return c;
      }
    } else if (c.isZero()) {
      c.format = y.format;
    }
    BigDecimal other = y.exact();
    c.toDec();
    c.dec.value = c.dec.value.add(other);
    return c;
  }

  /** {@code copy := q.DeepCopy(); copy.Sub(y)}. */
  public GoQuantity sub(GoQuantity y) {
    GoQuantity c = deepCopyAsPointer();
    if (c.isZero()) {
      c.format = y.format;
    }
    if (c.dec == null && y.dec == null && c.addInt64(-y.value, y.scale)) {
      return c;
    }
    BigDecimal other = y.exact();
    c.toDec();
    c.dec.value = c.dec.value.subtract(other);
    return c;
  }

  private GoQuantity deepCopyAsPointer() {
    return new GoQuantity(value, scale, dec == null ? null : new Dec(dec.value), format, true);
  }

  /** The model's quantity of the same value and format, for printing. */
  Quantity toQuantity() {
    return Quantity.of(exact(), format);
  }

  @Override
  public String toString() {
    return toQuantity().toString();
  }

  private boolean isZero() {
    return dec != null ? dec.value.signum() == 0 : value == 0;
  }

  private void toDec() {
    if (dec == null) {
      dec = new Dec(BigDecimal.valueOf(value, -scale));
      value = 0;
      scale = 0;
    }
  }

  /** {@code int64Amount.Add}: false, and nothing changed, on overflow. */
  private boolean addInt64(long bValue, int bScale) {
    if (bValue == 0) {
      return true;
    }
    if (value == 0) {
      value = bValue;
      scale = bScale;
      return true;
    }
    Long c;
    if (scale == bScale) {
      c = int64Add(value, bValue);
      if (c == null) {
        return false;
      }
    } else if (scale > bScale) {
      c = positiveScaleInt64(value, scale - bScale);
      if (c == null || (c = int64Add(c, bValue)) == null) {
        return false;
      }
      scale = bScale;
    } else {
      c = positiveScaleInt64(bValue, bScale - scale);
      if (c == null || (c = int64Add(value, c)) == null) {
        return false;
      }
    }
    value = c;
    return true;
  }

  private static Long int64Add(long a, long b) {
    long c = a + b;
    if (a > 0 && b > 0 && c < 0) {
      return null;
    }
    if (a < 0 && b < 0 && (c > 0 || a == Long.MIN_VALUE && b == Long.MIN_VALUE)) {
      return null;
    }
    return c;
  }

  private static Long int64Multiply(long a, long b) {
    if (a == 0 || b == 0 || a == 1 || b == 1) {
      return a * b;
    }
    if (a == Long.MIN_VALUE || b == Long.MIN_VALUE) {
      return null;
    }
    long c = a * b;
    return c / b == a ? c : null;
  }

  /** {@code int64MultiplyScale}, {@code ...Scale10} ... (the same for b > 1). */
  private static Long int64MultiplyScale(long a, long b) {
    if (a == 0 || a == 1) {
      return a * b;
    }
    if (a == Long.MIN_VALUE) {
      return null;
    }
    long c = a * b;
    return c / b == a ? c : null;
  }

  private static Long positiveScaleInt64(long base, int scale) {
    return switch (scale) {
      case 0 -> base;
      case 1 -> int64MultiplyScale(base, 10);
      case 2 -> int64MultiplyScale(base, 100);
      case 3 -> int64MultiplyScale(base, 1000);
      case 6 -> int64MultiplyScale(base, 1_000_000);
      case 9 -> int64MultiplyScale(base, 1_000_000_000);
      default -> {
        Long v = base;
        for (int i = 0; i < scale; i++) {
          v = int64MultiplyScale(v, 10);
          if (v == null) {
            break;
          }
        }
        yield v;
      }
    };
  }

  private static final double[] POW10 = {
    1e00, 1e01, 1e02, 1e03, 1e04, 1e05, 1e06, 1e07, 1e08, 1e09, 1e10, 1e11, 1e12, 1e13, 1e14, 1e15,
    1e16, 1e17, 1e18, 1e19, 1e20, 1e21, 1e22, 1e23, 1e24, 1e25, 1e26, 1e27, 1e28, 1e29, 1e30, 1e31
  };
  private static final double[] POW10_POS32 = {
    1e00, 1e32, 1e64, 1e96, 1e128, 1e160, 1e192, 1e224, 1e256, 1e288
  };
  private static final double[] POW10_NEG32 = {
    1e-00, 1e-32, 1e-64, 1e-96, 1e-128, 1e-160, 1e-192, 1e-224, 1e-256, 1e-288, 1e-320
  };

  /** Go's {@code math.Pow10}, table for table. */
  static double pow10(int n) {
    if (0 <= n && n <= 308) {
      return POW10_POS32[n / 32] * POW10[n % 32];
    }
    if (-323 <= n && n <= 0) {
      return POW10_NEG32[-n / 32] / POW10[-n % 32];
    }
    return n > 0 ? Double.POSITIVE_INFINITY : 0;
  }
}
