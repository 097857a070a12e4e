package io.kdra.core.alloc;

import io.fabric8.kubernetes.api.model.resource.v1.DeviceCounterConsumption;
import io.kdra.core.model.NewerFields;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.IdentityHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * The {@code compatibilityGroups} rule (DRADeviceCompatibilityGroups, 1.37 alpha) during one
 * search, as upstream's experimental allocator keeps it: per pool and counter set, the intersection
 * of the groups of every device drawing on the set, the allocated ones (groups read from their
 * slices) and those picked so far. A device is admitted when, for each set it draws on, the set has
 * no device yet, or the device and all others declare no groups, or its groups meet the
 * intersection. A device without groups never goes with one that declares some.
 */
final class CompatibilityGroups {

  /** The running state of one counter set; {@code groups} is null while all declared none. */
  private record Intersection(Set<String> groups) {}

  private final AllocatedState allocated;
  private final Map<Pool, Map<String, Intersection>> baseline = new IdentityHashMap<>();
  private final Map<Pool, Map<String, Intersection>> running = new IdentityHashMap<>();

  CompatibilityGroups(AllocatedState allocated) {
    this.allocated = allocated;
  }

  /**
   * Folds the device's groups into its counter sets' intersections; null (and nothing changed) when
   * it is not admitted, else what {@link #restore} needs to undo it.
   */
  List<Runnable> tryConsume(Pool pool, CandidateDevice d) {
    Map<String, Intersection> sets = running.computeIfAbsent(pool, p -> new HashMap<>());
    Map<String, Intersection> base = baselineFor(pool);
    List<Runnable> undo = new ArrayList<>();
    for (DeviceCounterConsumption c : d.device().getConsumesCounters()) {
      String set = c.getCounterSet();
      boolean existed = sets.containsKey(set);
      Intersection current = existed ? sets.get(set) : base.get(set);
      Set<String> groups = Set.copyOf(NewerFields.compatibilityGroups(c));
      if (!admits(current, groups)) {
        restore(undo);
        return null;
      }
      Intersection before = sets.get(set);
      undo.add(existed ? () -> sets.put(set, before) : () -> sets.remove(set));
      sets.put(set, add(current, groups));
    }
    return undo;
  }

  /** Undoes a {@link #tryConsume}, last change first. */
  static void restore(List<Runnable> undo) {
    for (int i = undo.size() - 1; i >= 0; i--) {
      undo.get(i).run();
    }
  }

  private static boolean admits(Intersection current, Set<String> groups) {
    if (current == null) {
      return true;
    }
    if (groups.isEmpty() || current.groups() == null) {
      return groups.isEmpty() && current.groups() == null;
    }
    return current.groups().stream().anyMatch(groups::contains);
  }

  private static Intersection add(Intersection current, Set<String> groups) {
    if (current == null) {
      return new Intersection(groups.isEmpty() ? null : groups);
    }
    if (current.groups() == null || groups.isEmpty()) {
      return current;
    }
    Set<String> both = new HashSet<>(current.groups());
    both.retainAll(groups);
    return new Intersection(Set.copyOf(both));
  }

  /** What the allocated devices of the pool, on every slice of it, contribute; computed once. */
  private Map<String, Intersection> baselineFor(Pool pool) {
    return baseline.computeIfAbsent(
        pool,
        p -> {
          Map<String, Intersection> out = new HashMap<>();
          for (var slices : List.of(p.slices(), p.otherSlices())) {
            for (SliceInfo s : slices) {
              for (CandidateDevice d : s.devices()) {
                if (!d.consumesCounters() || !allocated.holdsCounters(d.id())) {
                  continue;
                }
                for (DeviceCounterConsumption c : d.device().getConsumesCounters()) {
                  Set<String> groups = Set.copyOf(NewerFields.compatibilityGroups(c));
                  out.put(c.getCounterSet(), add(out.get(c.getCounterSet()), groups));
                }
              }
            }
          }
          return out;
        });
  }
}
