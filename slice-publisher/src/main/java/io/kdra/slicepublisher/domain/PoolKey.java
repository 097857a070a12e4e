package io.kdra.slicepublisher.domain;

import java.util.Objects;

/**
 * Identifies a pool: the driver and the pool name. Pool names are unique per driver, so this is the
 * unit of work of the syncer (upstream's controller keys its queue the same way).
 *
 * @param driver the DRA driver name
 * @param pool the pool name: the node name for node-local pools
 */
public record PoolKey(String driver, String pool) {

  public PoolKey {
    Objects.requireNonNull(driver, "driver");
    Objects.requireNonNull(pool, "pool");
  }

  @Override
  public String toString() {
    return driver + "/" + pool;
  }
}
