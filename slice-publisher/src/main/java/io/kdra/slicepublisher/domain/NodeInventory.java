package io.kdra.slicepublisher.domain;

import io.fabric8.kubernetes.api.model.resource.v1.CounterSet;
import java.time.Duration;
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
 * @param discovery when the driver last discovered these devices, if it says (drivers before the
 *     snapshot's discovery fields do not)
 * @param skipNodeOperations the node operations the devices need not have (the slices' {@code
 *     skipNodeOperations}); empty when they need all
 */
public record NodeInventory(
    String driver,
    String nodeName,
    long sequence,
    List<InventoryDevice> devices,
    List<CounterSet> sharedCounters,
    Instant receivedAt,
    Optional<Instant> disconnectedAt,
    Optional<Discovery> discovery,
    List<String> skipNodeOperations) {

  /**
   * The driver's last successful discovery pass.
   *
   * @param at when it ended, by the publisher's clock (the receipt minus the age the driver said)
   * @param interval how often the driver runs discovery; positive
   */
  public record Discovery(Instant at, Duration interval) {
    public Discovery {
      Objects.requireNonNull(at, "at");
      Objects.requireNonNull(interval, "interval");
    }
  }

  /** A snapshot whose stream is open, without discovery time. */
  public NodeInventory(
      String driver,
      String nodeName,
      long sequence,
      List<InventoryDevice> devices,
      List<CounterSet> sharedCounters,
      Instant receivedAt) {
    this(
        driver,
        nodeName,
        sequence,
        devices,
        sharedCounters,
        receivedAt,
        Optional.empty(),
        Optional.empty(),
        List.of());
  }

  public NodeInventory {
    Objects.requireNonNull(driver, "driver");
    Objects.requireNonNull(nodeName, "nodeName");
    devices = List.copyOf(devices);
    sharedCounters = List.copyOf(sharedCounters);
    Objects.requireNonNull(receivedAt, "receivedAt");
    Objects.requireNonNull(disconnectedAt, "disconnectedAt");
    Objects.requireNonNull(discovery, "discovery");
    skipNodeOperations = List.copyOf(skipNodeOperations);
  }

  /** The same snapshot, seen again at {@code when}. */
  public NodeInventory seenAt(Instant when) {
    return new NodeInventory(
        driver,
        nodeName,
        sequence,
        devices,
        sharedCounters,
        when,
        disconnectedAt,
        discovery,
        skipNodeOperations);
  }

  /** The same snapshot, its stream having ended at {@code when}. */
  public NodeInventory disconnectedAt(Instant when) {
    return new NodeInventory(
        driver,
        nodeName,
        sequence,
        devices,
        sharedCounters,
        receivedAt,
        Optional.of(when),
        discovery,
        skipNodeOperations);
  }

  /** The same snapshot, its devices last discovered at {@code at}, every {@code interval}. */
  public NodeInventory withDiscovery(Instant at, Duration interval) {
    return new NodeInventory(
        driver,
        nodeName,
        sequence,
        devices,
        sharedCounters,
        receivedAt,
        disconnectedAt,
        Optional.of(new Discovery(at, interval)),
        skipNodeOperations);
  }

  /** The same snapshot, its devices needing none of {@code operations} on the node. */
  public NodeInventory withSkipNodeOperations(List<String> operations) {
    return new NodeInventory(
        driver,
        nodeName,
        sequence,
        devices,
        sharedCounters,
        receivedAt,
        disconnectedAt,
        discovery,
        operations);
  }
}
