package io.kdra.slicepublisher.domain;

import io.fabric8.kubernetes.api.model.resource.v1.Device;
import io.fabric8.kubernetes.api.model.resource.v1.ResourceSlice;
import io.fabric8.kubernetes.api.model.resource.v1.ResourceSliceSpec;
import io.kdra.core.model.NewerFields;
import java.util.ArrayList;
import java.util.Collection;
import java.util.List;
import java.util.function.Function;

/**
 * Which Kubernetes features the API server has off, judged from the fields it dropped when it
 * stored a slice: an older server (1.34 and 1.35 have device taints, partitionable devices,
 * consumable capacity and binding conditions off by default) silently drops the fields of a feature
 * that is off. Upstream's ResourceSlice controller makes the same guess ({@code
 * DroppedFieldsError.DisabledFeatures} in {@code k8s.io/dynamic-resource-allocation/
 * resourceslice}); these are its rules for the fields this publisher writes. Pure.
 */
public final class DisabledFeatures {

  private DisabledFeatures() {}

  /**
   * The upstream feature-gate names whose fields {@code sent} has and {@code stored} lacks, in
   * upstream's order; empty when nothing this class knows was dropped.
   */
  public static List<String> between(ResourceSlice sent, ResourceSlice stored) {
    ResourceSliceSpec want = sent.getSpec();
    ResourceSliceSpec got = stored.getSpec();
    List<Device> wanted = want == null ? List.of() : orEmpty(want.getDevices());
    List<Device> gotten = got == null ? List.of() : orEmpty(got.getDevices());
    List<String> disabled = new ArrayList<>();
    if (anyDevice(wanted, gotten, Device::getTaints, (w, g) -> w > g)) {
      disabled.add("DRADeviceTaints");
    }
    boolean perDeviceNodeSelectionDropped =
        want != null
            && Boolean.TRUE.equals(want.getPerDeviceNodeSelection())
            && (got == null || !Boolean.TRUE.equals(got.getPerDeviceNodeSelection()));
    boolean sharedCountersDropped =
        want != null
            && size(want.getSharedCounters()) > (got == null ? 0 : size(got.getSharedCounters()));
    if (perDeviceNodeSelectionDropped
        || sharedCountersDropped
        || anyDevice(wanted, gotten, Device::getConsumesCounters, (w, g) -> w != g)) {
      disabled.add("DRAPartitionableDevices");
    }
    if (anyDevice(wanted, gotten, Device::getBindingConditions, (w, g) -> w != g)
        || anyDevice(wanted, gotten, Device::getBindingFailureConditions, (w, g) -> w != g)) {
      disabled.add("DRADeviceBindingConditions");
    }
    for (int i = 0; i < Math.min(wanted.size(), gotten.size()); i++) {
      if (wanted.get(i).getAllowMultipleAllocations() != null
          && gotten.get(i).getAllowMultipleAllocations() == null) {
        disabled.add("DRAConsumableCapacity");
        break;
      }
    }
    if (want != null
        && !NewerFields.skipNodeOperations(want).isEmpty()
        && (got == null || NewerFields.skipNodeOperations(got).isEmpty())) {
      disabled.add("DRAOptionalNodeOperations");
    }
    return disabled;
  }

  /** Whether some device's list {@code field} compares as {@code dropped} (sizes: sent, stored). */
  private static boolean anyDevice(
      List<Device> wanted,
      List<Device> gotten,
      Function<Device, Collection<?>> field,
      Sizes dropped) {
    for (int i = 0; i < Math.min(wanted.size(), gotten.size()); i++) {
      if (dropped.test(size(field.apply(wanted.get(i))), size(field.apply(gotten.get(i))))) {
        return true;
      }
    }
    return false;
  }

  /** A comparison of a list's size as sent and as stored. */
  private interface Sizes {
    boolean test(int sent, int stored);
  }

  private static int size(Collection<?> c) {
    return c == null ? 0 : c.size();
  }

  private static <T> List<T> orEmpty(List<T> list) {
    return list == null ? List.of() : list;
  }
}
