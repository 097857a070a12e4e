package io.kdra.core.alloc;

import io.fabric8.kubernetes.api.model.resource.v1.Counter;
import io.fabric8.kubernetes.api.model.resource.v1.DeviceCounterConsumption;
import io.kdra.core.model.Quantity;
import java.util.HashMap;
import java.util.IdentityHashMap;
import java.util.List;
import java.util.Map;

/**
 * Shared-counter bookkeeping for partitionable devices during one search. Available counters of a
 * pool are its counter sets minus what devices already allocated (in {@link AllocatedState})
 * consume, counting devices on every slice of the pool, not only those visible from the node.
 * Devices picked during the search add their consumption; a device fits only when no counter of its
 * pool would drop below zero. Never oversubscribes, including when existing allocations already
 * did.
 */
final class Counters {

  private final AllocatedState allocated;
  private final Map<Pool, Map<String, Map<String, Quantity>>> available = new IdentityHashMap<>();
  private final Map<Pool, Map<String, Map<String, Quantity>>> consumed = new IdentityHashMap<>();

  Counters(AllocatedState allocated) {
    this.allocated = allocated;
  }

  /** Reserves the device's counters; false (and nothing reserved) when they are not available. */
  boolean tryReserve(Pool pool, CandidateDevice d) {
    apply(pool, d, true);
    Map<String, Map<String, Quantity>> avail = availableFor(pool);
    Map<String, Map<String, Quantity>> used = consumed.get(pool);
    for (Map.Entry<String, Map<String, Quantity>> set : avail.entrySet()) {
      Map<String, Quantity> usedSet = used.getOrDefault(set.getKey(), Map.of());
      for (Map.Entry<String, Quantity> c : set.getValue().entrySet()) {
        if (c.getValue().compareTo(usedSet.getOrDefault(c.getKey(), Quantity.ZERO)) < 0) {
          apply(pool, d, false);
          return false;
        }
      }
    }
    return true;
  }

  void release(Pool pool, CandidateDevice d) {
    apply(pool, d, false);
  }

  /** Whether the counters for this device are free right now (for explanations). */
  boolean wouldFit(Pool pool, CandidateDevice d) {
    if (!tryReserve(pool, d)) {
      return false;
    }
    release(pool, d);
    return true;
  }

  private void apply(Pool pool, CandidateDevice d, boolean add) {
    Map<String, Map<String, Quantity>> used = consumed.computeIfAbsent(pool, p -> new HashMap<>());
    for (DeviceCounterConsumption c : d.device().getConsumesCounters()) {
      Map<String, Quantity> set = used.computeIfAbsent(c.getCounterSet(), k -> new HashMap<>());
      if (c.getCounters() == null) {
        continue;
      }
      for (Map.Entry<String, Counter> e : c.getCounters().entrySet()) {
        Quantity q = Quantities.of(e.getValue().getValue());
        set.merge(e.getKey(), add ? q : Quantity.ZERO.subtract(q), Quantity::add);
      }
    }
  }

  private Map<String, Map<String, Quantity>> availableFor(Pool pool) {
    return available.computeIfAbsent(
        pool,
        p -> {
          Map<String, Map<String, Quantity>> avail = new HashMap<>();
          p.counterSets().forEach((name, counters) -> avail.put(name, new HashMap<>(counters)));
          for (var slices : List.of(p.slices(), p.otherSlices())) {
            for (SliceInfo s : slices) {
              for (CandidateDevice d : s.devices()) {
                if (!d.consumesCounters() || !allocated.holdsCounters(d.id())) {
                  continue;
                }
                for (DeviceCounterConsumption c : d.device().getConsumesCounters()) {
                  Map<String, Quantity> set = avail.get(c.getCounterSet());
                  if (set == null || c.getCounters() == null) {
                    continue;
                  }
                  c.getCounters()
                      .forEach(
                          (name, counter) ->
                              set.computeIfPresent(
                                  name,
                                  (k, have) -> have.subtract(Quantities.of(counter.getValue()))));
                }
              }
            }
          }
          return avail;
        });
  }
}
