package io.kdra.core.alloc;

import io.fabric8.kubernetes.api.model.resource.v1.AllocationResult;
import io.fabric8.kubernetes.api.model.resource.v1.DeviceRequestAllocationResult;
import io.fabric8.kubernetes.api.model.resource.v1.ResourceClaim;
import io.kdra.core.model.DeviceId;
import io.kdra.core.model.Quantity;
import java.util.ArrayList;
import java.util.Collection;
import java.util.Collections;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicLong;

/**
 * What existing allocations already hold, as upstream's {@code AllocatedState}: devices allocated
 * exclusively, devices allocated as shares ({@code shareID} set, consumable capacity), and the
 * capacity those shares consume. Results with {@code adminAccess: true} hold nothing, because admin
 * access never blocks other claims.
 *
 * <p>Immutable and thread-safe: {@link #plus} returns a new state and never changes what this one
 * answers. Design choice: allocating one pod after another (the command line, the controller, the
 * benchmark) extends a linear history, so states share one append-only store in which every entry
 * carries the version that added it, and a state sees the entries up to its own version. That makes
 * {@link #plus} O(size of the allocation) and lookups O(1). Extending an older state (a branch)
 * starts a new store layered on the old one up to the branch point: O(1) instead of a copy of every
 * allocated device (which made each pass from a common start pay O(cluster)), lookups look through
 * at most {@link #MAX_LINEAGE} layers, and a deeper branch is flattened into one copy.
 */
public final class AllocatedState {

  /**
   * Append-only entries shared by a linear history of states, over the entries of {@code parent} up
   * to {@code parentVersion} (a branch), if any.
   */
  private static final class Store {
    final ConcurrentHashMap<DeviceId, Long> devices = new ConcurrentHashMap<>();
    final ConcurrentHashMap<DeviceId, Long> shared = new ConcurrentHashMap<>();

    /** Per device: cumulative consumed capacity after each version that changed it. */
    final ConcurrentHashMap<DeviceId, List<Versioned>> capacity = new ConcurrentHashMap<>();

    final AtomicLong latest = new AtomicLong();
    final Store parent;
    final long parentVersion;

    /** Layers below this one. */
    final int depth;

    Store() {
      this(null, 0);
    }

    Store(Store parent, long parentVersion) {
      this.parent = parent;
      this.parentVersion = parentVersion;
      this.depth = parent == null ? 0 : parent.depth + 1;
    }
  }

  /**
   * How many layers a branch may stack before it is flattened into a copy: bounds the lookups (one
   * map per layer) and the older stores a state keeps reachable. The usual branch is one level deep
   * (every pass or batch branching from the same start).
   */
  private static final int MAX_LINEAGE = 4;

  private record Versioned(long version, Map<String, Quantity> total) {}

  private final Store store;
  private final long version;

  private AllocatedState(Store store, long version) {
    this.store = store;
    this.version = version;
  }

  /** Nothing allocated. Each call returns an independent history. */
  public static AllocatedState empty() {
    return new AllocatedState(new Store(), 0);
  }

  /** The state held by the allocations of these claims; claims without allocation add nothing. */
  public static AllocatedState fromClaims(Collection<ResourceClaim> claims) {
    AllocatedState state = empty();
    for (ResourceClaim claim : claims) {
      if (claim.getStatus() != null && claim.getStatus().getAllocation() != null) {
        state = state.plus(claim.getStatus().getAllocation());
      }
    }
    return state;
  }

  /** This state plus what {@code allocation} holds. */
  public AllocatedState plus(AllocationResult allocation) {
    if (allocation == null
        || allocation.getDevices() == null
        || allocation.getDevices().getResults() == null) {
      return this;
    }
    final Store target;
    if (store.latest.compareAndSet(version, version + 1)) {
      target = store;
    } else {
      target = store.depth < MAX_LINEAGE ? new Store(store, version) : flatten();
      target.latest.set(version + 1);
    }
    long v = version + 1;
    Map<DeviceId, Map<String, Quantity>> sums = new HashMap<>();
    for (DeviceRequestAllocationResult r : allocation.getDevices().getResults()) {
      if (Boolean.TRUE.equals(r.getAdminAccess())) {
        continue;
      }
      DeviceId id = new DeviceId(r.getDriver(), r.getPool(), r.getDevice());
      if (r.getShareID() == null || r.getShareID().isEmpty()) {
        target.devices.putIfAbsent(id, v);
        continue;
      }
      target.shared.putIfAbsent(id, v);
      Map<String, Quantity> sum =
          sums.computeIfAbsent(id, k -> new HashMap<>(capacityIn(target, k, version)));
      if (r.getConsumedCapacity() != null) {
        r.getConsumedCapacity()
            .forEach((name, q) -> sum.merge(name, Quantities.of(q), Quantity::add));
      }
    }
    sums.forEach(
        (id, sum) ->
            target
                .capacity
                .computeIfAbsent(id, k -> Collections.synchronizedList(new ArrayList<>()))
                .add(new Versioned(v, Map.copyOf(sum))));
    return new AllocatedState(target, v);
  }

  /** One store without layers holding what this state sees (its entries keep their versions). */
  private Store flatten() {
    Store copy = new Store();
    long upTo = version;
    for (Store s = store; s != null; upTo = Math.min(upTo, s.parentVersion), s = s.parent) {
      long limit = upTo;
      s.devices.forEach(
          (id, v) -> {
            if (v <= limit) {
              copy.devices.putIfAbsent(id, v);
            }
          });
      s.shared.forEach(
          (id, v) -> {
            if (v <= limit) {
              copy.shared.putIfAbsent(id, v);
            }
          });
      s.capacity
          .keySet()
          .forEach(
              id ->
                  copy.capacity.computeIfAbsent(
                      id,
                      k -> {
                        List<Versioned> l = Collections.synchronizedList(new ArrayList<>());
                        Map<String, Quantity> m = capacityIn(store, k, version);
                        if (!m.isEmpty()) {
                          l.add(new Versioned(0, m));
                        }
                        return l;
                      }));
    }
    return copy;
  }

  /** The newest cumulative capacity entry of the device at or before {@code upTo}, any layer. */
  private static Map<String, Quantity> capacityIn(Store store, DeviceId id, long upTo) {
    for (Store s = store; s != null; upTo = Math.min(upTo, s.parentVersion), s = s.parent) {
      List<Versioned> list = s.capacity.get(id);
      if (list == null) {
        continue;
      }
      synchronized (list) {
        for (int i = list.size() - 1; i >= 0; i--) {
          if (list.get(i).version() <= upTo) {
            return list.get(i).total();
          }
        }
      }
    }
    return Map.of();
  }

  /** Whether {@code map}, in this state's layers, holds the device. */
  private boolean holds(boolean sharedMap, DeviceId id) {
    long upTo = version;
    for (Store s = store; s != null; upTo = Math.min(upTo, s.parentVersion), s = s.parent) {
      Long v = (sharedMap ? s.shared : s.devices).get(id);
      if (v != null && v <= upTo) {
        return true;
      }
    }
    return false;
  }

  /**
   * Whether every device this state sees as allocated, {@code other} sees too or more: states of
   * one history only grow, and a branch holds its parent's entries up to the branch point. Used to
   * carry "pool fully allocated" facts forward, also into every pass or batch that branches from
   * one common start.
   */
  boolean includes(AllocatedState other) {
    if (other == null) {
      return false;
    }
    long upTo = version;
    for (Store s = store; s != null; upTo = Math.min(upTo, s.parentVersion), s = s.parent) {
      if (s == other.store) {
        return other.version <= upTo;
      }
    }
    return false;
  }

  /** Allocated exclusively: unusable except through admin access. */
  public boolean isAllocated(DeviceId id) {
    return holds(false, id);
  }

  /** Allocated exclusively or as a share: counts against shared counters. */
  public boolean holdsCounters(DeviceId id) {
    return isAllocated(id) || isShared(id);
  }

  /** Whether any share of this device is allocated. */
  public boolean isShared(DeviceId id) {
    return holds(true, id);
  }

  /** Capacity consumed by existing shares of the device, by capacity name; empty when none. */
  public Map<String, Quantity> consumedCapacity(DeviceId id) {
    return capacityIn(store, id, version);
  }

  /** The exclusively allocated devices (a copy). */
  public Set<DeviceId> devices() {
    Set<DeviceId> out = new HashSet<>();
    long upTo = version;
    for (Store s = store; s != null; upTo = Math.min(upTo, s.parentVersion), s = s.parent) {
      long limit = upTo;
      s.devices.forEach(
          (id, v) -> {
            if (v <= limit) {
              out.add(id);
            }
          });
    }
    return out;
  }
}
