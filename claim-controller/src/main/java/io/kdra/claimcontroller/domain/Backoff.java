package io.kdra.claimcontroller.domain;

import java.time.Duration;

/**
 * Exponential backoff for pods that cannot be placed: {@code initial * 2^(attempt-1)}, capped at
 * {@code max}. Pure; the caller counts attempts.
 */
public record Backoff(Duration initial, Duration max) {

  public Backoff {
    if (initial.isNegative() || initial.isZero() || max.compareTo(initial) < 0) {
      throw new IllegalArgumentException("need 0 < initial <= max, got " + initial + ", " + max);
    }
  }

  /** The delay before retry number {@code attempt} (1 for the first retry). */
  public Duration delay(int attempt) {
    if (attempt <= 1) {
      return initial;
    }
    int shift = Math.min(attempt - 1, 30);
    Duration d = initial.multipliedBy(1L << shift);
    return d.compareTo(max) > 0 || d.isNegative() ? max : d;
  }
}
