package io.kdra.claimcontroller.scheduling;

import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.resource.v1.ResourceClaim;
import io.kdra.claimcontroller.domain.PodClaimResolver;
import io.kdra.claimcontroller.domain.PodGroupClaims;
import io.kdra.claimcontroller.domain.PodGroupPolicy;
import io.kdra.claimcontroller.domain.Pods;
import io.kdra.claimcontroller.k8s.ClaimWriter;
import java.util.Optional;
import java.util.Set;
import java.util.function.BooleanSupplier;
import java.util.function.Function;
import java.util.stream.Collectors;

/**
 * For a pod bound without this scheduler ({@code spec.nodeName} set by its creator): its allocated
 * claims reserved for it, as upstream's resourceclaim controller does, so that the kubelet may
 * start it. Unallocated claims are left alone: only a scheduler allocates.
 */
final class BoundPodClaims {

  private final DraManager dra;
  private final TemplateClaimController templates;
  private final ClaimWriter claims;
  private final Function<Pod, Optional<PodGroupPolicy>> groupOf;
  private final BooleanSupplier mayWrite;

  /**
   * @param groupOf the pod's PodGroup, empty without one (or without gangs)
   */
  BoundPodClaims(
      DraManager dra,
      TemplateClaimController templates,
      ClaimWriter claims,
      Function<Pod, Optional<PodGroupPolicy>> groupOf,
      BooleanSupplier mayWrite) {
    this.dra = dra;
    this.templates = templates;
    this.claims = claims;
    this.groupOf = groupOf;
    this.mayWrite = mayWrite;
  }

  void reserve(Pod pod) {
    if (!mayWrite.getAsBoolean()) {
      return;
    }
    // a member bound by another member's pass records its group's claims here: without the
    // group its entries would look like its own and get claims of their own
    PodGroupClaims group =
        unrecordedTemplateEntry(pod)
            ? groupOf.apply(pod).map(PodGroupPolicy::claims).orElse(null)
            : null;
    Optional<PodClaimResolver.Resolution> ensured;
    try {
      ensured = templates.ensure(pod, group);
    } catch (ApiRefusal refused) {
      return; // the pod has the Event; its next update or retry tries again
    }
    if (ensured.isEmpty()) {
      return;
    }
    for (ResourceClaim c : PreFilter.distinct(ensured.get().claims().values())) {
      // As the informer shows it, not as assumed: a pod this controller just bound is seen
      // bound before its claims' reservations are; their events bring the pod back here.
      Optional<ResourceClaim> cached =
          dra.view().claim(c.getMetadata().getNamespace(), c.getMetadata().getName());
      if (cached.isEmpty()
          || cached.get().getStatus() == null
          || cached.get().getStatus().getAllocation() == null
          || PodGroupClaims.reservesPodOrGroup(cached.get(), pod)) {
        continue; // nothing to write: pod events reach bound pods often, API calls stay rare
      }
      if (!mayWrite.getAsBoolean()) {
        return;
      }
      // bound already: reserved only while the claim is still allocated as seen here
      claims.reserveAllocated(
          c.getMetadata().getNamespace(),
          c.getMetadata().getName(),
          cached.get(),
          pod,
          cached.get().getStatus().getAllocation());
    }
  }

  /**
   * Whether a member of a PodGroup has a template entry its status does not record yet: only then
   * is the group read for a bound pod (pod events reach bound pods often).
   */
  private static boolean unrecordedTemplateEntry(Pod pod) {
    if (PodGroupPolicy.groupOf(pod).isEmpty()) {
      return false;
    }
    Set<String> recorded =
        pod.getStatus() == null || pod.getStatus().getResourceClaimStatuses() == null
            ? Set.of()
            : pod.getStatus().getResourceClaimStatuses().stream()
                .map(s -> s.getName())
                .collect(Collectors.toSet());
    return Pods.claimEntries(pod).stream()
        .anyMatch(e -> e.getResourceClaimTemplateName() != null && !recorded.contains(e.getName()));
  }
}
