package io.kdra.core.taint;

import io.fabric8.kubernetes.api.model.resource.v1.Device;
import io.fabric8.kubernetes.api.model.resource.v1.DeviceBuilder;
import io.fabric8.kubernetes.api.model.resource.v1.DeviceTaint;
import io.fabric8.kubernetes.api.model.resource.v1.ResourceSlice;
import io.fabric8.kubernetes.api.model.resource.v1.ResourceSliceSpec;
import java.util.ArrayList;
import java.util.Collection;
import java.util.Comparator;
import java.util.List;

/**
 * DeviceTaintRules applied to ResourceSlices, as upstream's ResourceSlice tracker does for the
 * scheduler ({@code resourceslice/tracker.applyPatches}): each rule's taint is appended to the
 * taints of every device its selector matches, so the allocator sees it as if the driver had
 * published it. Rules apply in name order (upstream's is the informer's, unordered), so a device's
 * taints and the messages naming them are stable.
 */
public final class DeviceTaintRules {

  private static final Comparator<DeviceTaintRule> BY_NAME =
      Comparator.comparing(r -> r.name() == null ? "" : r.name());

  private DeviceTaintRules() {}

  /**
   * Whether the rule taints device {@code driver/pool/device}: a rule without selector or taint
   * taints nothing; each selector field set must equal the device's.
   */
  public static boolean matches(DeviceTaintRule rule, String driver, String pool, String device) {
    if (rule.getSpec() == null || rule.getSpec().getTaint() == null) {
      return false;
    }
    DeviceTaintSelector s = rule.getSpec().getDeviceSelector();
    if (s == null) {
      return false;
    }
    return (s.getDriver() == null || s.getDriver().equals(driver))
        && (s.getPool() == null || s.getPool().equals(pool))
        && (s.getDevice() == null || s.getDevice().equals(device));
  }

  /** The slices, each with the rules' taints added; slices no rule touches are returned as is. */
  public static List<ResourceSlice> apply(
      Collection<ResourceSlice> slices, Collection<DeviceTaintRule> rules) {
    if (rules.isEmpty()) {
      return List.copyOf(slices);
    }
    List<DeviceTaintRule> ordered = rules.stream().sorted(BY_NAME).toList();
    List<ResourceSlice> out = new ArrayList<>(slices.size());
    for (ResourceSlice slice : slices) {
      out.add(apply(slice, ordered));
    }
    return out;
  }

  private static ResourceSlice apply(ResourceSlice slice, List<DeviceTaintRule> rules) {
    ResourceSliceSpec spec = slice.getSpec();
    if (spec == null || spec.getPool() == null || spec.getDevices() == null) {
      return slice;
    }
    String driver = spec.getDriver();
    String pool = spec.getPool().getName();
    List<Device> devices = new ArrayList<>(spec.getDevices().size());
    boolean changed = false;
    for (Device device : spec.getDevices()) {
      List<DeviceTaint> added = new ArrayList<>();
      for (DeviceTaintRule rule : rules) {
        if (matches(rule, driver, pool, device.getName())) {
          added.add(new RuleTaint(rule.getSpec().getTaint(), rule.name()));
        }
      }
      if (added.isEmpty()) {
        devices.add(device);
        continue;
      }
      List<DeviceTaint> taints =
          new ArrayList<>(device.getTaints() == null ? List.of() : device.getTaints());
      taints.addAll(added);
      Device patched = new DeviceBuilder(device).build();
      patched.setTaints(taints);
      devices.add(patched);
      changed = true;
    }
    if (!changed) {
      return slice;
    }
    ResourceSliceSpec patchedSpec =
        new ResourceSliceSpec(
            spec.getAllNodes(),
            devices,
            spec.getDriver(),
            spec.getNodeName(),
            spec.getNodeSelector(),
            spec.getPerDeviceNodeSelection(),
            spec.getPool(),
            spec.getSharedCounters());
    patchedSpec.setAdditionalProperties(spec.getAdditionalProperties());
    ResourceSlice patched =
        new ResourceSlice(slice.getApiVersion(), slice.getKind(), slice.getMetadata(), patchedSpec);
    patched.setAdditionalProperties(slice.getAdditionalProperties());
    return patched;
  }
}
