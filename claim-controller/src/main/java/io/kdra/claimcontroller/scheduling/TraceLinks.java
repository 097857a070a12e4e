package io.kdra.claimcontroller.scheduling;

import io.fabric8.kubernetes.api.model.HasMetadata;
import io.fabric8.kubernetes.api.model.resource.v1.AllocationResult;
import io.fabric8.kubernetes.api.model.resource.v1.DeviceRequestAllocationResult;
import io.fabric8.kubernetes.api.model.resource.v1.ResourceSlice;
import io.kdra.claimcontroller.domain.Kdra;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Objects;
import java.util.Set;
import java.util.function.BiFunction;

/**
 * The {@code kdra.io/traceparent} of the objects a claim's operation used, for span links: the
 * template a claim was made from (the computeclass-bridge's write), the slices its devices were
 * allocated from (the slice-publisher's write).
 */
final class TraceLinks {

  private TraceLinks() {}

  /** The object's trace context, or null when it carries none. */
  static String of(HasMetadata object) {
    if (object == null || object.getMetadata().getAnnotations() == null) {
      return null;
    }
    return object.getMetadata().getAnnotations().get(Kdra.TRACE_ANNOTATION);
  }

  /**
   * The trace contexts of the slices that list an allocated device (by driver, pool and device
   * name), distinct, in the order of the results; {@code poolSlices} gives the slices of a driver's
   * pool.
   */
  static Set<String> ofSlices(
      BiFunction<String, String, List<ResourceSlice>> poolSlices, AllocationResult allocation) {
    Set<String> out = new LinkedHashSet<>();
    if (allocation == null
        || allocation.getDevices() == null
        || allocation.getDevices().getResults() == null) {
      return out;
    }
    for (DeviceRequestAllocationResult r : allocation.getDevices().getResults()) {
      if (r.getDriver() == null || r.getPool() == null) {
        continue;
      }
      for (ResourceSlice s : poolSlices.apply(r.getDriver(), r.getPool())) {
        if (lists(s, r)) {
          String tp = of(s);
          if (tp != null) {
            out.add(tp);
          }
        }
      }
    }
    return out;
  }

  /** Whether the slice belongs to pool {@code pool} of driver {@code driver}. */
  static boolean ofPool(ResourceSlice s, String driver, String pool) {
    var spec = s.getSpec();
    return spec != null
        && Objects.equals(spec.getDriver(), driver)
        && spec.getPool() != null
        && Objects.equals(spec.getPool().getName(), pool);
  }

  private static boolean lists(ResourceSlice s, DeviceRequestAllocationResult r) {
    return ofPool(s, r.getDriver(), r.getPool())
        && s.getSpec().getDevices() != null
        && s.getSpec().getDevices().stream()
            .anyMatch(d -> Objects.equals(d.getName(), r.getDevice()));
  }
}
