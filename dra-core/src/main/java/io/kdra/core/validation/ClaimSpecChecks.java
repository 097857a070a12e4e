package io.kdra.core.validation;

import static io.kdra.core.validation.Checks.isEmpty;
import static io.kdra.core.validation.Checks.list;

import io.fabric8.kubernetes.api.model.resource.v1.DeviceClaim;
import io.fabric8.kubernetes.api.model.resource.v1.DeviceClaimConfiguration;
import io.fabric8.kubernetes.api.model.resource.v1.DeviceConstraint;
import io.fabric8.kubernetes.api.model.resource.v1.DeviceRequest;
import io.fabric8.kubernetes.api.model.resource.v1.DeviceSelector;
import io.fabric8.kubernetes.api.model.resource.v1.DeviceSubRequest;
import io.fabric8.kubernetes.api.model.resource.v1.DeviceToleration;
import io.fabric8.kubernetes.api.model.resource.v1.ExactDeviceRequest;
import io.fabric8.kubernetes.api.model.resource.v1.ResourceClaimSpec;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.stream.Collectors;

/** The checks of a {@code ResourceClaimSpec}, shared by claims and claim templates. */
final class ClaimSpecChecks {

  static final List<String> ALLOCATION_MODES = List.of("All", "ExactCount");
  static final String REQUEST_REF =
      "must be the name of a request in the claim or the name of "
          + "a request and a subrequest separated by '/'";
  static final String EXACTLY_ONE = "exactly one of `exactly` or `firstAvailable` is required";
  static final String ONE_ATTRIBUTE =
      "exactly one of `matchAttribute` or `distinctAttribute` is required";

  private ClaimSpecChecks() {}

  static void spec(Errors e, FieldPath p, ResourceClaimSpec spec) {
    DeviceClaim devices =
        spec == null || spec.getDevices() == null ? new DeviceClaim() : spec.getDevices();
    FieldPath dp = p.child("devices");
    Map<String, Set<String>> names = requestNames(devices);

    List<DeviceRequest> requests = list(devices.getRequests());
    FieldPath rp = dp.child("requests");
    if (e.withinLimit(rp, requests, Limits.DEVICE_REQUESTS_MAX_SIZE)) {
      for (int i = 0; i < requests.size(); i++) {
        request(e, rp.index(i), requests.get(i) == null ? new DeviceRequest() : requests.get(i));
      }
      e.unique(rp, requests, r -> r == null ? "" : r.getName());
    }

    List<DeviceConstraint> constraints = list(devices.getConstraints());
    FieldPath cp = dp.child("constraints");
    if (e.withinLimit(cp, constraints, Limits.DEVICE_CONSTRAINTS_MAX_SIZE)) {
      for (int i = 0; i < constraints.size(); i++) {
        DeviceConstraint c =
            constraints.get(i) == null ? new DeviceConstraint() : constraints.get(i);
        constraint(e, cp.index(i), c, names);
      }
    }

    List<DeviceClaimConfiguration> config = list(devices.getConfig());
    FieldPath fp = dp.child("config");
    if (e.withinLimit(fp, config, Limits.DEVICE_CONFIG_MAX_SIZE)) {
      for (int i = 0; i < config.size(); i++) {
        DeviceClaimConfiguration c =
            config.get(i) == null ? new DeviceClaimConfiguration() : config.get(i);
        requestRefs(e, fp.index(i).child("requests"), list(c.getRequests()), names);
        Checks.opaque(e, fp.index(i), c.getOpaque());
      }
    }
  }

  /** Request name to its subrequest names (empty for a request without firstAvailable). */
  static Map<String, Set<String>> requestNames(DeviceClaim devices) {
    Map<String, Set<String>> names = new HashMap<>();
    for (DeviceRequest r : list(devices.getRequests())) {
      if (r != null) {
        names.put(
            r.getName() == null ? "" : r.getName(),
            list(r.getFirstAvailable()).stream()
                .filter(s -> s != null && s.getName() != null)
                .map(DeviceSubRequest::getName)
                .collect(Collectors.toSet()));
      }
    }
    return names;
  }

  private static void request(Errors e, FieldPath p, DeviceRequest r) {
    Checks.requiredName(e, p.child("name"), r.getName(), Names.dns1123Label(r.getName()));
    List<DeviceSubRequest> subs = list(r.getFirstAvailable());
    boolean hasExactly = r.getExactly() != null;
    if (subs.isEmpty() && !hasExactly) {
      e.required(p, EXACTLY_ONE);
    } else if (!subs.isEmpty() && hasExactly) {
      e.invalid(p, null, EXACTLY_ONE + ", but multiple fields are set");
    } else if (hasExactly) {
      ExactDeviceRequest x = r.getExactly();
      common(
          e,
          p.child("exactly"),
          x.getDeviceClassName(),
          x.getSelectors(),
          x.getAllocationMode(),
          x.getCount(),
          x.getTolerations());
    } else {
      FieldPath fp = p.child("firstAvailable");
      if (e.withinLimit(fp, subs, Limits.FIRST_AVAILABLE_DEVICE_REQUEST_MAX_SIZE)) {
        for (int i = 0; i < subs.size(); i++) {
          DeviceSubRequest s = subs.get(i) == null ? new DeviceSubRequest() : subs.get(i);
          FieldPath sp = fp.index(i);
          Checks.requiredName(e, sp.child("name"), s.getName(), Names.dns1123Label(s.getName()));
          common(
              e,
              sp,
              s.getDeviceClassName(),
              s.getSelectors(),
              s.getAllocationMode(),
              s.getCount(),
              s.getTolerations());
        }
        e.unique(fp, subs, s -> s == null ? "" : s.getName());
      }
    }
  }

  /** The fields exact requests and subrequests share. */
  private static void common(
      Errors e,
      FieldPath p,
      String className,
      List<DeviceSelector> selectors,
      String mode,
      Long count,
      List<DeviceToleration> tolerations) {
    Checks.requiredName(
        e, p.child("deviceClassName"), className, Names.dns1123Subdomain(className));
    Checks.selectors(e, p.child("selectors"), selectors);
    allocationMode(e, p, mode, count);
    Checks.tolerations(e, p.child("tolerations"), tolerations);
  }

  /**
   * Unset mode and count are what the API server defaults (ExactCount, 1); an explicit count must
   * not be negative for ExactCount (0 is defaulted to 1, as the API server does) and must be absent
   * (or 0) for All.
   */
  static void allocationMode(Errors e, FieldPath p, String mode, Long count) {
    String m = isEmpty(mode) ? "ExactCount" : mode;
    switch (m) {
      case "ExactCount" -> {
        // 0 is what an unset count looks like after decoding; the API server defaults it to 1
        if (count != null && count < 0) {
          e.invalid(p.child("count"), count, "must be greater than zero");
        }
      }
      case "All" -> {
        if (count != null && count != 0) {
          e.invalid(p.child("count"), count, "must not be specified when allocationMode is 'All'");
        }
      }
      default -> e.notSupported(p.child("allocationMode"), m, ALLOCATION_MODES);
    }
  }

  private static void constraint(
      Errors e, FieldPath p, DeviceConstraint c, Map<String, Set<String>> names) {
    requestRefs(e, p.child("requests"), list(c.getRequests()), names);
    String match = c.getMatchAttribute();
    String distinct = c.getDistinctAttribute();
    if (match != null && distinct != null) {
      e.invalid(p, null, ONE_ATTRIBUTE + ", but multiple fields are set");
    } else if (match != null) {
      Checks.qualifiedName(e, p.child("matchAttribute"), match, true);
    } else if (distinct != null) {
      Checks.qualifiedName(e, p.child("distinctAttribute"), distinct, true);
    } else {
      e.required(p, ONE_ATTRIBUTE);
    }
  }

  /** References to {@code request} or {@code request/subrequest}; at most 32, unique. */
  static void requestRefs(
      Errors e, FieldPath p, List<String> refs, Map<String, Set<String>> names) {
    if (!e.withinLimit(p, refs, Limits.DEVICE_REQUESTS_MAX_SIZE)) {
      return;
    }
    for (int i = 0; i < refs.size(); i++) {
      requestRef(e, p.index(i), refs.get(i) == null ? "" : refs.get(i), names);
    }
    e.unique(p, refs, r -> r);
  }

  static void requestRef(Errors e, FieldPath p, String ref, Map<String, Set<String>> names) {
    String[] segments = ref.split("/", -1);
    if (segments.length > 2) {
      e.invalid(p, ref, REQUEST_REF);
      return;
    }
    for (String segment : segments) {
      Checks.requiredName(e, p, segment, Names.dns1123Label(segment));
    }
    Set<String> subs = names.get(segments[0]);
    if (subs == null || (segments.length == 2 && !subs.contains(segments[1]))) {
      e.invalid(p, ref, REQUEST_REF);
    }
  }
}
