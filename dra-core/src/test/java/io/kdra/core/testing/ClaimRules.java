package io.kdra.core.testing;

import static io.kdra.core.testing.ClaimKeys.id;
import static io.kdra.core.testing.ClaimKeys.key;
import static io.kdra.core.testing.ClaimKeys.list;
import static io.kdra.core.testing.ClaimKeys.results;

import io.fabric8.kubernetes.api.model.resource.v1.AllocationResult;
import io.fabric8.kubernetes.api.model.resource.v1.DeviceRequestAllocationResult;
import io.fabric8.kubernetes.api.model.resource.v1.ResourceClaim;
import io.kdra.core.testing.CheckedWorld.Entry;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * The rules for one claim's allocation, result by result in the order of the results: the device
 * exists in a complete pool and is reachable from the claim's node, its binding conditions are
 * copied, it is free (recorded in {@link DeviceUsage}), and it suits its request (adminAccess,
 * selectors, taints); then the requests' counts ({@link RequestCountRules}) and the claim's
 * constraints ({@link ConstraintRules}).
 */
final class ClaimRules {

  private static final int MAX_RESULTS = 32;

  private final CheckedWorld world;
  private final DeviceMatcher matcher;
  private final RequestCountRules counts;

  ClaimRules(CheckedWorld world, DeviceMatcher matcher) {
    this.world = world;
    this.matcher = matcher;
    this.counts = new RequestCountRules(world, matcher);
  }

  /** Adds the violations of claim {@code c}, allocated for {@code node} (null: none named). */
  void check(ResourceClaim c, String node, DeviceUsage usage, List<String> out) {
    String claim = key(c);
    AllocationResult a = c.getStatus().getAllocation();
    List<DeviceRequestAllocationResult> results = results(c);
    if (results.size() > MAX_RESULTS) {
      out.add(claim + ": " + results.size() + " devices, more than " + MAX_RESULTS);
    }
    Map<String, List<Entry>> byRequest = new LinkedHashMap<>();
    Set<String> inClaim = new HashSet<>();
    for (DeviceRequestAllocationResult r : results) {
      String id = id(r);
      String where = claim + ": request " + r.getRequest() + ": device " + id;
      Entry e = world.device(id);
      if (e == null) {
        out.add(where + " does not exist in the newest generation of its pool");
        continue;
      }
      checkPlacement(where, e, node, a, out);
      checkBinding(where, e, r, out);
      checkUse(where, e, r, claim, usage, inClaim, out);
      RequestSpec spec = RequestSpec.of(c, r.getRequest());
      if (spec == null) {
        out.add(where + ": the claim has no such request");
        continue;
      }
      checkRequest(where, e, r, spec, out);
      byRequest.computeIfAbsent(r.getRequest(), k -> new ArrayList<>()).add(e);
    }
    counts.check(c, claim, node, a.getNodeSelector(), byRequest, out);
    ConstraintRules.check(c, claim, byRequest, out);
  }

  /** A complete pool, reachable from the node; a device that binds to a node needs one named. */
  private void checkPlacement(
      String where, Entry e, String node, AllocationResult a, List<String> out) {
    if (!e.complete()) {
      out.add(where + " is in an incomplete pool");
    }
    String reach = world.reachable(e, node);
    if (reach != null) {
      out.add(where + " " + reach);
    } else if (node == null && a.getNodeSelector() == null && !CheckedWorld.everywhere(e)) {
      out.add(
          where + " is reachable from some nodes only, but the allocation has no node selector");
    }
    if (Boolean.TRUE.equals(e.device().getBindsToNode()) && node == null) {
      out.add(where + " binds to a node, but the allocation names no node");
    }
  }

  /** The device's binding conditions are copied into its result. */
  private static void checkBinding(
      String where, Entry e, DeviceRequestAllocationResult r, List<String> out) {
    if (!list(e.device().getBindingConditions()).equals(list(r.getBindingConditions()))
        || !list(e.device().getBindingFailureConditions())
            .equals(list(r.getBindingFailureConditions()))) {
      out.add(
          where
              + " has binding conditions "
              + list(e.device().getBindingConditions())
              + " / failure conditions "
              + list(e.device().getBindingFailureConditions())
              + ", the result "
              + list(r.getBindingConditions())
              + " / "
              + list(r.getBindingFailureConditions()));
    }
  }

  /** A share has an ID; an exclusive device is free and once in the claim; counters counted. */
  private static void checkUse(
      String where,
      Entry e,
      DeviceRequestAllocationResult r,
      String claim,
      DeviceUsage usage,
      Set<String> inClaim,
      List<String> out) {
    String id = e.id();
    boolean multi = Boolean.TRUE.equals(e.device().getAllowMultipleAllocations());
    boolean admin = Boolean.TRUE.equals(r.getAdminAccess());
    if (multi) {
      if (r.getShareID() == null || r.getShareID().isEmpty()) {
        out.add(where + " allows multiple allocations but has no shareID");
      }
      if (!admin) {
        // an admin's share is not in use either: kube-scheduler's allocated state skips it
        usage.share(id, r.getConsumedCapacity());
      }
    } else if (!admin) {
      String holder = usage.take(id, claim);
      if (holder != null) {
        out.add(where + " is already allocated to " + holder);
      }
    }
    if (!multi && !inClaim.add(id)) {
      out.add(where + " appears twice in the claim");
    }
    if (!admin) {
      usage.count(e);
    }
  }

  /** adminAccess exactly when asked for; the selectors match; the taints are tolerated. */
  private void checkRequest(
      String where, Entry e, DeviceRequestAllocationResult r, RequestSpec spec, List<String> out) {
    boolean admin = Boolean.TRUE.equals(r.getAdminAccess());
    if (admin != spec.adminAccess()) {
      out.add(
          where
              + (admin
                  ? " has adminAccess, which the request does not ask for"
                  : " lacks adminAccess, which the request asks for"));
    }
    String mismatch = matcher.matches(spec, e);
    if (mismatch != null) {
      out.add(where + " " + mismatch);
    }
    String taint = DeviceMatcher.untolerated(e.device(), spec.tolerations());
    if (taint != null) {
      out.add(where + " has taint " + taint + " that the request does not tolerate");
    }
  }
}
