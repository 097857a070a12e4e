package io.kdra.slicepublisher.domain;

import io.fabric8.kubernetes.api.model.resource.v1.CounterSet;
import java.time.Instant;
import java.util.List;
import java.util.Objects;
import java.util.Optional;

/**
 * The latest accepted snapshot of one driver on one node, already validated and converted to the
 * API model. Immutable; the lists are never modified after construction.
 *
 * @param driver the DRA driver name
 * @param nodeName the node the devices belong to (for a network-attached pool: the node whose
 *     driver instance reports them)
 * @param sequence the snapshot's sequence number
 * @param devices the devices, without taints (the planner adds them), in any order
 * @param sharedCounters counter sets that devices consume from
 * @param receivedAt when the publisher accepted the snapshot (heartbeats refresh it)
 * @param disconnectedAt when the stream that sent it ended, if it has (the driver is gone or
 *     restarting; a new stream's snapshot replaces this one)
 */
public record NodeInventory(
    String driver,
    String nodeName,
    long sequence,
    List<InventoryDevice> devices,
    List<CounterSet> sharedCounters,
    Instant receivedAt,
    Optional<Instant> disconnectedAt) {

  /** A snapshot whose stream is open. */
  public NodeInventory(
      String driver,
      String nodeName,
      long sequence,
      List<InventoryDevice> devices,
      List<CounterSet> sharedCounters,
      Instant receivedAt) {
    this(driver, nodeName, sequence, devices, sharedCounters, receivedAt, Optional.empty());
  }

  public NodeInventory {
    Objects.requireNonNull(driver, "driver");
    Objects.requireNonNull(nodeName, "nodeName");
    devices = List.copyOf(devices);
    sharedCounters = List.copyOf(sharedCounters);
    Objects.requireNonNull(receivedAt, "receivedAt");
    Objects.requireNonNull(disconnectedAt, "disconnectedAt");
  }

  /** The same snapshot, seen again at {@code when}. */
  public NodeInventory seenAt(Instant when) {
    return new NodeInventory(
        driver, nodeName, sequence, devices, sharedCounters, when, disconnectedAt);
  }

  /** The same snapshot, its stream having ended at {@code when}. */
  public NodeInventory disconnectedAt(Instant when) {
    return new NodeInventory(
        driver, nodeName, sequence, devices, sharedCounters, receivedAt, Optional.of(when));
  }
}
