package io.kdra.core.alloc;

import io.fabric8.kubernetes.api.model.resource.v1.AllocationResult;
import io.fabric8.kubernetes.api.model.resource.v1.DeviceRequestAllocationResult;
import io.fabric8.kubernetes.api.model.resource.v1.ResourceClaim;
import io.kdra.core.model.DeviceId;
import io.kdra.core.model.Quantity;
import java.util.ArrayList;
import java.util.Collection;
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
 * capacity those shares consume. Results with {@code adminAccess: true} hold nothing, because
 * admin access never blocks other claims.
 *
 * <p>Immutable and thread-safe: {@link #plus} returns a new state and never changes what this one
 * answers. Design choice: allocating one pod after another (the command line, the controller, the
 * benchmark) extends a linear history, so states share one append-only store in which every entry
 * carries the version that added it, and a state sees the entries up to its own version. That
 * makes {@link #plus} O(size of the allocation) and lookups O(1). Extending an older state (a
 * branch) copies the store once.
 */
public final class AllocatedState {

  /** Append-only entries shared by a linear history of states. */
  private static final class Store {
    final ConcurrentHashMap<DeviceId, Long> devices = new ConcurrentHashMap<>();
    final ConcurrentHashMap<DeviceId, Long> shared = new ConcurrentHashMap<>();
    /** Per device: cumulative consumed capacity after each version that changed it. */
    final ConcurrentHashMap<DeviceId, List<Versioned>> capacity = new ConcurrentHashMap<>();
    final AtomicLong latest = new AtomicLong();
    /**
     * The store this one was copied from (a branch), or null: this store holds every entry of
     * {@code parent} up to {@code parentVersion}, so facts about those states carry over.
     */
    final Store parent;
    final long parentVersion;
    /** Stores between this one and the root of its lineage, bounded by {@link #MAX_LINEAGE}. */
    final int depth;

    Store() {
      this(null, 0);
    }

    Store(Store parent, long parentVersion) {
      boolean keep = parent != null && parent.depth < MAX_LINEAGE;
      this.parent = keep ? parent : null;
      this.parentVersion = keep ? parentVersion : 0;
      this.depth = keep ? parent.depth + 1 : 0;
    }
  }

  /**
   * How many branch copies a store remembers its ancestors through. Each kept ancestor stays
   * reachable (memory); the usual branch is one level deep (every pass or batch branching from
   * the same start), so a short chain keeps the facts that matter without retaining history.
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
    if (allocation == null || allocation.getDevices() == null
        || allocation.getDevices().getResults() == null) {
      return this;
    }
    final Store target;
    if (store.latest.compareAndSet(version, version + 1)) {
      target = store;
    } else {
      target = copyUpTo(version);
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
      Map<String, Quantity> sum = sums.computeIfAbsent(id,
          k -> new HashMap<>(capacityIn(target, k, version)));
      if (r.getConsumedCapacity() != null) {
        r.getConsumedCapacity().forEach((name, q) ->
            sum.merge(name, Quantities.of(q), Quantity::add));
      }
    }
    sums.forEach((id, sum) -> target.capacity
        .computeIfAbsent(id, k -> java.util.Collections.synchronizedList(new ArrayList<>()))
        .add(new Versioned(v, Map.copyOf(sum))));
    return new AllocatedState(target, v);
  }

  private Store copyUpTo(long upTo) {
    Store copy = new Store(store, upTo);
    store.devices.forEach((id, v) -> {
      if (v <= upTo) {
        copy.devices.put(id, v);
      }
    });
    store.shared.forEach((id, v) -> {
      if (v <= upTo) {
        copy.shared.put(id, v);
      }
    });
    store.capacity.forEach((id, list) -> {
      Map<String, Quantity> m = capacityIn(store, id, upTo);
      if (!m.isEmpty()) {
        List<Versioned> l = java.util.Collections.synchronizedList(new ArrayList<>());
        l.add(new Versioned(0, m));
        copy.capacity.put(id, l);
      }
    });
    return copy;
  }

  private static Map<String, Quantity> capacityIn(Store store, DeviceId id, long upTo) {
    List<Versioned> list = store.capacity.get(id);
    if (list == null) {
      return Map.of();
    }
    synchronized (list) {
      for (int i = list.size() - 1; i >= 0; i--) {
        if (list.get(i).version() <= upTo) {
          return list.get(i).total();
        }
      }
    }
    return Map.of();
  }

  /**
   * Whether every device this state sees as allocated, {@code other} sees too or more: states of
   * one history only grow. Used to carry "pool fully allocated" facts forward.
   */
  boolean includes(AllocatedState other) {
    if (other == null) {
      return false;
    }
    // a branch's store holds its parent's entries up to the branch point: states of the parent
    // up to there are included too (so "pool full" marks survive every pass or batch that
    // branches from one common start, instead of each re-searching every full node once)
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
    Long v = store.devices.get(id);
    return v != null && v <= version;
  }

  /** Allocated exclusively or as a share: counts against shared counters. */
  public boolean holdsCounters(DeviceId id) {
    return isAllocated(id) || isShared(id);
  }

  /** Whether any share of this device is allocated. */
  public boolean isShared(DeviceId id) {
    Long v = store.shared.get(id);
    return v != null && v <= version;
  }

  /** Capacity consumed by existing shares of the device, by capacity name; empty when none. */
  public Map<String, Quantity> consumedCapacity(DeviceId id) {
    return capacityIn(store, id, version);
  }

  /** The exclusively allocated devices (a copy). */
  public Set<DeviceId> devices() {
    Set<DeviceId> out = new HashSet<>();
    store.devices.forEach((id, v) -> {
      if (v <= version) {
        out.add(id);
      }
    });
    return out;
  }
}
