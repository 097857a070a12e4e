package io.kdra.claimcontroller.scheduling;

import io.fabric8.kubernetes.api.model.resource.v1.DeviceClass;
import io.fabric8.kubernetes.api.model.resource.v1.ResourceSlice;
import io.kdra.core.alloc.AllocatedState;
import io.kdra.core.alloc.AllocationSnapshot;
import io.kdra.core.alloc.DeviceInventory;
import io.kdra.core.alloc.InMemoryDeviceClassLister;
import io.kdra.core.taint.DeviceTaintRule;
import io.kdra.core.taint.DeviceTaintRules;
import java.util.Collection;
import java.util.Collections;
import java.util.IdentityHashMap;
import java.util.List;
import java.util.Set;

/**
 * The allocator's snapshot, kept from one pod to the next instead of rebuilt per attempt: the
 * device inventory (with its per-device selector results, pool cache and full-node index) lasts
 * while no ResourceSlice or DeviceTaintRule changes, and the class lister while no DeviceClass
 * does. An informer replaces an object on every change, so object identity tells whether a slice or
 * class changed. The allocated state comes from the caller ({@link AllocatedClaims}, kept
 * incrementally).
 *
 * <p>Not thread-safe: the caller serialises attempts (the scheduling lock).
 */
final class SnapshotCache {

  private Set<ResourceSlice> slices = Set.of();
  private Set<DeviceTaintRule> rules = Set.of();
  private DeviceInventory inventory;
  private Set<DeviceClass> classes = Set.of();
  private InMemoryDeviceClassLister classLister;

  private long inventoryBuilds;

  /** The snapshot of these slices and classes, with {@code allocated} taken. */
  AllocationSnapshot snapshot(
      Collection<ResourceSlice> currentSlices,
      Collection<DeviceClass> currentClasses,
      AllocatedState allocated) {
    return snapshot(currentSlices, List.of(), currentClasses, allocated);
  }

  /**
   * The snapshot of these slices, tainted by these DeviceTaintRules (as upstream's tracker patches
   * them for the scheduler), and classes, with {@code allocated} taken.
   */
  AllocationSnapshot snapshot(
      Collection<ResourceSlice> currentSlices,
      Collection<DeviceTaintRule> currentRules,
      Collection<DeviceClass> currentClasses,
      AllocatedState allocated) {
    if (inventory == null
        || !sameObjects(slices, currentSlices)
        || !sameObjects(rules, currentRules)) {
      inventory = DeviceInventory.of(DeviceTaintRules.apply(currentSlices, currentRules));
      slices = identitySet(currentSlices);
      rules = identitySet(currentRules);
      inventoryBuilds++;
    }
    if (classLister == null || !sameObjects(classes, currentClasses)) {
      classLister = new InMemoryDeviceClassLister(currentClasses);
      classes = identitySet(currentClasses);
    }
    return AllocationSnapshot.of(inventory, classLister, allocated);
  }

  /** How often the inventory was built from scratch (for tests). */
  long inventoryBuilds() {
    return inventoryBuilds;
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
