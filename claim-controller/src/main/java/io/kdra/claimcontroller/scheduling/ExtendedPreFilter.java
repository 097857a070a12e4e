package io.kdra.claimcontroller.scheduling;

import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.resource.v1.ResourceClaim;
import io.kdra.claimcontroller.domain.Pods;
import io.kdra.claimcontroller.domain.Reservation;
import io.kdra.claimcontroller.k8s.ExtendedClaimWriter;
import io.kdra.core.extended.ExtendedResourceClaims;
import java.util.Optional;

/**
 * The extended-resource part of PreFilter (upstream's {@code preFilterExtendedResources}), for a
 * pod whose extended resources a DeviceClass serves: a special claim of an earlier attempt that is
 * allocated, reserved for the pod and recorded in its status carries them (only the binding was
 * left: a restart, or this copy of the pod predates its binding); any other is deleted and the pod
 * scheduled again, as kube-scheduler's PostFilter does. While this process may still be binding the
 * pod, nothing is touched.
 */
final class ExtendedPreFilter {

  /** The state to go on with, or, when {@code stop} is not null, the attempt's outcome. */
  record Result(CycleState state, Outcome stop) {}

  private final DraManager dra;
  private final ExtendedClaimWriter writer;

  ExtendedPreFilter(DraManager dra, ExtendedClaimWriter writer) {
    this.dra = dra;
    this.writer = writer;
  }

  Result apply(CycleState s) {
    if (s.extended() == null || !s.extended().served()) {
      return new Result(s, null);
    }
    Pod pod = s.pod();
    Optional<ResourceClaim> earlier =
        ExtendedResourceClaims.find(
            pod, dra.claims().ownedBy(pod.getMetadata().getNamespace(), s.uid()));
    if (earlier.isEmpty()) {
      return new Result(s, null);
    }
    Outcome stale = earlierClaim(pod, earlier.get());
    return stale != null
        ? new Result(s, stale)
        : new Result(s.withExtendedClaim(earlier.get()), null);
  }

  /** Null when the attempt goes on with {@code earlier}; else why not (it is deleted). */
  private Outcome earlierClaim(Pod pod, ResourceClaim earlier) {
    String name = earlier.getMetadata().getName();
    if (dra.recent().isBinding(pod.getMetadata().getUid())) {
      return new Outcome.Retry(
          "pod " + Pods.key(pod) + " is being bound with its extended " + "resource claim " + name);
    }
    boolean recorded =
        pod.getStatus() != null
            && pod.getStatus().getExtendedResourceClaimStatus() != null
            && name.equals(pod.getStatus().getExtendedResourceClaimStatus().getResourceClaimName());
    if (recorded
        && earlier.getMetadata().getDeletionTimestamp() == null
        && earlier.getStatus() != null
        && earlier.getStatus().getAllocation() != null
        && Reservation.reserves(earlier, pod)) {
      return null;
    }
    writer.delete(earlier.getMetadata().getNamespace(), name);
    dra.recent().forgetCreated(earlier.getMetadata().getUid());
    return new Outcome.Retry(
        "deleted the extended resource claim " + name + " of an earlier attempt; scheduling again");
  }
}
