package io.kdra.core.alloc;

import java.util.Collection;
import java.util.EnumSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.function.Predicate;
import java.util.stream.Stream;

/**
 * The optional allocator features, one boolean per KEP, passed in by the caller (never read from
 * globals). {@link #defaults()} mirrors the feature gates of Kubernetes 1.37: everything GA or beta
 * on, the alpha gates off. A disabled feature behaves as upstream's allocator does with the gate
 * off: requests that need it fail with an explanation, devices that need it are skipped. With an
 * alpha gate on, decisions follow upstream's "experimental" allocator, which kube-scheduler picks
 * then; with them off, its "incubating" one (the two agree on everything else).
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
 * @param derivedAttributes {@code DRADerivedAttributes} (alpha in 1.37): requests' {@code
 *     derivedAttributes}, CEL-computed attributes for constraints; off, such requests fail
 * @param compatibilityGroups {@code DRADeviceCompatibilityGroups} (alpha in 1.37): devices drawing
 *     on one counter set are co-allocated only when their {@code compatibilityGroups} intersect;
 *     off, slices that declare groups are ignored (their pools become incomplete)
 * @param optionalNodeOperations {@code DRAOptionalNodeOperations} (alpha in 1.37): a device of a
 *     slice with {@code skipNodeOperations} is allocated only on a node that declares the feature
 *     in {@code status.declaredFeatures}, and the slice's list is copied into its result (the
 *     kubelet then skips those calls); off, such devices are not allocated while another alpha gate
 *     is on, and allocated as any other (the list not copied) while none is, as upstream's
 *     experimental and incubating allocators do
 */
public record AllocatorFeatures(
    boolean adminAccess,
    boolean prioritizedList,
    boolean deviceTaints,
    boolean partitionableDevices,
    boolean consumableCapacity,
    boolean bindingConditions,
    boolean fractionalCapacityRange,
    boolean derivedAttributes,
    boolean compatibilityGroups,
    boolean optionalNodeOperations) {

  /** Where a gate stands in 1.37. */
  private enum Stage {
    /** On by default. */
    GA_OR_BETA,
    /** Off by default; only upstream's experimental allocator supports it. */
    ALPHA
  }

  /** One row per component: its upstream gate and its stage. */
  private enum Gate {
    ADMIN_ACCESS("DRAAdminAccess", Stage.GA_OR_BETA, AllocatorFeatures::adminAccess),
    PRIORITIZED_LIST("DRAPrioritizedList", Stage.GA_OR_BETA, AllocatorFeatures::prioritizedList),
    DEVICE_TAINTS("DRADeviceTaints", Stage.GA_OR_BETA, AllocatorFeatures::deviceTaints),
    PARTITIONABLE_DEVICES(
        "DRAPartitionableDevices", Stage.GA_OR_BETA, AllocatorFeatures::partitionableDevices),
    CONSUMABLE_CAPACITY(
        "DRAConsumableCapacity", Stage.GA_OR_BETA, AllocatorFeatures::consumableCapacity),
    BINDING_CONDITIONS(
        "DRADeviceBindingConditions", Stage.GA_OR_BETA, AllocatorFeatures::bindingConditions),
    FRACTIONAL_CAPACITY_RANGE(
        "DRAFractionalCapacityRange", Stage.GA_OR_BETA, AllocatorFeatures::fractionalCapacityRange),
    DERIVED_ATTRIBUTES("DRADerivedAttributes", Stage.ALPHA, AllocatorFeatures::derivedAttributes),
    COMPATIBILITY_GROUPS(
        "DRADeviceCompatibilityGroups", Stage.ALPHA, AllocatorFeatures::compatibilityGroups),
    OPTIONAL_NODE_OPERATIONS(
        "DRAOptionalNodeOperations", Stage.ALPHA, AllocatorFeatures::optionalNodeOperations);

    final String upstreamName;
    final Stage stage;
    final Predicate<AllocatorFeatures> isOn;

    Gate(String upstreamName, Stage stage, Predicate<AllocatorFeatures> isOn) {
      this.upstreamName = upstreamName;
      this.stage = stage;
      this.isOn = isOn;
    }
  }

  /** The upstream feature-gate names this record holds, sorted. */
  public static final List<String> GATES =
      Stream.of(Gate.values()).map(g -> g.upstreamName).sorted().toList();

  /** Kubernetes 1.37 defaults: GA and beta on, alpha off. */
  public static AllocatorFeatures defaults() {
    return of(Stream.of(Gate.values()).filter(g -> g.stage == Stage.GA_OR_BETA).toList());
  }

  /** Every feature on, alpha ones too (what upstream's experimental allocator supports). */
  public static AllocatorFeatures all() {
    return of(EnumSet.allOf(Gate.class));
  }

  /** Only the GA core: every optional feature off (the 1.34 "stable" allocator's view). */
  public static AllocatorFeatures none() {
    return of(EnumSet.noneOf(Gate.class));
  }

  private static AllocatorFeatures of(Collection<Gate> on) {
    return new AllocatorFeatures(
        on.contains(Gate.ADMIN_ACCESS),
        on.contains(Gate.PRIORITIZED_LIST),
        on.contains(Gate.DEVICE_TAINTS),
        on.contains(Gate.PARTITIONABLE_DEVICES),
        on.contains(Gate.CONSUMABLE_CAPACITY),
        on.contains(Gate.BINDING_CONDITIONS),
        on.contains(Gate.FRACTIONAL_CAPACITY_RANGE),
        on.contains(Gate.DERIVED_ATTRIBUTES),
        on.contains(Gate.COMPATIBILITY_GROUPS),
        on.contains(Gate.OPTIONAL_NODE_OPERATIONS));
  }

  private List<Gate> enabled() {
    return Stream.of(Gate.values()).filter(g -> g.isOn.test(this)).toList();
  }

  private AllocatorFeatures with(Gate gate, boolean on) {
    Set<Gate> gates = EnumSet.noneOf(Gate.class);
    gates.addAll(enabled());
    if (on) {
      gates.add(gate);
    } else {
      gates.remove(gate);
    }
    return of(gates);
  }

  public AllocatorFeatures withAdminAccess(boolean on) {
    return with(Gate.ADMIN_ACCESS, on);
  }

  public AllocatorFeatures withPrioritizedList(boolean on) {
    return with(Gate.PRIORITIZED_LIST, on);
  }

  public AllocatorFeatures withDeviceTaints(boolean on) {
    return with(Gate.DEVICE_TAINTS, on);
  }

  public AllocatorFeatures withPartitionableDevices(boolean on) {
    return with(Gate.PARTITIONABLE_DEVICES, on);
  }

  public AllocatorFeatures withConsumableCapacity(boolean on) {
    return with(Gate.CONSUMABLE_CAPACITY, on);
  }

  public AllocatorFeatures withBindingConditions(boolean on) {
    return with(Gate.BINDING_CONDITIONS, on);
  }

  public AllocatorFeatures withFractionalCapacityRange(boolean on) {
    return with(Gate.FRACTIONAL_CAPACITY_RANGE, on);
  }

  public AllocatorFeatures withDerivedAttributes(boolean on) {
    return with(Gate.DERIVED_ATTRIBUTES, on);
  }

  public AllocatorFeatures withCompatibilityGroups(boolean on) {
    return with(Gate.COMPATIBILITY_GROUPS, on);
  }

  public AllocatorFeatures withOptionalNodeOperations(boolean on) {
    return with(Gate.OPTIONAL_NODE_OPERATIONS, on);
  }

  /**
   * Whether upstream would decide with its "experimental" allocator: some alpha gate it alone
   * supports is on (kube-scheduler picks the most stable allocator that supports every enabled
   * feature). Where the two differ, with this false we decide as the "incubating" one does.
   */
  public boolean experimental() {
    return enabled().stream().anyMatch(g -> g.stage == Stage.ALPHA);
  }

  /**
   * These features with the gate {@code gate} (an upstream name, one of {@link #GATES}) set.
   *
   * @throws IllegalArgumentException for a gate this allocator does not know, naming those it does
   */
  public AllocatorFeatures with(String gate, boolean on) {
    for (Gate g : Gate.values()) {
      if (g.upstreamName.equals(gate)) {
        return with(g, on);
      }
    }
    throw new IllegalArgumentException(
        "unrecognized feature gate: " + gate + " (known: " + String.join(", ", GATES) + ")");
  }

  /**
   * These features with the gates of {@code spec} set, in the syntax of upstream components' {@code
   * --feature-gates} flag ({@link FeatureGateFlag}).
   *
   * @throws IllegalArgumentException naming the entry for an unknown gate, a missing or a
   *     non-boolean value
   */
  public AllocatorFeatures withGates(String spec) {
    AllocatorFeatures result = this;
    for (Map.Entry<String, Boolean> gate : FeatureGateFlag.parse(spec).entrySet()) {
      result = result.with(gate.getKey(), gate.getValue());
    }
    return result;
  }

  /** The upstream feature-gate names of the enabled features, sorted. */
  public List<String> enabledNames() {
    return enabled().stream().map(g -> g.upstreamName).sorted().toList();
  }
}
