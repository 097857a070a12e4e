package io.kdra.core.alloc;

import io.fabric8.kubernetes.api.model.resource.v1.CapacityRequirements;
import io.fabric8.kubernetes.api.model.resource.v1.DeviceRequest;
import io.fabric8.kubernetes.api.model.resource.v1.DeviceSelector;
import io.fabric8.kubernetes.api.model.resource.v1.DeviceSubRequest;
import io.fabric8.kubernetes.api.model.resource.v1.DeviceToleration;
import io.fabric8.kubernetes.api.model.resource.v1.ExactDeviceRequest;
import io.kdra.core.model.NewerFields;
import io.kdra.core.model.NewerFields.DerivedAttribute;
import io.kdra.core.model.Quantity;
import java.util.Collections;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * One thing to allocate devices for: an {@code exactly} request, or one {@code firstAvailable}
 * subrequest (then {@link #parent} names the request). Upstream's {@code requestAccessor}.
 *
 * @param parent the request name when this is a subrequest, else null
 * @param name the request or subrequest name
 * @param className the DeviceClass name (may be empty: then the request is malformed)
 * @param selectors CEL expressions of the request itself
 * @param all allocation mode All
 * @param count devices for ExactCount (defaults to 1)
 * @param adminAccess requested admin access (never set on subrequests)
 * @param tolerations tolerations, copied into results
 * @param capacityRequests requested capacity by name; empty when none
 * @param hasCapacity whether {@code capacity} was set at all
 * @param allocationMode the allocation mode as written, ExactCount when empty
 * @param derivedAttributes the 1.37 alpha {@code derivedAttributes}: expressions by attribute name
 */
record RequestSpec(
    String parent,
    String name,
    String className,
    List<String> selectors,
    boolean all,
    long count,
    boolean adminAccess,
    List<DeviceToleration> tolerations,
    Map<String, Quantity> capacityRequests,
    boolean hasCapacity,
    String allocationMode,
    Map<String, String> derivedAttributes) {

  /** {@code req} or {@code req/sub}, as written into results. */
  String resultName() {
    return parent == null ? name : parent + "/" + name;
  }

  /** The top-level request name, which constraints and configs refer to. */
  String baseName() {
    return parent == null ? name : parent;
  }

  static RequestSpec of(DeviceRequest request) {
    ExactDeviceRequest e = request.getExactly();
    return make(
        null,
        request.getName(),
        e.getDeviceClassName(),
        e.getSelectors(),
        e.getAllocationMode(),
        e.getCount(),
        Boolean.TRUE.equals(e.getAdminAccess()),
        e.getTolerations(),
        e.getCapacity(),
        NewerFields.derivedAttributes(e));
  }

  static RequestSpec of(DeviceRequest parent, DeviceSubRequest sub) {
    return make(
        parent.getName(),
        sub.getName(),
        sub.getDeviceClassName(),
        sub.getSelectors(),
        sub.getAllocationMode(),
        sub.getCount(),
        false,
        sub.getTolerations(),
        sub.getCapacity(),
        NewerFields.derivedAttributes(sub));
  }

  private static RequestSpec make(
      String parent,
      String name,
      String className,
      List<DeviceSelector> selectors,
      String mode,
      Long count,
      boolean admin,
      List<DeviceToleration> tolerations,
      CapacityRequirements capacity,
      List<DerivedAttribute> derived) {
    List<String> exprs =
        selectors == null
            ? List.of()
            : selectors.stream()
                .map(s -> s.getCel() == null ? null : s.getCel().getExpression())
                .toList();
    Map<String, Quantity> caps = new HashMap<>();
    if (capacity != null && capacity.getRequests() != null) {
      capacity.getRequests().forEach((k, v) -> caps.put(k, Quantities.of(v)));
    }
    String m = mode == null || mode.isEmpty() ? "ExactCount" : mode;
    Map<String, String> expressions = new LinkedHashMap<>();
    derived.forEach(a -> expressions.put(a.name(), a.expression())); // the last one wins

    return new RequestSpec(
        parent,
        name,
        className == null ? "" : className,
        exprs,
        "All".equals(m),
        count == null || count == 0 ? 1 : count,
        admin,
        tolerations == null ? List.of() : List.copyOf(tolerations),
        Map.copyOf(caps),
        capacity != null,
        m,
        Collections.unmodifiableMap(expressions));
  }
}
