package io.kdra.core.testing;

import static io.kdra.core.testing.ClaimKeys.id;
import static io.kdra.core.testing.ClaimKeys.key;
import static io.kdra.core.testing.ClaimKeys.results;

import io.fabric8.kubernetes.api.model.resource.v1.DeviceCounterConsumption;
import io.fabric8.kubernetes.api.model.resource.v1.DeviceRequestAllocationResult;
import io.fabric8.kubernetes.api.model.resource.v1.ResourceClaim;
import io.kdra.core.model.NewerFields;
import io.kdra.core.model.Quantity;
import io.kdra.core.testing.CheckedWorld.Entry;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;

/**
 * The usage rules: who holds each exclusive device, what shares of shareable devices consume, and
 * what devices take of their shared counters, over the claims allocated before the run and those of
 * the run; then no capacity and no counter exceeded, and the devices on each counter set compatible
 * (1.37 alpha {@code compatibilityGroups}: all without groups, or groups with a common one).
 * adminAccess results use nothing.
 */
final class DeviceUsage {

  /** Exclusive device id -> the claim that holds it. */
  private final Map<String, String> taken = new HashMap<>();

  /** Shareable device id -> capacity consumed by its shares. */
  private final Map<String, Map<String, Quantity>> shared = new HashMap<>();

  /** Devices whose counters are counted already (once per device, however many shares). */
  private final Set<String> counted = new HashSet<>();

  /** driver/pool/set/counter -> consumed. */
  private final Map<String, Quantity> counters = new TreeMap<>();

  /** driver/pool/set -> the groups of each device counted on it, those allocated before first. */
  private final Map<String, List<List<String>>> groups = new TreeMap<>();

  /** driver/pool/set -> how many of its devices were allocated before the run. */
  private final Map<String, Integer> groupsBefore = new HashMap<>();

  /** Records the devices of the claims allocated before the run. */
  void allocatedBefore(List<ResourceClaim> before, CheckedWorld world) {
    for (ResourceClaim c : before) {
      for (DeviceRequestAllocationResult r : results(c)) {
        String id = id(r);
        Entry e = world.device(id);
        if (r.getShareID() != null) {
          share(id, r.getConsumedCapacity());
        } else if (!Boolean.TRUE.equals(r.getAdminAccess())) {
          taken.put(id, key(c) + " (allocated before)");
        }
        if (e != null && !Boolean.TRUE.equals(r.getAdminAccess())) {
          count(e);
        }
      }
    }
    groups.forEach((k, v) -> groupsBefore.put(k, v.size()));
  }

  /** A share of a shareable device consumes this capacity. */
  void share(String id, Map<String, io.fabric8.kubernetes.api.model.Quantity> consumed) {
    addAll(shared.computeIfAbsent(id, k -> new HashMap<>()), consumed);
  }

  /** Takes an exclusive device for {@code claim}; the claim that held it already, or null. */
  String take(String id, String claim) {
    return taken.putIfAbsent(id, claim);
  }

  /** The device consumes its counters, unless it was counted already. */
  void count(Entry e) {
    if (counted.add(e.id())) {
      consume(e, counters);
      if (e.device().getConsumesCounters() != null) {
        for (DeviceCounterConsumption c : e.device().getConsumesCounters()) {
          groups
              .computeIfAbsent(
                  e.driver() + "/" + e.pool() + "/" + c.getCounterSet(), k -> new ArrayList<>())
              .add(NewerFields.compatibilityGroups(c));
        }
      }
    }
  }

  /** Capacity and counters consumed beyond what the devices and pools have. */
  void checkLimits(CheckedWorld world, List<String> out) {
    checkShares(world, out);
    groups.forEach(
        (set, all) -> {
          int before = groupsBefore.getOrDefault(set, 0);
          // only devices of the run are checked, against a consistent state before it
          if (all.size() > before && compatible(all.subList(0, before)) && !compatible(all)) {
            out.add("counter set " + set + ": compatibility groups do not meet: " + all);
          }
        });
    counters.forEach(
        (k, used) -> {
          Quantity have = world.capacityOfCounter(k);
          if (have != null && used.compareTo(have) > 0) {
            out.add("counter " + k + " exceeded: " + used + " consumed of " + have);
          }
        });
  }

  /** Capacity of shareable devices consumed beyond what they have. */
  private void checkShares(CheckedWorld world, List<String> out) {
    new TreeMap<>(shared)
        .forEach(
            (id, used) -> {
              Entry e = world.device(id);
              if (e == null || e.device().getCapacity() == null) {
                return;
              }
              new TreeMap<>(used)
                  .forEach(
                      (name, q) -> {
                        var cap = e.device().getCapacity().get(name);
                        if (cap != null
                            && q.compareTo(Quantity.parse(cap.getValue().toString())) > 0) {
                          out.add(
                              "device "
                                  + id
                                  + ": capacity "
                                  + name
                                  + " exceeded: "
                                  + q
                                  + " consumed of "
                                  + cap.getValue());
                        }
                      });
            });
  }

  /** All without groups, or all with groups and one group common to all. */
  private static boolean compatible(List<List<String>> devices) {
    if (devices.stream().allMatch(List::isEmpty)) {
      return true;
    }
    if (devices.stream().anyMatch(List::isEmpty)) {
      return false;
    }
    Set<String> common = new HashSet<>(devices.get(0));
    devices.forEach(common::retainAll);
    return !common.isEmpty();
  }

  private static void consume(Entry e, Map<String, Quantity> counters) {
    if (e.device().getConsumesCounters() == null) {
      return;
    }
    for (DeviceCounterConsumption c : e.device().getConsumesCounters()) {
      if (c.getCounters() == null) {
        continue;
      }
      c.getCounters()
          .forEach(
              (name, q) ->
                  counters.merge(
                      e.driver() + "/" + e.pool() + "/" + c.getCounterSet() + "/" + name,
                      Quantity.parse(q.getValue().toString()),
                      Quantity::add));
    }
  }

  private static void addAll(
      Map<String, Quantity> into, Map<String, io.fabric8.kubernetes.api.model.Quantity> add) {
    if (add != null) {
      add.forEach((k, v) -> into.merge(k, Quantity.parse(v.toString()), Quantity::add));
    }
  }
}
