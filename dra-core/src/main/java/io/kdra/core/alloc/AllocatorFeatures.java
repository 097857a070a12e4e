package io.kdra.core.alloc;

import java.util.ArrayList;
import java.util.List;

/**
 * The optional allocator features, one boolean per KEP, passed in by the caller (never read from
 * globals). {@link #defaults()} mirrors the feature gates of Kubernetes 1.37, the release whose
 * allocator this package follows. A disabled feature behaves as upstream's allocator does with the
 * gate off: requests that need it fail with an explanation, devices that need it are skipped.
 *
 * @param adminAccess {@code DRAAdminAccess} (KEP 5018): requests with {@code adminAccess: true} may
 *     share devices that other claims hold
 * @param prioritizedList {@code DRAPrioritizedList} (KEP 4816): {@code firstAvailable} subrequests
 * @param deviceTaints {@code DRADeviceTaints} (KEP 5055): NoSchedule/NoExecute device taints need a
 *     matching toleration; off means taints are ignored
 * @param partitionableDevices {@code DRAPartitionableDevices} (KEP 4815): shared counters, {@code
 *     consumesCounters} and per-device node selection
 * @param consumableCapacity {@code DRAConsumableCapacity} (KEP 5075): devices with {@code
 *     allowMultipleAllocations} and capacity requests
 * @param bindingConditions {@code DRADeviceBindingConditions} (KEP 5007): devices with binding
 *     conditions are visible, tried last, and their conditions are copied into results
 * @param fractionalCapacityRange {@code DRAFractionalCapacityRange} (beta in 1.37): request
 *     policies' ranges are stepped in thousandths when their bounds are; off, in whole units
 */
public record AllocatorFeatures(
    boolean adminAccess,
    boolean prioritizedList,
    boolean deviceTaints,
    boolean partitionableDevices,
    boolean consumableCapacity,
    boolean bindingConditions,
    boolean fractionalCapacityRange) {

  /** The upstream feature-gate names this record holds, sorted. */
  public static final List<String> GATES =
      List.of(
          "DRAAdminAccess",
          "DRAConsumableCapacity",
          "DRADeviceBindingConditions",
          "DRADeviceTaints",
          "DRAFractionalCapacityRange",
          "DRAPartitionableDevices",
          "DRAPrioritizedList");

  /** Kubernetes 1.37 defaults: everything on (GA or beta-on). */
  public static AllocatorFeatures defaults() {
    return new AllocatorFeatures(true, true, true, true, true, true, true);
  }

  /** Only the GA core: every optional feature off (the 1.34 "stable" allocator's view). */
  public static AllocatorFeatures none() {
    return new AllocatorFeatures(false, false, false, false, false, false, false);
  }

  public AllocatorFeatures withAdminAccess(boolean on) {
    return new AllocatorFeatures(
        on,
        prioritizedList,
        deviceTaints,
        partitionableDevices,
        consumableCapacity,
        bindingConditions,
        fractionalCapacityRange);
  }

  public AllocatorFeatures withPrioritizedList(boolean on) {
    return new AllocatorFeatures(
        adminAccess,
        on,
        deviceTaints,
        partitionableDevices,
        consumableCapacity,
        bindingConditions,
        fractionalCapacityRange);
  }

  public AllocatorFeatures withDeviceTaints(boolean on) {
    return new AllocatorFeatures(
        adminAccess,
        prioritizedList,
        on,
        partitionableDevices,
        consumableCapacity,
        bindingConditions,
        fractionalCapacityRange);
  }

  public AllocatorFeatures withPartitionableDevices(boolean on) {
    return new AllocatorFeatures(
        adminAccess,
        prioritizedList,
        deviceTaints,
        on,
        consumableCapacity,
        bindingConditions,
        fractionalCapacityRange);
  }

  public AllocatorFeatures withConsumableCapacity(boolean on) {
    return new AllocatorFeatures(
        adminAccess,
        prioritizedList,
        deviceTaints,
        partitionableDevices,
        on,
        bindingConditions,
        fractionalCapacityRange);
  }

  public AllocatorFeatures withBindingConditions(boolean on) {
    return new AllocatorFeatures(
        adminAccess,
        prioritizedList,
        deviceTaints,
        partitionableDevices,
        consumableCapacity,
        on,
        fractionalCapacityRange);
  }

  public AllocatorFeatures withFractionalCapacityRange(boolean on) {
    return new AllocatorFeatures(
        adminAccess,
        prioritizedList,
        deviceTaints,
        partitionableDevices,
        consumableCapacity,
        bindingConditions,
        on);
  }

  /**
   * These features with the gate {@code gate} (an upstream name, one of {@link #GATES}) set.
   *
   * @throws IllegalArgumentException for a gate this allocator does not know, naming those it does
   */
  public AllocatorFeatures with(String gate, boolean on) {
    switch (gate) {
      case "DRAAdminAccess":
        return withAdminAccess(on);
      case "DRAConsumableCapacity":
        return withConsumableCapacity(on);
      case "DRADeviceBindingConditions":
        return withBindingConditions(on);
      case "DRADeviceTaints":
        return withDeviceTaints(on);
      case "DRAFractionalCapacityRange":
        return withFractionalCapacityRange(on);
      case "DRAPartitionableDevices":
        return withPartitionableDevices(on);
      case "DRAPrioritizedList":
        return withPrioritizedList(on);
      default:
        throw new IllegalArgumentException(
            "unrecognized feature gate: " + gate + " (known: " + String.join(", ", GATES) + ")");
    }
  }

  /**
   * These features with the gates of {@code spec} set, in the syntax of upstream components' {@code
   * --feature-gates} flag: {@code Name=true,Other=false}. Blanks around entries and empty entries
   * are ignored; a later entry for the same gate wins; values are Go's booleans ({@code true},
   * {@code True}, {@code TRUE}, {@code t}, {@code T}, {@code 1} and the same for false).
   *
   * @throws IllegalArgumentException naming the entry for an unknown gate, a missing or a
   *     non-boolean value
   */
  public AllocatorFeatures withGates(String spec) {
    AllocatorFeatures result = this;
    for (String entry : spec.split(",", -1)) {
      String e = entry.strip();
      if (e.isEmpty()) {
        continue;
      }
      int eq = e.indexOf('=');
      if (eq < 0) {
        throw new IllegalArgumentException("missing bool value for " + e);
      }
      String name = e.substring(0, eq).strip();
      String value = e.substring(eq + 1).strip();
      result = result.with(name, parseBool(name, value));
    }
    return result;
  }

  /** Go's {@code strconv.ParseBool}, which upstream's feature gates use. */
  private static boolean parseBool(String gate, String value) {
    switch (value) {
      case "1":
      case "t":
      case "T":
      case "true":
      case "TRUE":
      case "True":
        return true;
      case "0":
      case "f":
      case "F":
      case "false":
      case "FALSE":
      case "False":
        return false;
      default:
        throw new IllegalArgumentException(
            "invalid value of " + gate + "=" + value + ": not a bool (true or false)");
    }
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
    if (fractionalCapacityRange) {
      names.add("DRAFractionalCapacityRange");
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
