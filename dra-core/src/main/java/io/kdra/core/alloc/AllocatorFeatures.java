package io.kdra.core.alloc;

import java.util.ArrayList;
import java.util.List;

/**
 * The optional allocator features, one boolean per KEP, passed in by the caller (never read from
 * globals). {@link #defaults()} mirrors the feature gates of Kubernetes 1.36, the release whose
 * allocator this package follows. A disabled feature behaves as upstream's allocator does with the
 * gate off: requests that need it fail with an explanation, devices that need it are skipped.
 *
 * @param adminAccess {@code DRAAdminAccess} (KEP 5018): requests with {@code adminAccess: true}
 *     may share devices that other claims hold
 * @param prioritizedList {@code DRAPrioritizedList} (KEP 4816): {@code firstAvailable} subrequests
 * @param deviceTaints {@code DRADeviceTaints} (KEP 5055): NoSchedule/NoExecute device taints need
 *     a matching toleration; off means taints are ignored
 * @param partitionableDevices {@code DRAPartitionableDevices} (KEP 4815): shared counters,
 *     {@code consumesCounters} and per-device node selection
 * @param consumableCapacity {@code DRAConsumableCapacity} (KEP 5075): devices with
 *     {@code allowMultipleAllocations} and capacity requests
 * @param bindingConditions {@code DRADeviceBindingConditions} (KEP 5007): devices with binding
 *     conditions are visible, tried last, and their conditions are copied into results
 */
public record AllocatorFeatures(
    boolean adminAccess,
    boolean prioritizedList,
    boolean deviceTaints,
    boolean partitionableDevices,
    boolean consumableCapacity,
    boolean bindingConditions) {

  /** Kubernetes 1.36 defaults: everything on (GA or beta-on). */
  public static AllocatorFeatures defaults() {
    return new AllocatorFeatures(true, true, true, true, true, true);
  }

  /** Only the GA core: every optional feature off (the 1.34 "stable" allocator's view). */
  public static AllocatorFeatures none() {
    return new AllocatorFeatures(false, false, false, false, false, false);
  }

  public AllocatorFeatures withAdminAccess(boolean on) {
    return new AllocatorFeatures(on, prioritizedList, deviceTaints, partitionableDevices,
        consumableCapacity, bindingConditions);
  }

  public AllocatorFeatures withPrioritizedList(boolean on) {
    return new AllocatorFeatures(adminAccess, on, deviceTaints, partitionableDevices,
        consumableCapacity, bindingConditions);
  }

  public AllocatorFeatures withDeviceTaints(boolean on) {
    return new AllocatorFeatures(adminAccess, prioritizedList, on, partitionableDevices,
        consumableCapacity, bindingConditions);
  }

  public AllocatorFeatures withPartitionableDevices(boolean on) {
    return new AllocatorFeatures(adminAccess, prioritizedList, deviceTaints, on,
        consumableCapacity, bindingConditions);
  }

  public AllocatorFeatures withConsumableCapacity(boolean on) {
    return new AllocatorFeatures(adminAccess, prioritizedList, deviceTaints, partitionableDevices,
        on, bindingConditions);
  }

  public AllocatorFeatures withBindingConditions(boolean on) {
    return new AllocatorFeatures(adminAccess, prioritizedList, deviceTaints, partitionableDevices,
        consumableCapacity, on);
  }

  /** The upstream feature-gate names of the enabled features, sorted. */
  public List<String> enabledNames() {
    List<String> names = new ArrayList<>();
    if (adminAccess) {
      names.add("DRAAdminAccess");
    }
    if (consumableCapacity) {
      names.add("DRAConsumableCapacity");
    }
    if (bindingConditions) {
      names.add("DRADeviceBindingConditions");
    }
    if (deviceTaints) {
      names.add("DRADeviceTaints");
    }
    if (partitionableDevices) {
      names.add("DRAPartitionableDevices");
    }
    if (prioritizedList) {
      names.add("DRAPrioritizedList");
    }
    return names;
  }
}
