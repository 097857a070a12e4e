package io.kdra.claimcontroller.scheduling;

import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.resource.v1.ResourceClaim;
import io.fabric8.kubernetes.api.model.resource.v1.ResourceClaimConsumerReference;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;

/**
 * What one attempt works on, made by {@link PreFilter} (upstream's {@code stateData} in the cycle
 * state): the pod, its claims, those of them still to allocate, what it asks for in extended
 * resources, and the claims its PodGroup's members share.
 *
 * @param claims the pod's claims, each once, in the order of its entries; as read when the state
 *     was made (the {@link SchedulingCycle} reads them again under its lock)
 * @param unallocated those of {@code claims} without an allocation
 * @param extended the pod's extended resources; null when it asks for none, or when a special claim
 *     of an earlier attempt carries them
 * @param shared claim UID to the PodGroup's reference, for the claims reserved for the group rather
 *     than the pod
 */
record CycleState(
    Pod pod,
    List<ResourceClaim> claims,
    List<ResourceClaim> unallocated,
    ExtendedResources.Need extended,
    Map<String, ResourceClaimConsumerReference> shared) {

  String uid() {
    return pod.getMetadata().getUid();
  }

  /** The pod's claims allocated before this attempt. */
  List<ResourceClaim> earlier() {
    return claims.stream().filter(c -> !unallocated.contains(c)).toList();
  }

  /**
   * This state with {@code claims} (the same claims, as read now) and those of them unallocated.
   */
  CycleState withClaims(List<ResourceClaim> claims) {
    return new CycleState(pod, claims, PreFilter.unallocated(claims), extended, shared);
  }

  /**
   * This state going on with the special claim of an earlier attempt, allocated and reserved for
   * the pod: it carries the pod's extended resources.
   */
  CycleState withExtendedClaim(ResourceClaim earlier) {
    List<ResourceClaim> all = new ArrayList<>(claims);
    all.add(earlier);
    return new CycleState(pod, all, unallocated, null, shared);
  }
}
