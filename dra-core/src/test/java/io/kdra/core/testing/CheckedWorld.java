package io.kdra.core.testing;

import io.fabric8.kubernetes.api.model.Node;
import io.fabric8.kubernetes.api.model.NodeSelector;
import io.fabric8.kubernetes.api.model.resource.v1.CounterSet;
import io.fabric8.kubernetes.api.model.resource.v1.Device;
import io.fabric8.kubernetes.api.model.resource.v1.DeviceClass;
import io.fabric8.kubernetes.api.model.resource.v1.ResourceSlice;
import io.kdra.core.model.Quantity;
import java.util.ArrayList;
import java.util.Collection;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;

/**
 * The world {@link AllocationChecker} checks against: classes, nodes, and the devices of each
 * pool's newest generation, with where each can be used from. Built once; read-only after.
 */
final class CheckedWorld {

  /** A device of a pool's newest generation. */
  record Entry(String driver, String pool, ResourceSlice slice, Device device, boolean complete) {
    String id() {
      return driver + "/" + pool + "/" + device.getName();
    }
  }

  final Map<String, DeviceClass> classes = new HashMap<>();
  final Map<String, Node> nodes = new HashMap<>();

  /** driver/pool -> the newest generation's slices. */
  private final Map<String, List<ResourceSlice>> pools = new LinkedHashMap<>();

  private final Map<String, Entry> devices = new HashMap<>();

  CheckedWorld(List<DeviceClass> classes, List<ResourceSlice> slices, List<Node> nodes) {
    classes.forEach(c -> this.classes.put(c.getMetadata().getName(), c));
    nodes.forEach(n -> this.nodes.put(n.getMetadata().getName(), n));
    Map<String, Long> newest = new HashMap<>();
    for (ResourceSlice s : slices) {
      newest.merge(poolKey(s), s.getSpec().getPool().getGeneration(), Math::max);
    }
    for (ResourceSlice s : slices) {
      if (s.getSpec().getPool().getGeneration().equals(newest.get(poolKey(s)))) {
        pools.computeIfAbsent(poolKey(s), k -> new ArrayList<>()).add(s);
      }
    }
    for (List<ResourceSlice> pool : pools.values()) {
      boolean complete = pool.size() == pool.get(0).getSpec().getPool().getResourceSliceCount();
      for (ResourceSlice s : pool) {
        if (s.getSpec().getDevices() == null) {
          continue;
        }
        for (Device d : s.getSpec().getDevices()) {
          Entry e =
              new Entry(s.getSpec().getDriver(), s.getSpec().getPool().getName(), s, d, complete);
          devices.put(e.id(), e);
        }
      }
    }
  }

  private static String poolKey(ResourceSlice s) {
    return s.getSpec().getDriver() + "/" + s.getSpec().getPool().getName();
  }

  /** The device with this driver/pool/name id in its pool's newest generation, or null. */
  Entry device(String id) {
    return devices.get(id);
  }

  Collection<Entry> devices() {
    return devices.values();
  }

  /** The nodes in name order. */
  Map<String, Node> sortedNodes() {
    return new TreeMap<>(nodes);
  }

  /** Null when the device can be used from the node, else why not. */
  String reachable(Entry e, String node) {
    var spec = e.slice().getSpec();
    String local = spec.getNodeName();
    NodeSelector selector = spec.getNodeSelector();
    boolean all = Boolean.TRUE.equals(spec.getAllNodes());
    if (Boolean.TRUE.equals(spec.getPerDeviceNodeSelection())) {
      local = e.device().getNodeName();
      selector = e.device().getNodeSelector();
      all = Boolean.TRUE.equals(e.device().getAllNodes());
    }
    if (all) {
      return null;
    }
    if (local != null && !local.isEmpty()) {
      return local.equals(node)
          ? null
          : "is local to node " + local + ", the claim is for node " + node;
    }
    if (selector != null) {
      if (node == null) {
        return null; // the allocation's own node selector carries the restriction
      }
      Node n = nodes.get(node);
      return n != null && NodeRules.selects(selector, n)
          ? null
          : "is not reachable from node " + node;
    }
    return "is reachable from no node";
  }

  /** Whether the device is reachable from every node (its slice's or its own allNodes). */
  static boolean everywhere(Entry e) {
    var spec = e.slice().getSpec();
    return Boolean.TRUE.equals(spec.getPerDeviceNodeSelection())
        ? Boolean.TRUE.equals(e.device().getAllNodes())
        : Boolean.TRUE.equals(spec.getAllNodes());
  }

  /** The amount of a driver/pool/set/counter shared counter, or null when there is none. */
  Quantity capacityOfCounter(String key) {
    String[] p = key.split("/");
    List<ResourceSlice> pool = pools.get(p[0] + "/" + p[1]);
    if (pool == null) {
      return null;
    }
    for (ResourceSlice s : pool) {
      if (s.getSpec().getSharedCounters() == null) {
        continue;
      }
      for (CounterSet set : s.getSpec().getSharedCounters()) {
        if (set.getName().equals(p[2])
            && set.getCounters() != null
            && set.getCounters().containsKey(p[3])) {
          return Quantity.parse(set.getCounters().get(p[3]).getValue().toString());
        }
      }
    }
    return null;
  }
}
