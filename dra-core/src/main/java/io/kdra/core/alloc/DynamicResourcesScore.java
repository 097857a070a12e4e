package io.kdra.core.alloc;

import io.fabric8.kubernetes.api.model.resource.v1.AllocationResult;
import io.fabric8.kubernetes.api.model.resource.v1.DeviceRequest;
import io.fabric8.kubernetes.api.model.resource.v1.DeviceRequestAllocationResult;
import io.fabric8.kubernetes.api.model.resource.v1.DeviceSubRequest;
import io.fabric8.kubernetes.api.model.resource.v1.ResourceClaim;
import java.util.HashSet;
import java.util.List;
import java.util.Set;

/**
 * kube-scheduler's DynamicResources Score and NormalizeScore (1.37, {@code
 * plugins/dynamicresources/dynamicresources.go}, {@code computeScore}): for every request of the
 * pod's claims with {@code firstAvailable} subrequests, the chosen subrequest at index {@code i}
 * adds {@code 8 - i} ({@code FirstAvailableDeviceRequestMaxSize - i}); claims allocated in an
 * earlier cycle count with their recorded allocation. Scores are normalised to 0..100 against the
 * highest ({@code helper.DefaultNormalizeScore}); the default profile weighs the plugin 2. Pure.
 */
public final class DynamicResourcesScore {

  /** Upstream's {@code resourceapi.FirstAvailableDeviceRequestMaxSize}. */
  static final long FIRST_AVAILABLE_MAX_SIZE = 8;

  /** Upstream's {@code framework.MaxNodeScore}. */
  public static final long MAX_NODE_SCORE = 100;

  /** The plugin's weight in kube-scheduler's default profile. */
  public static final long WEIGHT = 2;

  private DynamicResourcesScore() {}

  /**
   * The raw score of one claim's allocation ({@code result}: the claim's own allocation when null,
   * for a claim allocated earlier; 0 when it has none).
   */
  public static long raw(ResourceClaim claim, AllocationResult result) {
    AllocationResult allocation =
        result != null
            ? result
            : claim.getStatus() == null ? null : claim.getStatus().getAllocation();
    if (allocation == null
        || allocation.getDevices() == null
        || allocation.getDevices().getResults() == null
        || claim.getSpec() == null
        || claim.getSpec().getDevices() == null
        || claim.getSpec().getDevices().getRequests() == null) {
      return 0;
    }
    Set<String> chosen = new HashSet<>();
    for (DeviceRequestAllocationResult r : allocation.getDevices().getResults()) {
      if (r.getRequest() != null && r.getRequest().contains("/")) {
        chosen.add(r.getRequest());
      }
    }
    long score = 0;
    for (DeviceRequest request : claim.getSpec().getDevices().getRequests()) {
      List<DeviceSubRequest> subs = request.getFirstAvailable();
      if (request.getExactly() != null || subs == null) {
        continue;
      }
      for (int i = 0; i < subs.size(); i++) {
        if (chosen.contains(request.getName() + "/" + subs.get(i).getName())) {
          score += FIRST_AVAILABLE_MAX_SIZE - i;
        }
      }
    }
    return score;
  }

  /**
   * The raw score of claims allocated earlier (their recorded allocations): the same everywhere.
   */
  public static long raw(List<ResourceClaim> allocated) {
    long score = 0;
    for (ResourceClaim c : allocated) {
      score += raw(c, null);
    }
    return score;
  }

  /** The raw score of {@code claims} allocated with {@code results} (in claim order). */
  static long raw(List<ResourceClaim> claims, List<AllocationResult> results) {
    long score = 0;
    for (int i = 0; i < claims.size(); i++) {
      score += raw(claims.get(i), results.get(i));
    }
    return score;
  }

  /** {@code raw} normalised against {@code max}, the highest raw score among the nodes scored. */
  public static long normalized(long raw, long max) {
    return max == 0 ? 0 : MAX_NODE_SCORE * raw / max;
  }
}
