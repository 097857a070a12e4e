package io.kdra.claimcontroller.scheduling;

import io.fabric8.kubernetes.api.model.Node;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.resource.v1.ResourceClaim;
import java.util.List;
import java.util.Map;

/**
 * Placeholder used until dra-core's allocator is wired in: places nothing and says so, so that a
 * pod with unallocated claims is reported unschedulable instead of silently waiting.
 */
public final class UnavailablePodAllocator implements PodAllocator {

  @Override
  public Decision allocate(Pod pod, List<Node> candidates, List<ResourceClaim> unallocated,
      List<ResourceClaim> allClaims, ClusterView view) {
    return new Decision.NotPlaced("no device allocator is configured", Map.of(),
        "NoAllocator");
  }
}
