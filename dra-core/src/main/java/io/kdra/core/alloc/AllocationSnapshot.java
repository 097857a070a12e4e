package io.kdra.core.alloc;

import io.fabric8.kubernetes.api.model.resource.v1.ResourceSlice;
import java.util.Collection;
import java.util.Objects;

/**
 * Everything the allocator reads: the devices ({@link DeviceInventory}, built from ResourceSlices),
 * the DeviceClasses, and what existing allocations hold. Immutable; derive a new snapshot with
 * {@link #withAllocated} after allocating (the inventory and its caches are shared).
 */
public final class AllocationSnapshot {

  private final DeviceInventory inventory;
  private final DeviceClassLister classes;
  private final AllocatedState allocated;

  private AllocationSnapshot(
      DeviceInventory inventory, DeviceClassLister classes, AllocatedState allocated) {
    this.inventory = Objects.requireNonNull(inventory);
    this.classes = Objects.requireNonNull(classes);
    this.allocated = Objects.requireNonNull(allocated);
  }

  public static AllocationSnapshot of(
      Collection<ResourceSlice> slices, DeviceClassLister classes, AllocatedState allocated) {
    return new AllocationSnapshot(DeviceInventory.of(slices), classes, allocated);
  }

  public static AllocationSnapshot of(
      DeviceInventory inventory, DeviceClassLister classes, AllocatedState allocated) {
    return new AllocationSnapshot(inventory, classes, allocated);
  }

  /** The same devices and classes with a different allocated state. */
  public AllocationSnapshot withAllocated(AllocatedState state) {
    return new AllocationSnapshot(inventory, classes, state);
  }

  public DeviceInventory inventory() {
    return inventory;
  }

  public DeviceClassLister classes() {
    return classes;
  }

  public AllocatedState allocated() {
    return allocated;
  }
}
