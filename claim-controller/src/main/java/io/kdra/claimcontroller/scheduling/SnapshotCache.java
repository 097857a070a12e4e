package io.kdra.claimcontroller.scheduling;

import io.fabric8.kubernetes.api.model.resource.v1.AllocationResult;
import io.fabric8.kubernetes.api.model.resource.v1.DeviceClass;
import io.fabric8.kubernetes.api.model.resource.v1.DeviceRequestAllocationResult;
import io.fabric8.kubernetes.api.model.resource.v1.ResourceClaim;
import io.fabric8.kubernetes.api.model.resource.v1.ResourceSlice;
import io.kdra.core.alloc.AllocatedState;
import io.kdra.core.alloc.AllocationSnapshot;
import io.kdra.core.alloc.DeviceInventory;
import io.kdra.core.alloc.InMemoryDeviceClassLister;
import java.util.ArrayList;
import java.util.Collection;
import java.util.Collections;
import java.util.HashMap;
import java.util.IdentityHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Set;

/**
 * The allocator's snapshot, kept from one pod to the next instead of rebuilt per attempt: the
 * device inventory (with its per-device selector results, pool cache and full-node index) lasts
 * while no ResourceSlice changes, and the allocated state is extended by the allocations that
 * appeared since the last pod, rebuilt only when one it holds went away or changed (a
 * deallocation). An informer replaces an object on every change, so object identity tells whether a
 * slice or class changed: O(objects) pointer checks per attempt instead of parsing every slice and
 * replaying every allocation.
 *
 * <p>Not thread-safe: the caller serialises attempts (the scheduling lock).
 */
final class SnapshotCache {

  private Set<ResourceSlice> slices = Set.of();
  private DeviceInventory inventory;
  private Set<DeviceClass> classes = Set.of();
  private InMemoryDeviceClassLister classLister;
  private AllocatedState state;

  /** Claim UID to the allocation {@link #state} holds for it. */
  private Map<String, AllocationResult> held = Map.of();

  private long inventoryBuilds;
  private long stateBuilds;

  /** The snapshot of these slices, classes and claims (each with its current allocation). */
  AllocationSnapshot snapshot(
      Collection<ResourceSlice> currentSlices,
      Collection<DeviceClass> currentClasses,
      Collection<ResourceClaim> claims) {
    if (inventory == null || !sameObjects(slices, currentSlices)) {
      inventory = DeviceInventory.of(currentSlices);
      slices = identitySet(currentSlices);
      inventoryBuilds++;
    }
    if (classLister == null || !sameObjects(classes, currentClasses)) {
      classLister = new InMemoryDeviceClassLister(currentClasses);
      classes = identitySet(currentClasses);
    }
    return AllocationSnapshot.of(inventory, classLister, allocated(claims));
  }

  /** How often the inventory and the allocated state were built from scratch (for tests). */
  long inventoryBuilds() {
    return inventoryBuilds;
  }

  long stateBuilds() {
    return stateBuilds;
  }

  private AllocatedState allocated(Collection<ResourceClaim> claims) {
    if (state == null) {
      state = AllocatedState.empty();
      held = new HashMap<>();
      stateBuilds++;
    }
    // One pass: allocations the state holds are matched by identity (an informer's copy that
    // differs from the assumed one is compared once, then remembered); new ones are added; one
    // gone or changed (a deallocation) rebuilds the state.
    int stillHeld = 0;
    List<ResourceClaim> added = new ArrayList<>();
    for (ResourceClaim c : claims) {
      if (c.getStatus() == null || c.getStatus().getAllocation() == null) {
        continue;
      }
      AllocationResult current = c.getStatus().getAllocation();
      AllocationResult known = held.get(c.getMetadata().getUid());
      if (known == null) {
        added.add(c);
      } else if (known == current) {
        stillHeld++;
      } else if (sameDevices(known, current)) {
        held.put(c.getMetadata().getUid(), current);
        stillHeld++;
      } else {
        return rebuild(claims);
      }
    }
    if (stillHeld != held.size()) {
      return rebuild(claims);
    }
    for (ResourceClaim c : added) {
      state = state.plus(c.getStatus().getAllocation());
      held.put(c.getMetadata().getUid(), c.getStatus().getAllocation());
    }
    return state;
  }

  private AllocatedState rebuild(Collection<ResourceClaim> claims) {
    state = null;
    return allocated(claims);
  }

  /**
   * The same devices, shares and consumed capacity: an informer's copy of an allocation this
   * controller assumed is a different object with the same content.
   */
  static boolean sameDevices(AllocationResult a, AllocationResult b) {
    List<DeviceRequestAllocationResult> x =
        a.getDevices() == null ? null : a.getDevices().getResults();
    List<DeviceRequestAllocationResult> y =
        b.getDevices() == null ? null : b.getDevices().getResults();
    if (x == null || y == null) {
      return x == y;
    }
    if (x.size() != y.size()) {
      return false;
    }
    for (int i = 0; i < x.size(); i++) {
      DeviceRequestAllocationResult r = x.get(i);
      DeviceRequestAllocationResult s = y.get(i);
      if (!Objects.equals(r.getDriver(), s.getDriver())
          || !Objects.equals(r.getPool(), s.getPool())
          || !Objects.equals(r.getDevice(), s.getDevice())
          || !Objects.equals(r.getShareID(), s.getShareID())
          || !Objects.equals(r.getAdminAccess(), s.getAdminAccess())
          || !Objects.equals(r.getConsumedCapacity(), s.getConsumedCapacity())) {
        return false;
      }
    }
    return true;
  }

  private static <T> boolean sameObjects(Set<T> known, Collection<T> current) {
    if (known.size() != current.size()) {
      return false;
    }
    for (T t : current) {
      if (!known.contains(t)) {
        return false;
      }
    }
    return true;
  }

  private static <T> Set<T> identitySet(Collection<T> objects) {
    Set<T> set = Collections.newSetFromMap(new IdentityHashMap<>());
    set.addAll(objects);
    return set;
  }
}
