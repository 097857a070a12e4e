package io.kdra.benchmarks;

import io.fabric8.kubernetes.api.model.Quantity;
import io.fabric8.kubernetes.api.model.resource.v1.Device;
import io.fabric8.kubernetes.api.model.resource.v1.DeviceAttributeBuilder;
import io.fabric8.kubernetes.api.model.resource.v1.DeviceBuilder;
import io.fabric8.kubernetes.api.model.resource.v1.DeviceCapacityBuilder;
import io.fabric8.kubernetes.api.model.resource.v1.ResourceSlice;
import io.kdra.slicepublisher.domain.InventoryDevice;
import io.kdra.slicepublisher.domain.NodeInfo;
import io.kdra.slicepublisher.domain.NodeInventory;
import io.kdra.slicepublisher.domain.PlannerSettings;
import io.kdra.slicepublisher.domain.PoolKey;
import io.kdra.slicepublisher.domain.PoolSyncPlanner;
import io.kdra.slicepublisher.domain.SlicePlanner;
import io.kdra.slicepublisher.domain.SliceWrite;
import java.time.Instant;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;

/**
 * A simulated fleet for the publisher benchmarks: N nodes with D GPUs each, the publisher's pure
 * planning and diff, and an in-memory API server that stores what it is sent and counts writes. Not
 * thread-safe.
 */
final class PublisherFleet {

  static final String DRIVER = "gpu.kdra.io";

  final SlicePlanner planner =
      new SlicePlanner(
          PlannerSettings.defaults(DRIVER)
              .withNodeLabelAttributes(List.of("topology.kubernetes.io/zone")));
  final Map<String, NodeInfo> nodes = new LinkedHashMap<>();
  final Map<String, NodeInventory> inventories = new LinkedHashMap<>();

  /** The "API server": stored slices per pool. */
  final Map<PoolKey, Map<String, ResourceSlice>> stored = new HashMap<>();

  long writes;
  private long resourceVersion = 1;

  PublisherFleet(int nodeCount, int devicesPerNode, Instant reportedAt) {
    for (int n = 0; n < nodeCount; n++) {
      String name = String.format("node-%05d", n);
      nodes.put(
          name,
          new NodeInfo(
              name, "uid-" + name, Map.of("topology.kubernetes.io/zone", "zone-" + (n % 3))));
      List<InventoryDevice> devices = new ArrayList<>();
      for (int d = 0; d < devicesPerNode; d++) {
        devices.add(new InventoryDevice(gpu(name, d), true, ""));
      }
      inventories.put(name, new NodeInventory(DRIVER, name, 1, devices, List.of(), reportedAt));
    }
  }

  private static Device gpu(String node, int index) {
    return new DeviceBuilder()
        .withName("gpu-" + index)
        .addToAttributes("model", new DeviceAttributeBuilder().withString("H100").build())
        .addToAttributes(
            "uuid", new DeviceAttributeBuilder().withString("GPU-" + node + "-" + index).build())
        .addToAttributes(
            "driverVersion", new DeviceAttributeBuilder().withVersion("550.54.15").build())
        .addToAttributes("index", new DeviceAttributeBuilder().withInt((long) index).build())
        .addToCapacity(
            "memory", new DeviceCapacityBuilder().withValue(new Quantity("80Gi")).build())
        .build();
  }

  /** Every node reports again at {@code when} with unchanged devices (a heartbeat). */
  void heartbeat(Instant when) {
    inventories.replaceAll((node, inventory) -> inventory.seenAt(when));
  }

  /** Replaces one node's inventory, e.g. to mark a device unhealthy. */
  void report(NodeInventory inventory) {
    inventories.put(inventory.nodeName(), inventory);
  }

  /** One pass over every pool, as a resync does: plan, diff, store. Returns writes issued. */
  long syncAll(Instant now) {
    long before = writes;
    for (NodeInventory inventory : inventories.values()) {
      PoolKey key = planner.poolKeyOf(inventory.driver(), inventory.nodeName());
      Map<String, ResourceSlice> pool = stored.computeIfAbsent(key, k -> new LinkedHashMap<>());
      var plan =
          PoolSyncPlanner.plan(
              planner.planPool(inventory, nodes.get(inventory.nodeName()), now),
              new ArrayList<>(pool.values()));
      apply(pool, plan.writes());
    }
    return writes - before;
  }

  private void apply(Map<String, ResourceSlice> pool, List<SliceWrite> plan) {
    for (SliceWrite w : plan) {
      writes++;
      if (w instanceof SliceWrite.Delete d) {
        pool.remove(d.name());
        continue;
      }
      ResourceSlice s =
          w instanceof SliceWrite.Create c ? c.slice() : ((SliceWrite.Update) w).slice();
      s.getMetadata().setResourceVersion(String.valueOf(resourceVersion++));
      s.getMetadata().setUid("uid-" + s.getMetadata().getName());
      pool.put(s.getMetadata().getName(), s);
    }
  }

  /** Plans and diffs one pool against what is stored without storing anything. */
  int planOnly(String node, Instant now) {
    NodeInventory inventory = inventories.get(node);
    PoolKey key = planner.poolKeyOf(inventory.driver(), node);
    return PoolSyncPlanner.plan(
            planner.planPool(inventory, nodes.get(node), now),
            new ArrayList<>(stored.getOrDefault(key, Map.of()).values()))
        .writes()
        .size();
  }

  Optional<NodeInfo> node(String name) {
    return Optional.ofNullable(nodes.get(name));
  }
}
