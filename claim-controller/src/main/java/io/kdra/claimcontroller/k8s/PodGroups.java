package io.kdra.claimcontroller.k8s;

import io.kdra.claimcontroller.domain.PodGroupPolicy;
import java.util.Map;
import java.util.Optional;

/** Reads PodGroups ({@code scheduling.k8s.io/v1beta1}, Kubernetes 1.37's Workload API). */
public interface PodGroups {

  /** The PodGroup's policy; empty when it does not exist (yet) or the API is not served. */
  Optional<PodGroupPolicy> get(String namespace, String name);

  /**
   * Records the group's claims in {@code status.resourceClaimStatuses} (entry name to claim name,
   * every entry this controller records): upstream's server-side apply of the resourceclaim
   * controller. Only groups with claims of their own are written.
   */
  default void recordClaims(String namespace, String name, Map<String, String> statuses) {
    throw new UnsupportedOperationException("PodGroups are read-only here");
  }

  /**
   * Records on the group that preemption for pod {@code preemptorUid}, nominated to {@code node},
   * evicts every placed member of it ({@link io.kdra.claimcontroller.domain.GroupPreemption}).
   */
  default void recordPreemption(String namespace, String name, String preemptorUid, String node) {
    throw new UnsupportedOperationException("PodGroups are read-only here");
  }

  /**
   * Records on the group that it is placed again ({@code members} pods) since preemption for pod
   * {@code preemptorUid} evicted it: its {@code DisruptionTarget} condition back to False ({@link
   * io.kdra.claimcontroller.domain.GroupPreemption#conditionsPlacedAgain}).
   */
  default void recordPlacedAgain(String namespace, String name, String preemptorUid, int members) {
    throw new UnsupportedOperationException("PodGroups are read-only here");
  }

  /**
   * Whether PodGroup {@code namespace/name} with {@code uid} is gone or replaced (another UID), as
   * the API server says: a claim's reservation or the claim itself is dropped on this answer, so it
   * is never a guess. A group being deleted still exists.
   */
  default boolean gone(String namespace, String name, String uid) {
    throw new UnsupportedOperationException("this PodGroups cannot tell whether a group is gone");
  }

  /** For a cluster without the Workload API: no pod names a group that exists. */
  PodGroups NONE = (namespace, name) -> Optional.empty();
}
