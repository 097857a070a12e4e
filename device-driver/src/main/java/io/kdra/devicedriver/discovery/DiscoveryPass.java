package io.kdra.devicedriver.discovery;

import java.time.Instant;
import java.util.Objects;

/**
 * The outcome of one discovery pass, successful or not: what device health reporting needs (a
 * failed pass means the devices' health cannot be determined now, which {@link Inventory} alone
 * cannot say).
 *
 * @param inventory the inventory after the pass: the new one, or the previous one when it failed
 * @param discovered whether any pass has ever succeeded
 * @param error why this pass failed; empty when it succeeded
 * @param finishedAt when the pass ended
 */
public record DiscoveryPass(
    Inventory inventory, boolean discovered, String error, Instant finishedAt) {

  public DiscoveryPass {
    Objects.requireNonNull(inventory, "inventory");
    error = error == null ? "" : error;
    Objects.requireNonNull(finishedAt, "finishedAt");
  }

  /** Whether this pass failed. */
  public boolean failed() {
    return !error.isEmpty();
  }
}
