package io.kdra.slicepublisher.grpc;

import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.HashMap;
import java.util.Map;

/**
 * A token bucket per peer address: bounds how many TokenReviews one caller can cause, whatever
 * tokens it sends. A bucket holds up to {@code burst} reviews and refills one per {@code refill}.
 * Full buckets are forgotten when more than {@value #MAX_PEERS} peers are known, so that the map
 * stays small. Thread-safe.
 */
final class PeerRateLimiter {

  static final int MAX_PEERS = 4096;

  private final int burst;
  private final Duration refill;
  private final Clock clock;
  private final Map<String, Bucket> buckets = new HashMap<>();

  PeerRateLimiter(int burst, Duration refill, Clock clock) {
    if (burst < 1 || refill.isNegative() || refill.isZero()) {
      throw new IllegalArgumentException("burst must be at least 1 and refill positive");
    }
    this.burst = burst;
    this.refill = refill;
    this.clock = clock;
  }

  /** Takes one review from the peer's bucket; false when it is empty. */
  synchronized boolean tryAcquire(String peer) {
    Instant now = clock.instant();
    if (buckets.size() >= MAX_PEERS) {
      buckets.values().removeIf(b -> b.available(now) >= burst);
    }
    Bucket b = buckets.computeIfAbsent(peer, p -> new Bucket(burst, now));
    double available = b.available(now);
    if (available < 1) {
      return false;
    }
    b.tokens = available - 1;
    b.at = now;
    return true;
  }

  private final class Bucket {
    double tokens;
    Instant at;

    Bucket(double tokens, Instant at) {
      this.tokens = tokens;
      this.at = at;
    }

    double available(Instant now) {
      double refilled = Duration.between(at, now).toNanos() / (double) refill.toNanos();
      return Math.min(burst, tokens + Math.max(0, refilled));
    }
  }
}
