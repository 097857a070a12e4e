package io.kdra.core.validation;

import static io.kdra.core.validation.Checks.isEmpty;
import static io.kdra.core.validation.Checks.list;
import static io.kdra.core.validation.Checks.map;

import io.fabric8.kubernetes.api.model.resource.v1.CapacityRequestPolicy;
import io.fabric8.kubernetes.api.model.resource.v1.Counter;
import io.fabric8.kubernetes.api.model.resource.v1.Device;
import io.fabric8.kubernetes.api.model.resource.v1.DeviceAttribute;
import io.fabric8.kubernetes.api.model.resource.v1.DeviceCapacity;
import io.fabric8.kubernetes.api.model.resource.v1.DeviceCounterConsumption;
import io.fabric8.kubernetes.api.model.resource.v1.DeviceTaint;
import io.kdra.core.model.Semver;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;

/** The checks of one device in a ResourceSlice. */
final class DeviceChecks {

  static final String PER_DEVICE_FIELDS =
      "exactly one of `nodeName`, `nodeSelector`, or "
          + "`allNodes` is required when `perDeviceNodeSelection` is set to true in the "
          + "ResourceSlice spec";

  private DeviceChecks() {}

  static void device(Errors e, FieldPath p, Device d, boolean perDeviceNodeSelection) {
    Checks.requiredName(e, p.child("name"), d.getName(), Names.deviceName(d.getName()));
    Map<String, DeviceAttribute> attributes = map(d.getAttributes());
    Map<String, DeviceCapacity> capacity = map(d.getCapacity());
    int total = attributes.size() + capacity.size();
    if (total > Limits.RESOURCE_SLICE_MAX_ATTRIBUTES_AND_CAPACITIES_PER_DEVICE) {
      e.invalid(
          p,
          total,
          "the total number of attributes and capacities must not exceed "
              + Limits.RESOURCE_SLICE_MAX_ATTRIBUTES_AND_CAPACITIES_PER_DEVICE);
    }
    FieldPath ap = p.child("attributes");
    attributes.forEach(
        (key, value) -> {
          Checks.qualifiedName(e, ap, key, false);
          attribute(e, Checks.keyPath(ap, key), value == null ? new DeviceAttribute() : value);
        });
    boolean multiple = Boolean.TRUE.equals(d.getAllowMultipleAllocations());
    FieldPath cp = p.child("capacity");
    capacity.forEach(
        (key, value) -> {
          Checks.qualifiedName(e, cp, key, false);
          FieldPath kp = Checks.keyPath(cp, key);
          DeviceCapacity c = value == null ? new DeviceCapacity() : value;
          Checks.quantity(e, kp.child("value"), c.getValue());
          if (c.getRequestPolicy() != null) {
            if (multiple) {
              requestPolicy(e, kp.child("requestPolicy"), c.getRequestPolicy());
            } else {
              e.forbidden(kp.child("requestPolicy"), "allowMultipleAllocations must be true");
            }
          }
        });
    taints(e, p.child("taints"), list(d.getTaints()));
    consumesCounters(e, p.child("consumesCounters"), list(d.getConsumesCounters()));
    nodeSelection(e, p, d, perDeviceNodeSelection);
    bindingConditions(e, p, list(d.getBindingConditions()), list(d.getBindingFailureConditions()));
  }

  /** Exactly one typed value; version strict semver; string and version at most 64 bytes. */
  static void attribute(Errors e, FieldPath p, DeviceAttribute a) {
    int set =
        (a.getInt() != null ? 1 : 0)
            + (a.getBool() != null ? 1 : 0)
            + (a.getString() != null ? 1 : 0)
            + (a.getVersion() != null ? 1 : 0);
    if (a.getString() != null
        && Names.bytes(a.getString()) > Limits.DEVICE_ATTRIBUTE_MAX_VALUE_LENGTH) {
      e.tooLong(p.child("string"), Limits.DEVICE_ATTRIBUTE_MAX_VALUE_LENGTH);
    }
    if (a.getVersion() != null) {
      if (!Semver.isSemver(a.getVersion(), false)) {
        e.invalid(p.child("version"), a.getVersion(), Names.SEMVER_ERROR);
      }
      if (Names.bytes(a.getVersion()) > Limits.DEVICE_ATTRIBUTE_MAX_VALUE_LENGTH) {
        e.tooLong(p.child("version"), Limits.DEVICE_ATTRIBUTE_MAX_VALUE_LENGTH);
      }
    }
    if (set != 1) {
      e.invalid(p, set == 0 ? "" : null, "exactly one value must be specified");
    }
  }

  /** Only reached with allowMultipleAllocations; the range arithmetic is left to upstream. */
  private static void requestPolicy(Errors e, FieldPath p, CapacityRequestPolicy policy) {
    boolean values = !list(policy.getValidValues()).isEmpty();
    if (values && policy.getValidRange() != null) {
      e.forbidden(
          p,
          "exactly one policy can be specified, cannot specify \"validValues\" and "
              + "\"validRange\" at the same time");
      return;
    }
    if ((values || policy.getValidRange() != null) && policy.getDefault() == null) {
      e.required(
          p.child("default"),
          "required when " + (values ? "validValues" : "validRange") + " is defined");
    }
    if (values
        && e.withinLimit(
            p.child("validValues"),
            policy.getValidValues(),
            Limits.CAPACITY_REQUEST_POLICY_DISCRETE_MAX_OPTIONS)) {
      for (int i = 0; i < policy.getValidValues().size(); i++) {
        Checks.quantity(e, p.child("validValues").index(i), policy.getValidValues().get(i));
      }
    }
  }

  static void taints(Errors e, FieldPath p, List<DeviceTaint> taints) {
    if (!e.withinLimit(p, taints, Limits.DEVICE_TAINTS_MAX_LENGTH)) {
      return;
    }
    for (int i = 0; i < taints.size(); i++) {
      DeviceTaint t = taints.get(i) == null ? new DeviceTaint() : taints.get(i);
      FieldPath tp = p.index(i);
      String key = t.getKey() == null ? "" : t.getKey();
      e.invalid(tp.child("key"), key, Names.labelName(key));
      if (!isEmpty(t.getValue())) {
        e.invalid(tp.child("value"), t.getValue(), Names.labelValue(t.getValue()));
      }
      if (isEmpty(t.getEffect())) {
        e.required(tp.child("effect"), "");
      } else if (!Checks.TAINT_EFFECTS.contains(t.getEffect())) {
        e.notSupported(tp.child("effect"), t.getEffect(), Checks.TAINT_EFFECTS);
      }
    }
  }

  private static void consumesCounters(
      Errors e, FieldPath p, List<DeviceCounterConsumption> consumptions) {
    if (!e.withinLimit(
        p, consumptions, Limits.RESOURCE_SLICE_MAX_DEVICE_COUNTER_CONSUMPTIONS_PER_DEVICE)) {
      return;
    }
    for (int i = 0; i < consumptions.size(); i++) {
      DeviceCounterConsumption c =
          consumptions.get(i) == null ? new DeviceCounterConsumption() : consumptions.get(i);
      FieldPath cp = p.index(i);
      Checks.requiredName(
          e, cp.child("counterSet"), c.getCounterSet(), Names.dns1123Label(c.getCounterSet()));
      counters(
          e,
          cp.child("counters"),
          map(c.getCounters()),
          Limits.RESOURCE_SLICE_MAX_COUNTERS_PER_DEVICE_COUNTER_CONSUMPTION);
    }
    e.unique(p, consumptions, c -> c == null ? "" : c.getCounterSet());
  }

  /** Counters of a set or a consumption: 1..max entries, DNS-label names, valid quantities. */
  static void counters(Errors e, FieldPath p, Map<String, Counter> counters, int max) {
    if (counters.isEmpty()) {
      e.required(p, "");
      return;
    }
    if (counters.size() > max) {
      e.tooMany(p, counters.size(), max);
      return;
    }
    counters.forEach(
        (name, counter) -> {
          e.invalid(p, name, Names.dns1123Label(name));
          Checks.quantity(
              e, p.key(name).child("value"), counter == null ? null : counter.getValue());
        });
  }

  private static void nodeSelection(Errors e, FieldPath p, Device d, boolean perDevice) {
    if (!perDevice) {
      if (d.getNodeName() != null || d.getNodeSelector() != null || d.getAllNodes() != null) {
        e.invalid(
            p,
            null,
            "`nodeName`, `nodeSelector` and `allNodes` can only be set if "
                + "`perDeviceNodeSelection` is set to true in the ResourceSlice spec");
      }
      return;
    }
    List<String> set = new ArrayList<>();
    if (d.getNodeName() != null) {
      if (d.getNodeName().isEmpty()) {
        e.invalid(p.child("nodeName"), "", "must not be empty");
      } else {
        set.add("`nodeName`");
        ResourceSliceValidator.nodeName(e, p.child("nodeName"), d.getNodeName());
      }
    }
    if (d.getNodeSelector() != null) {
      set.add("`nodeSelector`");
    }
    ResourceSliceValidator.mustBeTrue(e, p.child("allNodes"), d.getAllNodes(), "`allNodes`", set);
    if (set.isEmpty()) {
      e.required(p, PER_DEVICE_FIELDS);
    } else if (set.size() > 1) {
      e.invalid(p, "{" + String.join(", ", set) + "}", PER_DEVICE_FIELDS);
    }
  }

  /** Both lists or neither, at most 4 label names each, no duplicates, no overlap. */
  private static void bindingConditions(
      Errors e, FieldPath p, List<String> conditions, List<String> failures) {
    FieldPath cp = p.child("bindingConditions");
    FieldPath fp = p.child("bindingFailureConditions");
    labelNames(e, cp, conditions, Limits.BINDING_CONDITIONS_MAX_SIZE);
    labelNames(e, fp, failures, Limits.BINDING_FAILURE_CONDITIONS_MAX_SIZE);
    e.unique(cp, conditions, c -> c);
    e.unique(fp, failures, c -> c);
    Set<String> set = new HashSet<>(conditions);
    for (int i = 0; i < failures.size(); i++) {
      if (set.contains(failures.get(i))) {
        e.invalid(
            fp.index(i),
            failures.get(i),
            "bindingFailureConditions must not overlap with bindingConditions");
      }
    }
    if (conditions.isEmpty() && !failures.isEmpty()) {
      e.invalid(cp, null, "bindingConditions are required to use bindingFailureConditions");
    }
    if (failures.isEmpty() && !conditions.isEmpty()) {
      e.invalid(fp, null, "bindingFailureConditions are required to use bindingConditions");
    }
  }

  private static void labelNames(Errors e, FieldPath p, List<String> names, int max) {
    if (e.withinLimit(p, names, max)) {
      for (int i = 0; i < names.size(); i++) {
        e.invalid(p.index(i), names.get(i), Names.labelName(names.get(i)));
      }
    }
  }
}
