package io.kdra.claimcontroller.scheduling;

import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.resource.v1.AllocationResult;
import io.fabric8.kubernetes.api.model.resource.v1.ResourceClaim;
import io.kdra.claimcontroller.domain.Pods;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import org.jboss.logging.Logger;

/**
 * kube-scheduler's Reserve and Unreserve for this scheduler: a placement's devices and node taken
 * in the assume cache ({@link RecentWrites}, and {@link AllocatedClaims} told at once) before the
 * scheduling lock is released, so that the next pod's decision sees them taken while this one's
 * writes run; given back when they are not written.
 */
final class Reserve {

  private static final Logger LOG = Logger.getLogger(Reserve.class);

  private final DraManager dra;

  Reserve(DraManager dra) {
    this.dra = dra;
  }

  /**
   * Under the lock: the placement's devices and node, taken until its writes are done; or, where a
   * claim it allocates has another allocation assumed already (a bug: the decision saw it
   * unallocated), nothing taken and why, so that the attempt is tried again as stale.
   */
  Optional<String> reserve(Pod pod, List<ResourceClaim> podClaims, Decided.Placement placement) {
    RecentWrites recent = dra.recent();
    if (placement.special() != null) {
      recent.created(placement.special().claim());
    }
    Map<String, AllocationResult> assumed = new HashMap<>();
    for (Map.Entry<String, AllocationResult> e : placement.allocations().entrySet()) {
      try {
        recent.allocated(e.getKey(), e.getValue());
      } catch (IllegalStateException bug) {
        LOG.errorf(
            bug,
            "bug: pod %s was placed allocating a claim assumed allocated already; trying again",
            Pods.key(pod));
        assumed.forEach(recent::forgetUnsent);
        if (placement.special() != null) {
          recent.forgetCreated(placement.special().uid());
        }
        claimsChanged(podClaims);
        return Optional.of(bug.getMessage());
      }
      assumed.put(e.getKey(), e.getValue());
    }
    // (RecentWrites tells the UIDs too; the keys make the next attempt's recheck direct)
    claimsChanged(podClaims);
    if (placement.special() != null) {
      ResourceClaim special = placement.special().claim();
      dra.allocated()
          .claimChanged(special.getMetadata().getNamespace(), special.getMetadata().getName());
    }
    recent.binding(pod, placement.node());
    return Optional.empty();
  }

  /** Under the lock: gives back what {@link #reserve} took for a placement never written. */
  void unreserve(Pod pod, List<ResourceClaim> podClaims, Decided.Placement placement) {
    placement.allocations().forEach(dra.recent()::forgetUnsent);
    claimsChanged(podClaims);
    dra.recent().forgetBinding(pod.getMetadata().getUid());
  }

  /** The binding cycle ended without binding the pod: no longer being bound. */
  void notBound(Pod pod) {
    dra.recent().forgetBinding(pod.getMetadata().getUid());
  }

  /**
   * The binding cycle failed: an assumption whose write never went out would otherwise stay for the
   * claim's lifetime.
   */
  void unsent(Decided.Placement placement) {
    placement.allocations().forEach(dra.recent()::forgetUnsent);
  }

  private void claimsChanged(List<ResourceClaim> claims) {
    claims.forEach(
        c ->
            dra.allocated()
                .claimChanged(c.getMetadata().getNamespace(), c.getMetadata().getName()));
  }
}
