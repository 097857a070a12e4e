package io.kdra.core.cel.cost;

/**
 * A range of sizes or costs, cel-go's {@code checker.SizeEstimate} and {@code CostEstimate} (the
 * same arithmetic). Both bounds are unsigned 64-bit values held in a {@code long} (Go's {@code
 * uint64}): arithmetic saturates at {@link #MAX}, and the rounding of cost factors is Go's float64
 * one, so that estimates equal upstream's to the unit.
 */
public record Estimate(long min, long max) {

  /** {@code math.MaxUint64}. */
  static final long MAX = -1L;

  static final Estimate UNKNOWN = new Estimate(0, MAX);
  static final Estimate ZERO = new Estimate(0, 0);

  private static final double TWO_TO_64 = Math.scalb(1.0, 64);

  static Estimate fixed(long value) {
    return new Estimate(value, value);
  }

  Estimate add(Estimate other) {
    return new Estimate(addNoOverflow(min, other.min), addNoOverflow(max, other.max));
  }

  Estimate multiply(Estimate other) {
    return new Estimate(multiplyNoOverflow(min, other.min), multiplyNoOverflow(max, other.max));
  }

  /** Both bounds times a factor, rounded up (Go: {@code multiplyByCostFactor}). */
  Estimate multiplyByCostFactor(double factor) {
    return new Estimate(multiplyByCostFactor(min, factor), multiplyByCostFactor(max, factor));
  }

  Estimate union(Estimate other) {
    return new Estimate(
        Long.compareUnsigned(other.min, min) < 0 ? other.min : min,
        Long.compareUnsigned(other.max, max) > 0 ? other.max : max);
  }

  static long addNoOverflow(long x, long y) {
    if (y != 0 && Long.compareUnsigned(x, MAX - y) > 0) {
      return MAX;
    }
    return x + y;
  }

  static long multiplyNoOverflow(long x, long y) {
    if (y != 0 && Long.compareUnsigned(x, Long.divideUnsigned(MAX, y)) > 0) {
      return MAX;
    }
    return x * y;
  }

  static long multiplyByCostFactor(long x, double factor) {
    double xFloat = toDouble(x);
    if (xFloat > 0 && factor > 0 && xFloat > toDouble(MAX) / factor) {
      return MAX;
    }
    double ceil = Math.ceil(xFloat * factor);
    if (ceil >= TWO_TO_64) {
      return MAX;
    }
    return fromDouble(ceil);
  }

  /** Go's {@code float64(uint64)}: round to nearest. */
  static double toDouble(long unsigned) {
    if (unsigned >= 0) {
      return unsigned;
    }
    // halve (keeping the lowest bit for correct rounding), convert, double
    return ((unsigned >>> 1) | (unsigned & 1)) * 2.0;
  }

  /**
   * Go's {@code uint64(float64)} for d >= 0 as amd64 computes it: 2^63 for d >= 2^64 (out of range,
   * which Go leaves to the platform; reached by the replace() estimate).
   */
  static long fromDouble(double d) {
    if (d >= TWO_TO_64) {
      return Long.MIN_VALUE;
    }
    if (d < 0x1p63) {
      return (long) d;
    }
    return (long) (d - 0x1p63) + Long.MIN_VALUE;
  }

  @Override
  public String toString() {
    return "[" + Long.toUnsignedString(min) + ", " + Long.toUnsignedString(max) + "]";
  }
}
