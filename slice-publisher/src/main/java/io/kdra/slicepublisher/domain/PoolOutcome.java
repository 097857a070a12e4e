package io.kdra.slicepublisher.domain;

import java.time.Instant;
import java.util.Objects;
import java.util.Optional;

/**
 * What to do with one pool now, as {@link PoolDecider} decides it; the reconciler maps it to writes
 * and requeues and decides nothing itself.
 */
public sealed interface PoolOutcome {

  /**
   * When the decision may change by time alone (a grace or staleness timer expires), if it ever
   * does: the pool is to be planned again then. Empty for a pool only new input changes.
   */
  Optional<Instant> recheckAt();

  /** Touch nothing: the pool is not this publisher's, or its inventory may still come. */
  record Leave(Optional<Instant> recheckAt) implements PoolOutcome {
    public Leave {
      Objects.requireNonNull(recheckAt, "recheckAt");
    }
  }

  /** The pool should not exist: delete its slices. */
  record Remove() implements PoolOutcome {
    @Override
    public Optional<Instant> recheckAt() {
      return Optional.empty();
    }
  }

  /** The pool should be stored as {@code pool}. */
  record Publish(DesiredPool pool, Optional<Instant> recheckAt) implements PoolOutcome {
    public Publish {
      Objects.requireNonNull(pool, "pool");
      Objects.requireNonNull(recheckAt, "recheckAt");
    }
  }
}
