package io.kdra.claimcontroller.domain;

import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.resource.v1.ResourceClaim;
import io.fabric8.kubernetes.api.model.resource.v1.ResourceClaimConsumerReference;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;

/**
 * What to do with one claim whose consumers may be gone, after upstream's resourceclaim controller
 * ({@code syncClaim}), as a pure decision. Writes happen in this order, each with optimistic
 * concurrency: status ({@link #reservedFor}, and the allocation cleared when {@link #deallocate}),
 * then metadata (finalizer removed when {@link #removeFinalizer}), then {@link #delete}.
 *
 * @param reservedFor the entries to keep; only meaningful when {@link #statusChanged}
 * @param statusChanged whether {@code status} must be written (entries removed or deallocation)
 * @param deallocate clear {@code status.allocation}
 * @param removeFinalizer remove {@link Upstream#FINALIZER}
 * @param delete delete the claim: it was generated for a pod that will not run
 * @param removed the removed pod entries, with why, for logs and Events
 */
public record CleanupPlan(
    List<ResourceClaimConsumerReference> reservedFor,
    boolean statusChanged,
    boolean deallocate,
    boolean removeFinalizer,
    boolean delete,
    List<String> removed) {

  /** Whether the plan changes nothing. */
  public boolean isEmpty() {
    return !statusChanged && !removeFinalizer && !delete;
  }

  /**
   * The plan for {@code claim}:
   *
   * <ol>
   *   <li>A pod entry of {@code reservedFor} is removed when the pod is gone, replaced (UID
   *       differs) or done ({@link Pods#isDone}); a PodGroup's entry when the group is gone or
   *       replaced ({@link PodSource#podGroupGone}). Entries for other consumers are kept: their
   *       owners clean them.
   *   <li>When that leaves {@code reservedFor} empty and the claim has the finalizer, the
   *       allocation is cleared in the same status update and then the finalizer removed. A claim
   *       being deleted that is unreserved and carries the finalizer is deallocated and unblocked
   *       the same way. A claim that was never reserved is not deallocated: a driver or user may
   *       have allocated it ahead of use.
   *   <li>An unreserved claim whose controlling owner pod is done, replaced or gone, or whose
   *       controlling PodGroup is gone, is deleted. Upstream leaves the "gone" case to the garbage
   *       collector; this controller deletes it itself, because the garbage collector runs in
   *       kube-controller-manager, which {@link TemplateMode#OWN} clusters may lack.
   * </ol>
   */
  public static CleanupPlan of(ResourceClaim claim, PodSource pods) {
    String ns = claim.getMetadata().getNamespace();
    List<ResourceClaimConsumerReference> current =
        claim.getStatus() == null || claim.getStatus().getReservedFor() == null
            ? List.of()
            : claim.getStatus().getReservedFor();
    List<ResourceClaimConsumerReference> keep = new ArrayList<>();
    List<String> removed = new ArrayList<>();
    for (ResourceClaimConsumerReference ref : current) {
      if (PodGroupClaims.isPodGroup(ref)) {
        // upstream's syncClaim: a PodGroup's entry goes when the group is gone or replaced
        if (pods.podGroupGone(ns, ref.getName(), ref.getUid())) {
          removed.add("podgroup " + ref.getName() + " (gone)");
        } else {
          keep.add(ref);
        }
        continue;
      }
      if (!isPod(ref)) {
        keep.add(ref);
        continue;
      }
      Optional<Pod> pod = pods.pod(ns, ref.getName());
      String why =
          pod.isEmpty()
              ? "gone"
              : !ref.getUid().equals(pod.get().getMetadata().getUid())
                  ? "replaced"
                  : Pods.isDone(pod.get()) ? "done" : null;
      if (why == null) {
        keep.add(ref);
      } else {
        removed.add("pod " + ref.getName() + " (" + why + ")");
      }
    }
    boolean finalizer =
        claim.getMetadata().getFinalizers() != null
            && claim.getMetadata().getFinalizers().contains(Upstream.FINALIZER);
    boolean allocated = claim.getStatus() != null && claim.getStatus().getAllocation() != null;
    boolean deleting = claim.getMetadata().getDeletionTimestamp() != null;
    boolean statusChanged = !removed.isEmpty();
    boolean deallocate = false;
    boolean removeFinalizer = false;
    if (statusChanged && keep.isEmpty() && finalizer) {
      deallocate = allocated;
      removeFinalizer = true;
    } else if (!statusChanged && keep.isEmpty() && finalizer && deleting) {
      deallocate = allocated;
      statusChanged = allocated;
      removeFinalizer = true;
    }
    boolean delete =
        keep.isEmpty() && !deleting && (ownerWillNotRun(claim, pods) || groupGone(claim, pods));
    return new CleanupPlan(
        keep, statusChanged, deallocate, removeFinalizer, delete, List.copyOf(removed));
  }

  private static boolean ownerWillNotRun(ResourceClaim claim, PodSource pods) {
    return TemplateClaims.owningPod(claim)
        .map(
            owner -> {
              Optional<Pod> pod = pods.pod(claim.getMetadata().getNamespace(), owner.getName());
              return pod.isEmpty()
                  || !owner.getUid().equals(pod.get().getMetadata().getUid())
                  || Pods.isDone(pod.get());
            })
        .orElse(false);
  }

  /**
   * Whether the claim's controlling PodGroup is gone: the garbage collector's work, done here for
   * clusters without it, as for a pod's claims.
   */
  private static boolean groupGone(ResourceClaim claim, PodSource pods) {
    return PodGroupClaims.owningPodGroup(claim)
        .map(o -> pods.podGroupGone(claim.getMetadata().getNamespace(), o.getName(), o.getUid()))
        .orElse(false);
  }

  /** Whether a consumer reference names a core pod. */
  public static boolean isPod(ResourceClaimConsumerReference ref) {
    return (ref.getApiGroup() == null || ref.getApiGroup().isEmpty())
        && "pods".equals(ref.getResource());
  }
}
