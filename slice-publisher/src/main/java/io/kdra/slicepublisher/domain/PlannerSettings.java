package io.kdra.slicepublisher.domain;

import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.Set;

/**
 * The configuration the pure planning reads, as plain values (see {@code PublisherConfig} for what
 * each means). Immutable.
 *
 * @param drivers driver names served
 * @param unhealthyTaintKey taint key for unhealthy devices
 * @param unhealthyTaintEffect its effect
 * @param staleTaintKey taint key for devices of a driver that stopped reporting
 * @param staleTaintEffect its effect
 * @param staleTaintAfter silence after which the stale taint is added
 * @param staleRemoveAfter silence after which the pool is removed
 * @param disconnectedTaintAfter time since the driver's stream ended after which the stale taint is
 *     added (with the value {@code disconnected})
 * @param staleDiscoveryIntervals how many of its discovery intervals a snapshot's discovery may be
 *     old before the stale taint is added (with the value {@code discovery-stale})
 * @param nodeLabelAttributes node label keys copied into device attributes
 * @param networkPools network-attached pools
 */
public record PlannerSettings(
    Set<String> drivers,
    String unhealthyTaintKey,
    String unhealthyTaintEffect,
    String staleTaintKey,
    String staleTaintEffect,
    Duration staleTaintAfter,
    Duration staleRemoveAfter,
    Duration disconnectedTaintAfter,
    List<String> nodeLabelAttributes,
    List<NetworkPoolSpec> networkPools,
    int staleDiscoveryIntervals) {

  /** The shipped number of discovery intervals before a discovery counts as stale. */
  public static final int DEFAULT_STALE_DISCOVERY_INTERVALS = 6;

  /** With the shipped {@link #DEFAULT_STALE_DISCOVERY_INTERVALS}. */
  public PlannerSettings(
      Set<String> drivers,
      String unhealthyTaintKey,
      String unhealthyTaintEffect,
      String staleTaintKey,
      String staleTaintEffect,
      Duration staleTaintAfter,
      Duration staleRemoveAfter,
      Duration disconnectedTaintAfter,
      List<String> nodeLabelAttributes,
      List<NetworkPoolSpec> networkPools) {
    this(
        drivers,
        unhealthyTaintKey,
        unhealthyTaintEffect,
        staleTaintKey,
        staleTaintEffect,
        staleTaintAfter,
        staleRemoveAfter,
        disconnectedTaintAfter,
        nodeLabelAttributes,
        networkPools,
        DEFAULT_STALE_DISCOVERY_INTERVALS);
  }

  public PlannerSettings {
    if (staleDiscoveryIntervals < 1) {
      throw new IllegalArgumentException(
          "kdra.slice-publisher.stale.discovery-intervals ("
              + staleDiscoveryIntervals
              + ") must be at least 1");
    }
    drivers = Set.copyOf(drivers);
    Objects.requireNonNull(unhealthyTaintKey, "unhealthyTaintKey");
    Objects.requireNonNull(unhealthyTaintEffect, "unhealthyTaintEffect");
    Objects.requireNonNull(staleTaintKey, "staleTaintKey");
    Objects.requireNonNull(staleTaintEffect, "staleTaintEffect");
    Objects.requireNonNull(staleTaintAfter, "staleTaintAfter");
    Objects.requireNonNull(staleRemoveAfter, "staleRemoveAfter");
    Objects.requireNonNull(disconnectedTaintAfter, "disconnectedTaintAfter");
    if (staleRemoveAfter.compareTo(staleTaintAfter) <= 0) {
      throw new IllegalArgumentException(
          "kdra.slice-publisher.stale.remove-after ("
              + staleRemoveAfter
              + ") must be longer than kdra.slice-publisher.stale.taint-after ("
              + staleTaintAfter
              + ")");
    }
    nodeLabelAttributes = List.copyOf(nodeLabelAttributes);
    networkPools = List.copyOf(networkPools);
  }

  /** Defaults as shipped, for tests and benchmarks. */
  public static PlannerSettings defaults(String... drivers) {
    return new PlannerSettings(
        Set.of(drivers),
        "kdra.io/unhealthy",
        "NoSchedule",
        "kdra.io/driver-unresponsive",
        "NoSchedule",
        Duration.ofMinutes(2),
        Duration.ofMinutes(10),
        Duration.ofSeconds(20),
        List.of(),
        List.of());
  }

  public PlannerSettings withNodeLabelAttributes(List<String> keys) {
    return new PlannerSettings(
        drivers,
        unhealthyTaintKey,
        unhealthyTaintEffect,
        staleTaintKey,
        staleTaintEffect,
        staleTaintAfter,
        staleRemoveAfter,
        disconnectedTaintAfter,
        keys,
        networkPools,
        staleDiscoveryIntervals);
  }

  public PlannerSettings withNetworkPools(List<NetworkPoolSpec> pools) {
    return new PlannerSettings(
        drivers,
        unhealthyTaintKey,
        unhealthyTaintEffect,
        staleTaintKey,
        staleTaintEffect,
        staleTaintAfter,
        staleRemoveAfter,
        disconnectedTaintAfter,
        nodeLabelAttributes,
        pools,
        staleDiscoveryIntervals);
  }

  public PlannerSettings withDisconnectedTaintAfter(Duration after) {
    return new PlannerSettings(
        drivers,
        unhealthyTaintKey,
        unhealthyTaintEffect,
        staleTaintKey,
        staleTaintEffect,
        staleTaintAfter,
        staleRemoveAfter,
        after,
        nodeLabelAttributes,
        networkPools,
        staleDiscoveryIntervals);
  }

  public PlannerSettings withStaleDiscoveryIntervals(int intervals) {
    return new PlannerSettings(
        drivers,
        unhealthyTaintKey,
        unhealthyTaintEffect,
        staleTaintKey,
        staleTaintEffect,
        staleTaintAfter,
        staleRemoveAfter,
        disconnectedTaintAfter,
        nodeLabelAttributes,
        networkPools,
        intervals);
  }

  /** The network pool that the snapshots of {@code driver} on {@code node} feed, if any. */
  public Optional<NetworkPoolSpec> networkPoolFedBy(String driver, String node) {
    return networkPools.stream()
        .filter(p -> p.driver().equals(driver) && p.sourceNode().equals(node))
        .findFirst();
  }

  /** A network-attached pool: devices reported on {@code sourceNode}, reachable elsewhere. */
  public record NetworkPoolSpec(
      String name, String driver, String sourceNode, Map<String, String> nodeSelector) {
    public NetworkPoolSpec {
      Objects.requireNonNull(name, "name");
      Objects.requireNonNull(driver, "driver");
      Objects.requireNonNull(sourceNode, "sourceNode");
      nodeSelector = nodeSelector == null ? Map.of() : Map.copyOf(nodeSelector);
    }
  }
}
