package io.kdra.claimcontroller.domain;

import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.resource.v1.AllocationResult;
import io.fabric8.kubernetes.api.model.resource.v1.ResourceClaim;
import io.fabric8.kubernetes.api.model.resource.v1.ResourceClaimBuilder;
import io.fabric8.kubernetes.api.model.resource.v1.ResourceClaimConsumerReference;
import io.fabric8.kubernetes.api.model.resource.v1.ResourceClaimConsumerReferenceBuilder;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;

/**
 * How to reserve a claim for a pod, allocating it first when the scheduling decision says so, in
 * the order of the scheduler's PreBind: the finalizer (a metadata update) before the allocation, so
 * that an allocated claim is always protected, then {@code status.allocation} and the pod's {@code
 * reservedFor} entry in one status update. Decided against the claim as read just before writing,
 * so that a claim changed since the decision is never overwritten. Pure.
 */
public final class Reservation {

  private Reservation() {}

  /** The decision for one claim. */
  public sealed interface Step {

    /** Already allocated (as planned) and reserved for the pod: nothing to write. */
    record Done() implements Step {}

    /**
     * Write these: {@code withFinalizer} (non-null only when the finalizer or an annotation is
     * missing) through a metadata update, then {@code withStatus} through a status update.
     */
    record Write(ResourceClaim withFinalizer, ResourceClaim withStatus) implements Step {}

    /** The decision no longer holds (allocated or deallocated meanwhile): schedule again. */
    record Stale(String reason) implements Step {}

    /** The claim cannot take the pod now: retry later. */
    record Refused(String reason) implements Step {}
  }

  /**
   * Decides how to reserve {@code current} for {@code pod}.
   *
   * @param allocation the allocation to write, or null when the decision relied on the claim being
   *     allocated already
   * @param relied with {@code allocation} null, the allocation the decision saw on the claim (null:
   *     it saw none): a claim allocated again since (deallocated, then allocated by another pod,
   *     maybe on another node) is stale, never reserved for a pod placed where its first allocation
   *     was. Stricter than upstream's {@code bindClaim} (v1.37.2), which after a conflict reserves
   *     the claim as read again whatever its allocation; its first write, as here, is made on the
   *     version the decision saw
   * @param annotations annotations the claim must carry, added where their key is missing (existing
   *     values are never overwritten): the scheduler marker, so that cleanup stays within claims
   *     this controller touched, and the trace context
   */
  public static Step decide(
      ResourceClaim current,
      Pod pod,
      AllocationResult allocation,
      AllocationResult relied,
      Map<String, String> annotations) {
    return decide(current, PodGroupClaims.podConsumer(pod), allocation, relied, annotations);
  }

  /**
   * As above, for {@code consumer}: the pod, or its PodGroup for a claim the group's members share
   * ({@link PodGroupClaims#consumerFor}), already reserved when an earlier member reserved it.
   */
  public static Step decide(
      ResourceClaim current,
      ResourceClaimConsumerReference consumer,
      AllocationResult allocation,
      AllocationResult relied,
      Map<String, String> annotations) {
    AllocationResult have =
        current.getStatus() == null ? null : current.getStatus().getAllocation();
    if (allocation != null && have != null) {
      return new Step.Stale("claim " + name(current) + " was allocated meanwhile");
    }
    if (allocation == null && have == null) {
      return new Step.Stale("claim " + name(current) + " was deallocated meanwhile");
    }
    if (allocation == null && (relied == null || !sameAllocation(have, relied))) {
      return new Step.Stale("claim " + name(current) + " was allocated again meanwhile");
    }
    var reserved =
        current.getStatus() == null || current.getStatus().getReservedFor() == null
            ? List.<ResourceClaimConsumerReference>of()
            : current.getStatus().getReservedFor();
    boolean isReserved = reserved.stream().anyMatch(r -> consumer.getUid().equals(r.getUid()));
    if (isReserved && allocation == null) {
      return new Step.Done();
    }
    if (current.getMetadata().getDeletionTimestamp() != null) {
      return new Step.Refused("claim " + name(current) + " is being deleted");
    }
    if (reserved.size() >= Upstream.MAX_RESERVED_FOR) {
      return new Step.Refused(
          "claim "
              + name(current)
              + " is already reserved for "
              + Upstream.MAX_RESERVED_FOR
              + " consumers");
    }
    List<String> finalizers =
        current.getMetadata().getFinalizers() == null
            ? List.of()
            : current.getMetadata().getFinalizers();
    Map<String, String> present =
        current.getMetadata().getAnnotations() == null
            ? Map.of()
            : current.getMetadata().getAnnotations();
    Map<String, String> missing = new LinkedHashMap<>();
    annotations.forEach(
        (k, v) -> {
          if (!present.containsKey(k)) {
            missing.put(k, v);
          }
        });
    boolean marked = missing.isEmpty();
    ResourceClaim meta = null;
    ResourceClaim base = current;
    if ((allocation != null && !finalizers.contains(Upstream.FINALIZER)) || !marked) {
      ResourceClaimBuilder b =
          new ResourceClaimBuilder(current).editMetadata().addToAnnotations(missing).endMetadata();
      if (allocation != null && !finalizers.contains(Upstream.FINALIZER)) {
        b.editMetadata().addToFinalizers(Upstream.FINALIZER).endMetadata();
      }
      meta = b.build();
      base = meta;
    }
    List<ResourceClaimConsumerReference> refs = new ArrayList<>(reserved);
    if (!isReserved) {
      refs.add(new ResourceClaimConsumerReferenceBuilder(consumer).build());
    }
    ResourceClaim status =
        new ResourceClaimBuilder(base)
            .editOrNewStatus()
            .withAllocation(allocation != null ? allocation : have)
            .withReservedFor(refs)
            .endStatus()
            .build();
    return new Step.Write(meta, status);
  }

  /** Whether {@code claim}'s {@code reservedFor} names {@code pod} (by UID). */
  public static boolean reserves(ResourceClaim claim, Pod pod) {
    return claim.getStatus() != null
        && claim.getStatus().getReservedFor() != null
        && claim.getStatus().getReservedFor().stream()
            .anyMatch(r -> pod.getMetadata().getUid().equals(r.getUid()));
  }

  /**
   * As {@link #decide}, for a claim whose allocation this controller sent without an answer ({@code
   * unanswered}: the connection closed, the API server restarted): where the claim still has no
   * allocation and is still at the version the first write was made on, the same one is written
   * again on it, so that the first write either landed (the conflict shows it) or never will; where
   * it has exactly that one (the first write landed), the claim is only reserved. Any other
   * allocation is someone else's: stale. So is no allocation at a version from {@code shownFrom} on
   * (the first version that tells whether the write landed): it did not, or was undone, and the
   * assumption that kept its devices from others goes once the informer shows that version, so the
   * allocation is decided again under the scheduling lock rather than written from this memory.
   */
  public static Step decideUnanswered(
      ResourceClaim current,
      ResourceClaimConsumerReference consumer,
      AllocationResult unanswered,
      long shownFrom,
      Map<String, String> annotations) {
    AllocationResult have =
        current.getStatus() == null ? null : current.getStatus().getAllocation();
    if (have == null) {
      if (ResourceVersions.of(current.getMetadata().getResourceVersion()) >= shownFrom) {
        return new Step.Stale(
            "the allocation of claim " + name(current) + " sent without an answer did not land");
      }
      return decide(current, consumer, unanswered, null, annotations);
    }
    if (!sameAllocation(have, unanswered)) {
      return new Step.Stale("claim " + name(current) + " was allocated meanwhile");
    }
    return decide(current, consumer, null, unanswered, annotations);
  }

  /**
   * Whether both allocations hold the same devices for the same requests on the same nodes: what a
   * pod placed on one relies on. Not the rest (the allocation's timestamp, a device's binding
   * conditions, an object's unknown fields), which a copy read back from the API server may have
   * and an allocation assumed here lacks.
   */
  public static boolean sameAllocation(AllocationResult a, AllocationResult b) {
    return devices(a).equals(devices(b))
        && Objects.equals(a.getNodeSelector(), b.getNodeSelector());
  }

  /**
   * Each allocated device as request, driver, pool, device and share, in the allocation's order.
   */
  private static List<List<String>> devices(AllocationResult a) {
    if (a.getDevices() == null || a.getDevices().getResults() == null) {
      return List.of();
    }
    return a.getDevices().getResults().stream()
        .map(
            r ->
                Arrays.asList(
                    r.getRequest(), r.getDriver(), r.getPool(), r.getDevice(), r.getShareID()))
        .toList();
  }

  private static String name(ResourceClaim c) {
    return c.getMetadata().getName();
  }
}
