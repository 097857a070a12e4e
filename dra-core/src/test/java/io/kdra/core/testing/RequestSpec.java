package io.kdra.core.testing;

import io.fabric8.kubernetes.api.model.resource.v1.DeviceRequest;
import io.fabric8.kubernetes.api.model.resource.v1.DeviceSelector;
import io.fabric8.kubernetes.api.model.resource.v1.DeviceSubRequest;
import io.fabric8.kubernetes.api.model.resource.v1.DeviceToleration;
import io.fabric8.kubernetes.api.model.resource.v1.ResourceClaim;
import java.util.List;

/** A request or subrequest as {@link AllocationChecker} needs it. */
record RequestSpec(
    String topName,
    String fullName,
    String className,
    List<DeviceSelector> selectors,
    String mode,
    long count,
    List<DeviceToleration> tolerations,
    boolean firstAvailable,
    boolean adminAccess) {

  /**
   * The request or subrequest a result names ({@code request} or {@code request/subrequest}), or
   * null when the claim has none of that name.
   */
  static RequestSpec of(ResourceClaim c, String resultName) {
    String[] parts = resultName.split("/", 2);
    for (DeviceRequest q : c.getSpec().getDevices().getRequests()) {
      if (!q.getName().equals(parts[0])) {
        continue;
      }
      if (q.getExactly() != null && parts.length == 1) {
        var e = q.getExactly();
        return new RequestSpec(
            q.getName(),
            q.getName(),
            e.getDeviceClassName(),
            e.getSelectors(),
            e.getAllocationMode(),
            e.getCount() == null ? 1 : e.getCount(),
            e.getTolerations(),
            false,
            Boolean.TRUE.equals(e.getAdminAccess()));
      }
      if (q.getFirstAvailable() != null && parts.length == 2) {
        for (DeviceSubRequest s : q.getFirstAvailable()) {
          if (s.getName().equals(parts[1])) {
            return new RequestSpec(
                q.getName(),
                resultName,
                s.getDeviceClassName(),
                s.getSelectors(),
                s.getAllocationMode(),
                s.getCount() == null ? 1 : s.getCount(),
                s.getTolerations(),
                true,
                false);
          }
        }
      }
    }
    return null;
  }
}
