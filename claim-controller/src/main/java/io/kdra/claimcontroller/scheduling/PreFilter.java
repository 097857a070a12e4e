package io.kdra.claimcontroller.scheduling;

import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.PodResourceClaim;
import io.fabric8.kubernetes.api.model.resource.v1.ResourceClaim;
import io.fabric8.kubernetes.api.model.resource.v1.ResourceClaimConsumerReference;
import io.kdra.claimcontroller.domain.PodClaimResolver;
import io.kdra.claimcontroller.domain.PodGroupClaims;
import io.kdra.claimcontroller.domain.Pods;
import io.kdra.claimcontroller.domain.PreFilterNodeNames;
import io.kdra.claimcontroller.domain.VolumeFilters;
import java.util.ArrayList;
import java.util.Collection;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;

/**
 * kube-scheduler's PreFilter for this scheduler: what it refuses before looking at any node (the
 * volume plugins' PreFilters, {@link VolumeFilters}, and volumes it cannot bind), and the attempt's
 * {@link CycleState}. The extended-resource part is {@link ExtendedPreFilter}'s. Pure.
 */
public final class PreFilter {

  private PreFilter() {}

  /**
   * The {@code PodScheduled} message of {@link #refusal}, when there is one. Public for {@code
   * kubectl dra}.
   */
  public static Optional<String> refusalMessage(Pod pod, ClusterView view) {
    return refusal(pod, view).map(o -> ((Outcome.Unschedulable) o).message());
  }

  /**
   * Why this scheduler cannot place {@code pod} on any node of {@code view} now; empty when it may.
   * A volume plugin's PreFilter reason reads as upstream's ({@code 0/3 nodes are available:
   * persistentvolumeclaim "data" not found.}); a volume this scheduler cannot model names the
   * field. None while node names leave no node ({@link PreFilterNodeNames#refusal}): upstream's
   * earlier PreFilters stop the pod first.
   */
  static Optional<Outcome> refusal(Pod pod, ClusterView view) {
    if (!VolumeFilters.concerns(pod) || PreFilterNodeNames.of(pod).refusal().isPresent()) {
      // NodeName's and NodeAffinity's PreFilters run first in upstream's profile: when they leave
      // no node, their reason is every node's (the filter gives it), not a volume's
      return Optional.empty();
    }
    VolumeFilters.PreFiltered v = VolumeFilters.prefilter(pod, view.volumes(), List::of);
    if (v.refused().isEmpty()) {
      return Optional.empty();
    }
    if (v.unsupported()) {
      return Optional.of(new Outcome.Unschedulable(v.refusal(), Map.of(), "UnsupportedVolume"));
    }
    return Optional.of(
        new Outcome.Unschedulable(
            "0/" + view.nodes().size() + " nodes are available: " + v.refusal() + ".",
            Map.of(),
            "VolumeUnschedulable"));
  }

  /**
   * The attempt's state for {@code pod}, its claims resolved, a member of {@code group} or null.
   */
  static CycleState state(
      Pod pod, PodClaimResolver.Resolution r, PodGroupClaims group, ClusterView view) {
    List<ResourceClaim> claims = distinct(r.claims().values());
    return new CycleState(
        pod,
        claims,
        unallocated(claims),
        ExtendedResources.need(pod, view),
        sharedClaims(pod, group, r));
  }

  static List<ResourceClaim> distinct(Collection<ResourceClaim> cs) {
    Map<String, ResourceClaim> byUid = new LinkedHashMap<>();
    cs.forEach(c -> byUid.putIfAbsent(c.getMetadata().getUid(), c));
    return new ArrayList<>(byUid.values());
  }

  static List<ResourceClaim> unallocated(List<ResourceClaim> claims) {
    return new ArrayList<>(
        claims.stream()
            .filter(c -> c.getStatus() == null || c.getStatus().getAllocation() == null)
            .toList());
  }

  /**
   * The pod's claims that its PodGroup's members share (claim UID to the group's reference), to be
   * reserved for the group rather than the pod.
   */
  static Map<String, ResourceClaimConsumerReference> sharedClaims(
      Pod pod, PodGroupClaims group, PodClaimResolver.Resolution r) {
    Map<String, ResourceClaimConsumerReference> shared = new LinkedHashMap<>();
    if (group == null) {
      return shared;
    }
    Map<String, ResourceClaim> byEntry = r.claims();
    for (PodResourceClaim e : Pods.claimEntries(pod)) {
      ResourceClaim c = byEntry.get(e.getName());
      if (c != null && group.boundEntry(pod, e).isPresent()) {
        shared.put(c.getMetadata().getUid(), group.consumer());
      }
    }
    return shared;
  }
}
