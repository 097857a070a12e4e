package io.kdra.core.validation;

import static io.kdra.core.validation.Checks.list;
import static io.kdra.core.validation.Checks.map;

import io.fabric8.kubernetes.api.model.NodeSelector;
import io.fabric8.kubernetes.api.model.resource.v1.CounterSet;
import io.fabric8.kubernetes.api.model.resource.v1.Device;
import io.fabric8.kubernetes.api.model.resource.v1.ResourcePool;
import io.fabric8.kubernetes.api.model.resource.v1.ResourceSlice;
import io.fabric8.kubernetes.api.model.resource.v1.ResourceSliceSpec;
import io.kdra.core.validation.ValidationError.ObjectRef;
import java.util.ArrayList;
import java.util.List;

/**
 * Validates a {@code ResourceSlice} as the API server does on create (Kubernetes 1.36 rules):
 * driver and pool, the choice of node selection, device count, each device (see {@link
 * DeviceChecks}) and shared counter sets.
 *
 * <p>Not checked: immutability on update, the content of node selector terms, the arithmetic of
 * capacity request policy ranges, and fields this model does not carry (list attributes, partition
 * types, skipped node operations).
 */
public final class ResourceSliceValidator {

  static final String NODE_FIELDS =
      "exactly one of `nodeName`, `nodeSelector`, `allNodes`, `perDeviceNodeSelection` is required";

  private ResourceSliceValidator() {}

  /** All problems of the slice; empty when the API server would accept it. */
  public static List<ValidationError> validate(ResourceSlice slice) {
    String name = slice.getMetadata() == null ? "" : slice.getMetadata().getName();
    Errors e = new Errors(new ObjectRef("ResourceSlice", "", name));
    Checks.objectName(e, slice.getMetadata());
    if (slice.getSpec() == null) {
      e.required(FieldPath.root("spec"), "");
    } else {
      spec(e, FieldPath.root("spec"), slice.getSpec());
    }
    return e.list();
  }

  private static void spec(Errors e, FieldPath p, ResourceSliceSpec spec) {
    Checks.driverName(e, p.child("driver"), spec.getDriver());
    pool(e, p.child("pool"), spec.getPool());
    nodeSelection(e, p, spec);

    List<Device> devices = list(spec.getDevices());
    List<CounterSet> counterSets = list(spec.getSharedCounters());
    if (!devices.isEmpty() && !counterSets.isEmpty()) {
      e.invalid(p, "", "only one of `sharedCounters` or `devices` is allowed");
    }
    boolean perDevice = Boolean.TRUE.equals(spec.getPerDeviceNodeSelection());
    FieldPath dp = p.child("devices");
    if (e.withinLimit(dp, devices, maxDevices(devices))) {
      for (int i = 0; i < devices.size(); i++) {
        DeviceChecks.device(
            e, dp.index(i), devices.get(i) == null ? new Device() : devices.get(i), perDevice);
      }
      e.unique(dp, devices, d -> d == null ? "" : d.getName());
    }
    FieldPath cp = p.child("sharedCounters");
    if (e.withinLimit(cp, counterSets, Limits.RESOURCE_SLICE_MAX_COUNTER_SETS)) {
      for (int i = 0; i < counterSets.size(); i++) {
        counterSet(
            e, cp.index(i), counterSets.get(i) == null ? new CounterSet() : counterSets.get(i));
      }
      e.unique(cp, counterSets, c -> c == null ? "" : c.getName());
    }
  }

  /**
   * The device limit: 128, or 64 once any device uses taints or consumes counters (list-typed
   * attributes, the third trigger upstream, do not exist in this model).
   */
  static int maxDevices(List<Device> devices) {
    boolean advanced =
        devices.stream()
            .anyMatch(
                d ->
                    d != null
                        && (!list(d.getTaints()).isEmpty()
                            || !list(d.getConsumesCounters()).isEmpty()));
    return advanced
        ? Limits.RESOURCE_SLICE_MAX_DEVICES_WITH_ADVANCED_FEATURES
        : Limits.RESOURCE_SLICE_MAX_DEVICES;
  }

  private static void pool(Errors e, FieldPath p, ResourcePool pool) {
    ResourcePool pl = pool == null ? new ResourcePool() : pool;
    Checks.poolName(e, p.child("name"), pl.getName());
    // unset numbers are Go's zero value
    long count = pl.getResourceSliceCount() == null ? 0 : pl.getResourceSliceCount();
    long generation = pl.getGeneration() == null ? 0 : pl.getGeneration();
    if (count <= 0) {
      e.invalid(p.child("resourceSliceCount"), count, "must be greater than zero");
    }
    if (generation < 0) {
      e.invalid(p.child("generation"), generation, "must be greater than or equal to zero");
    }
  }

  private static void nodeSelection(Errors e, FieldPath p, ResourceSliceSpec spec) {
    List<String> set = new ArrayList<>();
    if (spec.getNodeName() != null) {
      if (spec.getNodeName().isEmpty()) {
        e.invalid(p.child("nodeName"), "", "must be either unset or set to a non-empty string");
      } else {
        set.add("`nodeName`");
        nodeName(e, p.child("nodeName"), spec.getNodeName());
      }
    }
    if (spec.getNodeSelector() != null) {
      set.add("`nodeSelector`");
      oneTerm(e, p.child("nodeSelector"), spec.getNodeSelector());
    }
    mustBeTrue(e, p.child("allNodes"), spec.getAllNodes(), "`allNodes`", set);
    mustBeTrue(
        e,
        p.child("perDeviceNodeSelection"),
        spec.getPerDeviceNodeSelection(),
        "`perDeviceNodeSelection`",
        set);
    if (set.isEmpty()) {
      e.required(p, NODE_FIELDS);
    } else if (set.size() > 1) {
      e.invalid(
          p, "{" + String.join(", ", set) + "}", NODE_FIELDS + ", but multiple fields are set");
    }
  }

  /** A true flag joins {@code set}; an explicit false is an error of its own. */
  static void mustBeTrue(Errors e, FieldPath p, Boolean flag, String name, List<String> set) {
    if (flag == null) {
      return;
    }
    if (flag) {
      set.add(name);
    } else {
      e.invalid(p, false, "must be either unset or set to true");
    }
  }

  static void nodeName(Errors e, FieldPath p, String name) {
    e.invalid(p, name, Names.dns1123Subdomain(name));
  }

  /** One term keeps merging the selectors of devices from different slices simple. */
  static void oneTerm(Errors e, FieldPath p, NodeSelector selector) {
    int terms = list(selector.getNodeSelectorTerms()).size();
    if (terms != 1) {
      e.invalid(p.child("nodeSelectorTerms"), null, "must have exactly one node selector term");
    }
  }

  private static void counterSet(Errors e, FieldPath p, CounterSet set) {
    Checks.requiredName(e, p.child("name"), set.getName(), Names.dns1123Label(set.getName()));
    DeviceChecks.counters(
        e,
        p.child("counters"),
        map(set.getCounters()),
        Limits.RESOURCE_SLICE_MAX_COUNTERS_PER_COUNTER_SET);
  }
}
