package io.kdra.core.alloc;

import io.fabric8.kubernetes.api.model.Node;
import io.fabric8.kubernetes.api.model.resource.v1.Counter;
import io.fabric8.kubernetes.api.model.resource.v1.CounterSet;
import io.fabric8.kubernetes.api.model.resource.v1.DeviceCounterConsumption;
import io.kdra.core.model.Quantity;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * Gathers the pools visible from a node, as upstream's {@code GatherPools} (1.37): slice visibility
 * by {@code nodeName}, {@code allNodes}, {@code nodeSelector} or per-device node selection, for
 * slices with shared counters too (a pool's counter slices that the node does not see are read when
 * its devices need them, see {@link #build}); only the newest generation of a pool counts; a pool
 * is incomplete when fewer slices exist than {@code resourceSliceCount} (checking also slices that
 * do not target the node), and invalid when device names repeat or a device consumes an unknown
 * counter. Pools come sorted by driver then pool name, slices by name; pools with binding-condition
 * devices go last. With DRADeviceCompatibilityGroups off, slices whose devices declare
 * compatibility groups are ignored, as 1.37 ignores them (the allocator could not check them):
 * their pools become incomplete, which also keeps the pools' other devices from being allocated.
 */
final class PoolGatherer {

  private PoolGatherer() {}

  /** Pools for {@code node}; a null node means every slice is visible (cluster-wide view). */
  static List<Pool> gather(DeviceInventory inventory, Node node, AllocatorFeatures features) {
    List<SliceInfo> candidates =
        node == null ? inventory.slices() : inventory.candidateSlices(node.getMetadata().getName());
    Map<String, List<SliceInfo>> byPool = new LinkedHashMap<>();
    for (SliceInfo s : candidates) {
      if (!features.partitionableDevices()
          && (s.perDeviceNodeSelection() || s.hasSharedCounters())) {
        continue;
      }
      if (!features.compatibilityGroups() && s.usesCompatibilityGroups()) {
        continue;
      }
      if (!visible(s, node)) {
        continue;
      }
      String key = s.driver() + "\u0000" + s.poolName();
      List<SliceInfo> current = byPool.get(key);
      if (current == null || s.generation() > current.get(0).generation()) {
        current = new ArrayList<>();
        byPool.put(key, current);
      } else if (s.generation() < current.get(0).generation()) {
        continue;
      }
      current.add(s);
    }
    List<Pool> pools = new ArrayList<>();
    for (List<SliceInfo> slices : byPool.values()) {
      Pool pool = build(inventory, slices, features);
      if (pool != null) {
        pools.add(pool);
      }
    }
    Comparator<Pool> order = Comparator.comparing(Pool::driver).thenComparing(Pool::name);
    if (features.bindingConditions()) {
      order = Comparator.comparing(Pool::hasBindingConditions).thenComparing(order);
    }
    pools.sort(order);
    return List.copyOf(pools);
  }

  private static boolean visible(SliceInfo s, Node node) {
    if (node == null) {
      return true;
    }
    if (s.nodeName() != null) {
      return s.nodeName().equals(node.getMetadata().getName());
    }
    if (s.allNodes()) {
      return true;
    }
    if (s.nodeSelector() != null) {
      return NodeSelectors.matches(s.nodeSelector(), node);
    }
    if (s.perDeviceNodeSelection()) {
      for (CandidateDevice d : s.devices()) {
        if (deviceVisible(d, node)) {
          return true;
        }
      }
    }
    return false;
  }

  /** Per-device node selection; a null node (cluster-wide view) sees every device. */
  static boolean deviceVisible(CandidateDevice d, Node node) {
    if (node == null) {
      return true;
    }
    var dev = d.device();
    if (dev.getNodeName() != null && !dev.getNodeName().isEmpty()) {
      return dev.getNodeName().equals(node.getMetadata().getName());
    }
    if (Boolean.TRUE.equals(dev.getAllNodes())) {
      return true;
    }
    return dev.getNodeSelector() != null && NodeSelectors.matches(dev.getNodeSelector(), node);
  }

  private static Pool build(
      DeviceInventory inventory, List<SliceInfo> visible, AllocatorFeatures features) {
    SliceInfo first = visible.get(0);
    long generation = first.generation();
    long count = first.resourceSliceCount();
    List<SliceInfo> allOfGeneration = visible;
    if (visible.size() != count) {
      allOfGeneration = new ArrayList<>();
      for (SliceInfo s : inventory.poolSlices(first.driver(), first.poolName())) {
        if (!features.compatibilityGroups() && s.usesCompatibilityGroups()) {
          continue; // ignored as above, so that it does not count towards completeness
        }
        if (s.generation() > generation) {
          return null; // being replaced by a newer generation that does not target this node
        }
        if (s.generation() == generation) {
          allOfGeneration.add(s);
        }
      }
      if (allOfGeneration.size() != count) {
        return new Pool(
            first.driver(),
            first.poolName(),
            true,
            null,
            allOfGeneration.size(),
            count,
            List.of(),
            List.of(),
            Map.of(),
            new Pool.Exhaustion());
      }
    }
    List<SliceInfo> deviceSlices = new ArrayList<>();
    List<SliceInfo> counterSlices = new ArrayList<>();
    for (SliceInfo s : visible) {
      (features.partitionableDevices() && s.hasSharedCounters() ? counterSlices : deviceSlices)
          .add(s);
    }
    deviceSlices.sort(Comparator.comparing(SliceInfo::name));
    Set<SliceInfo> visibleSet = new HashSet<>(visible);
    List<SliceInfo> other = new ArrayList<>();
    for (SliceInfo s : allOfGeneration) {
      if (!visibleSet.contains(s) && !s.hasSharedCounters()) {
        other.add(s);
      }
      if (!visibleSet.contains(s) && s.hasSharedCounters() && features.partitionableDevices()) {
        counterSlices.add(s);
      }
    }
    String invalid = duplicateDevice(deviceSlices);
    Map<String, Map<String, Quantity>> counterSets = new HashMap<>();
    if (invalid == null && features.partitionableDevices()) {
      invalid = collectCounterSets(counterSlices, counterSets);
      if (invalid == null) {
        invalid = danglingCounter(deviceSlices, counterSets);
      }
      if (invalid == null) {
        invalid = danglingCounter(other, counterSets);
      }
    }
    return new Pool(
        first.driver(),
        first.poolName(),
        false,
        invalid,
        allOfGeneration.size(),
        count,
        List.copyOf(deviceSlices),
        List.copyOf(other),
        Map.copyOf(counterSets),
        new Pool.Exhaustion());
  }

  private static String duplicateDevice(List<SliceInfo> slices) {
    Set<String> seen = new HashSet<>();
    for (SliceInfo s : slices) {
      for (CandidateDevice d : s.devices()) {
        if (!seen.add(d.device().getName())) {
          return "duplicate device name " + d.device().getName();
        }
      }
    }
    return null;
  }

  private static String collectCounterSets(
      List<SliceInfo> slices, Map<String, Map<String, Quantity>> out) {
    for (SliceInfo s : slices) {
      for (CounterSet set : s.slice().getSpec().getSharedCounters()) {
        if (out.containsKey(set.getName())) {
          return "duplicate counter set name " + set.getName();
        }
        Map<String, Quantity> counters = new HashMap<>();
        if (set.getCounters() != null) {
          for (Map.Entry<String, Counter> c : set.getCounters().entrySet()) {
            counters.put(c.getKey(), Quantities.of(c.getValue().getValue()));
          }
        }
        out.put(set.getName(), Map.copyOf(counters));
      }
    }
    return null;
  }

  private static String danglingCounter(
      List<SliceInfo> slices, Map<String, Map<String, Quantity>> sets) {
    for (SliceInfo s : slices) {
      for (CandidateDevice d : s.devices()) {
        if (!d.consumesCounters()) {
          continue;
        }
        for (DeviceCounterConsumption c : d.device().getConsumesCounters()) {
          Map<String, Quantity> set = sets.get(c.getCounterSet());
          if (set == null) {
            return "counter set " + c.getCounterSet() + " not found";
          }
          if (c.getCounters() != null) {
            for (String name : c.getCounters().keySet()) {
              if (!set.containsKey(name)) {
                return "counter " + name + " not found in counter set " + c.getCounterSet();
              }
            }
          }
        }
      }
    }
    return null;
  }
}
