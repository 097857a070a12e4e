package io.kdra.core.alloc;

import io.fabric8.kubernetes.api.model.resource.v1.DeviceClass;
import io.fabric8.kubernetes.api.model.resource.v1.DeviceConstraint;
import io.fabric8.kubernetes.api.model.resource.v1.DeviceRequest;
import io.fabric8.kubernetes.api.model.resource.v1.ResourceClaim;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;

/**
 * A claim prepared for the search: one {@link RequestPlan} per request, its constraints, and the
 * devices picked so far. Preparation performs upstream's up-front checks (class exists, features
 * enabled, {@code All} device lists, at most 32 devices) and throws {@link AllocationProblem} for
 * the ones upstream reports as errors.
 */
final class ClaimPlan {

  /** Upstream's {@code AllocationResultsMaxSize}. */
  static final int MAX_RESULTS = 32;

  final int index;
  final ResourceClaim claim;
  final List<RequestPlan> requests;
  final List<Constraint> constraints;
  final List<Search.Pick> picks = new ArrayList<>();

  /** One request: a single alternative for {@code exactly}, several for {@code firstAvailable}. */
  static final class RequestPlan {
    final DeviceRequest request;
    final List<RequestData> alternatives;
    final boolean firstAvailable;
    int selected;

    RequestPlan(DeviceRequest request, List<RequestData> alternatives, boolean firstAvailable) {
      this.request = request;
      this.alternatives = alternatives;
      this.firstAvailable = firstAvailable;
    }
  }

  private ClaimPlan(
      int index, ResourceClaim claim, List<RequestPlan> requests, List<Constraint> constraints) {
    this.index = index;
    this.claim = claim;
    this.requests = requests;
    this.constraints = constraints;
  }

  /** A fresh copy with empty search state and new constraint trackers. */
  ClaimPlan copy(List<Constraint> constraints) {
    return new ClaimPlan(index, claim, requests, constraints);
  }

  static ClaimPlan prepare(
      int index,
      ResourceClaim claim,
      DeviceClassLister classes,
      List<Pool> pools,
      AllocatorFeatures features,
      DeviceMatcher matcher,
      AllocatedState allocated) {
    List<RequestPlan> plans = new ArrayList<>();
    List<DeviceRequest> requests =
        claim.getSpec() == null
                || claim.getSpec().getDevices() == null
                || claim.getSpec().getDevices().getRequests() == null
            ? List.of()
            : claim.getSpec().getDevices().getRequests();
    int minDevices = 0;
    for (DeviceRequest request : requests) {
      boolean hasSubs =
          request.getFirstAvailable() != null && !request.getFirstAvailable().isEmpty();
      List<RequestData> alternatives = new ArrayList<>();
      if (hasSubs) {
        if (!features.prioritizedList()) {
          throw problem(
              index,
              request.getName(),
              "has subrequests, but the " + "DRAPrioritizedList feature is disabled");
        }
        int min = Integer.MAX_VALUE;
        for (var sub : request.getFirstAvailable()) {
          RequestData rd =
              prepareRequest(
                  index,
                  RequestSpec.of(request, sub),
                  classes,
                  pools,
                  features,
                  matcher,
                  allocated);
          alternatives.add(rd);
          min = Math.min(min, rd.numDevices());
        }
        minDevices += min;
      } else if (request.getExactly() != null) {
        RequestData rd =
            prepareRequest(
                index, RequestSpec.of(request), classes, pools, features, matcher, allocated);
        alternatives.add(rd);
        minDevices += rd.numDevices();
      } else {
        throw problem(
            index,
            request.getName(),
            "neither exactly nor firstAvailable is set (unsupported request type?)");
      }
      plans.add(new RequestPlan(request, List.copyOf(alternatives), hasSubs));
    }
    if (minDevices > MAX_RESULTS) {
      throw problem(
          index,
          null,
          "number of requested devices "
              + minDevices
              + " exceeds the claim limit of "
              + MAX_RESULTS);
    }
    return new ClaimPlan(index, claim, List.copyOf(plans), constraints(index, claim));
  }

  static List<Constraint> constraints(int index, ResourceClaim claim) {
    List<Constraint> list = new ArrayList<>();
    List<DeviceConstraint> raw =
        claim.getSpec() == null
                || claim.getSpec().getDevices() == null
                || claim.getSpec().getDevices().getConstraints() == null
            ? List.of()
            : claim.getSpec().getDevices().getConstraints();
    for (int i = 0; i < raw.size(); i++) {
      Constraint c = Constraint.of(raw.get(i));
      if (c == null) {
        throw problem(
            index, null, "constraint #" + i + ": empty constraint (unsupported constraint type?)");
      }
      list.add(c);
    }
    return list;
  }

  private static RequestData prepareRequest(
      int index,
      RequestSpec spec,
      DeviceClassLister classes,
      List<Pool> pools,
      AllocatorFeatures features,
      DeviceMatcher matcher,
      AllocatedState allocated) {
    String name = spec.resultName();
    if (!spec.derivedAttributes().isEmpty() && !features.derivedAttributes()) {
      // as upstream: refused rather than ignored, so that no constraint is silently dropped
      throw problem(
          index, name, "cannot handle request with derived attributes, the feature is disabled");
    }
    if (spec.hasCapacity() && !features.consumableCapacity()) {
      throw problem(
          index,
          name,
          "has capacity requests, but the DRAConsumableCapacity " + "feature is disabled");
    }
    for (String s : spec.selectors()) {
      if (s == null) {
        throw problem(index, name, "CEL expression empty (unsupported selector type?)");
      }
    }
    if (spec.adminAccess() && !features.adminAccess()) {
      throw problem(index, name, "admin access is requested, but the feature is disabled");
    }
    if (spec.className().isEmpty()) {
      throw problem(index, name, "missing device class name (unsupported request type?)");
    }
    Optional<DeviceClass> cls = classes.get(spec.className());
    if (cls.isEmpty()) {
      throw new AllocationProblem(
          index,
          name,
          Explanation.Kind.MISSING_CLASS,
          "device class " + spec.className() + " not found",
          null);
    }
    if (!spec.all()) {
      if (!"ExactCount".equals(spec.allocationMode())) {
        throw problem(index, name, "unsupported count mode " + spec.allocationMode());
      }
      if (spec.count() > Integer.MAX_VALUE) {
        throw problem(index, name, "exact count " + spec.count() + " is too large");
      }
      return new RequestData(spec, cls.get(), (int) spec.count(), List.of());
    }
    RequestData rd = new RequestData(spec, cls.get(), 0, List.of());
    List<RequestData.Candidate> all = new ArrayList<>();
    for (Pool pool : pools) {
      if (pool.incomplete()) {
        throw problem(
            index,
            name,
            "asks for all devices, but resource pool "
                + pool.id()
                + " is currently being updated ("
                + pool.slicesPresent()
                + " of "
                + pool.sliceCount()
                + " slices)");
      }
      if (pool.invalid()) {
        throw problem(
            index,
            name,
            "asks for all devices, but resource pool "
                + pool.id()
                + " is currently invalid: "
                + pool.invalidReason());
      }
      for (SliceInfo s : pool.slices()) {
        for (CandidateDevice d : s.devices()) {
          if (matcher.selectable(index, rd, d)
              && (!features.consumableCapacity() || staticCapacityFits(index, spec, d, features))) {
            all.add(new RequestData.Candidate(d, pool));
          }
        }
      }
    }
    return new RequestData(spec, cls.get(), all.size(), List.copyOf(all));
  }

  /**
   * As upstream 1.37: only the device's own capacity counts here, not what other claims consume, so
   * that a matching device that is short of capacity now stays among "all" and fails it.
   */
  private static boolean staticCapacityFits(
      int index, RequestSpec spec, CandidateDevice d, AllocatorFeatures features) {
    try {
      return Capacity.fits(spec, d, Map.of(), features.fractionalCapacityRange());
    } catch (Capacity.CapacityException e) {
      throw problem(
          index,
          spec.resultName(),
          "checking capacity for device " + d.id() + ": " + e.getMessage());
    }
  }

  private static AllocationProblem problem(int index, String request, String message) {
    return new AllocationProblem(index, request, Explanation.Kind.FATAL, message, null);
  }
}
