package io.kdra.devicedriver.discovery;

import io.kdra.core.model.AttributeValue;
import io.kdra.core.model.Quantity;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.TreeMap;

/**
 * One device of this node as discovery sees it; no Kubernetes types. Immutable; maps are sorted so
 * that equal inventories compare and serialise equal (the publisher diffs snapshots).
 *
 * @param name DNS label, unique on the node (e.g. {@code gpu-0})
 * @param attributes keys as in a ResourceSlice: a bare id in the driver's domain or {@code
 *     domain/id}
 * @param capacity e.g. {@code memory}
 * @param consumesCounters counter sets of the inventory this device draws from (partitions)
 * @param health whether the device can be used
 * @param healthMessage why it is unhealthy; empty when healthy
 * @param deviceNodes host device nodes a container using this device needs (CDI deviceNodes)
 * @param env environment a container using this device gets (CDI env), e.g. the GPU's UUID
 * @param allowMultipleAllocations whether several claims may get shares of this device, each
 *     consuming part of its capacity (consumable capacity)
 * @param requestPolicies per capacity name, how much one allocation consumes; only for shared
 *     devices
 */
public record NodeDevice(
    String name,
    Map<String, AttributeValue> attributes,
    Map<String, Quantity> capacity,
    List<CounterConsumption> consumesCounters,
    Health health,
    String healthMessage,
    List<String> deviceNodes,
    Map<String, String> env,
    boolean allowMultipleAllocations,
    Map<String, CapacityPolicy> requestPolicies) {

  /** Device health as the publisher reports it (unhealthy devices get a taint). */
  public enum Health {
    HEALTHY,
    UNHEALTHY
  }

  /** What a device consumes from one shared counter set. */
  public record CounterConsumption(String counterSet, Map<String, Quantity> counters) {
    public CounterConsumption {
      counters = Collections.unmodifiableMap(new TreeMap<>(counters));
    }
  }

  public NodeDevice {
    Objects.requireNonNull(name, "name");
    attributes = Collections.unmodifiableMap(new TreeMap<>(attributes));
    capacity = Collections.unmodifiableMap(new TreeMap<>(capacity));
    consumesCounters = List.copyOf(consumesCounters);
    health = health == null ? Health.HEALTHY : health;
    healthMessage = healthMessage == null ? "" : healthMessage;
    deviceNodes = List.copyOf(deviceNodes);
    env = Collections.unmodifiableMap(new TreeMap<>(env));
    requestPolicies = Collections.unmodifiableMap(new TreeMap<>(requestPolicies));
    if (!allowMultipleAllocations && !requestPolicies.isEmpty()) {
      throw new IllegalArgumentException(
          "device " + name + ": request policies need allowMultipleAllocations");
    }
    for (String c : requestPolicies.keySet()) {
      if (!capacity.containsKey(c)) {
        throw new IllegalArgumentException(
            "device " + name + ": request policy for capacity " + c + ", which it does not have");
      }
    }
  }

  /** An exclusive device (one claim at a time). */
  public NodeDevice(
      String name,
      Map<String, AttributeValue> attributes,
      Map<String, Quantity> capacity,
      List<CounterConsumption> consumesCounters,
      Health health,
      String healthMessage,
      List<String> deviceNodes,
      Map<String, String> env) {
    this(
        name,
        attributes,
        capacity,
        consumesCounters,
        health,
        healthMessage,
        deviceNodes,
        env,
        false,
        Map.of());
  }

  /** A healthy device with attributes and capacity only. */
  public static NodeDevice of(
      String name, Map<String, AttributeValue> attributes, Map<String, Quantity> capacity) {
    return new NodeDevice(
        name, attributes, capacity, List.of(), Health.HEALTHY, "", List.of(), Map.of());
  }

  /** This device with a different health. */
  public NodeDevice withHealth(Health newHealth, String message) {
    return new NodeDevice(
        name,
        attributes,
        capacity,
        consumesCounters,
        newHealth,
        message,
        deviceNodes,
        env,
        allowMultipleAllocations,
        requestPolicies);
  }

  /** This device, shared: with these capacities and their request policies. */
  public NodeDevice shared(
      Map<String, Quantity> newCapacity, Map<String, CapacityPolicy> policies) {
    return new NodeDevice(
        name,
        attributes,
        newCapacity,
        consumesCounters,
        health,
        healthMessage,
        deviceNodes,
        env,
        true,
        policies);
  }
}
