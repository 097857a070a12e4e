package io.kdra.claimcontroller.scheduling;

import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.resource.v1.AllocationResult;
import io.fabric8.kubernetes.api.model.resource.v1.ResourceClaim;
import io.fabric8.kubernetes.client.KubernetesClientException;
import io.kdra.claimcontroller.k8s.ExtendedClaimWriter;
import io.kdra.core.extended.ExtendedResourceClaims;
import io.kdra.events.EventRecorder;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;

/**
 * The write half of an attempt whose pod needs a special claim for its extended resources, in
 * kube-scheduler's PreBind order: create the claim (its in-memory allocation moves to the stored
 * claim's UID), reserve every claim as usual (finalizer, then allocation and {@code reservedFor}),
 * record {@code pod.status.extendedResourceClaimStatus}, then bind. An attempt that does not end
 * bound deletes the claim it created, as upstream's Unreserve.
 */
final class ExtendedClaimWrites {

  /** The writes every attempt makes: PreBind, {@code beforeBind} once it is done, then Bind. */
  @FunctionalInterface
  interface Writes {
    Outcome reserveAndBind(
        Pod pod,
        List<ResourceClaim> podClaims,
        String node,
        Map<String, AllocationResult> allocations,
        Map<String, AllocationResult> relied,
        Map<String, ClaimTracer.TraceSpan> spans,
        Runnable beforeBind);
  }

  private final RecentWrites recent;
  private final ExtendedClaimWriter writer;
  private final Writes writes;
  private final EventRecorder events;

  ExtendedClaimWrites(
      RecentWrites recent, ExtendedClaimWriter writer, Writes writes, EventRecorder events) {
    this.recent = recent;
    this.writer = writer;
    this.writes = writes;
    this.events = events;
  }

  Outcome reserveAndBind(
      Pod pod,
      List<ResourceClaim> podClaims,
      String node,
      Map<String, AllocationResult> allocations,
      Map<String, AllocationResult> relied,
      Map<String, ClaimTracer.TraceSpan> spans,
      ExtendedResources.InMemoryClaim special) {
    String placeholder = special.uid();
    ResourceClaim created;
    try {
      created = writer.create(special.claim(), spans.get(placeholder).annotations());
    } catch (KubernetesClientException e) {
      // nothing of this attempt was written: its assumed devices are free again
      recent.forgetCreated(placeholder);
      allocations.forEach(recent::forgetAllocation);
      if (ApiRefusal.isRefusal(e)) {
        // refused for what it is (a quota, an invalid request): the pod's owner must act
        String why =
            "creating the claim for extended resources "
                + String.join(
                    ", ",
                    special.spec().mappings().stream()
                        .map(m -> m.getResourceName())
                        .distinct()
                        .toList())
                + " was refused: "
                + ApiRefusal.message(e);
        events.warning(pod, "FailedResourceClaimCreation", why);
        return new Outcome.Unschedulable(why, Map.of(), "ClaimRefused");
      }
      throw e;
    }
    String uid = created.getMetadata().getUid();
    // the real claim's allocation is assumed before the placeholder's is dropped: an attempt in
    // between sees the devices taken (perhaps twice), never free
    recent.created(created);
    AllocationResult allocation = allocations.get(placeholder);
    recent.allocated(uid, allocation);
    recent.forgetCreated(placeholder);
    recent.forgetAllocation(placeholder, allocation);

    List<ResourceClaim> claims = new ArrayList<>(podClaims);
    claims.add(created);
    Map<String, AllocationResult> renamed =
        ExtendedResources.renamed(allocations, placeholder, uid);
    Outcome o =
        writes.reserveAndBind(
            pod,
            claims,
            node,
            renamed,
            relied,
            ExtendedResources.renamed(spans, placeholder, uid),
            () ->
                writer.recordStatus(
                    pod,
                    ExtendedResourceClaims.status(
                        special.spec(), created.getMetadata().getName())));
    if (!(o instanceof Outcome.Bound)) {
      writer.delete(created.getMetadata().getNamespace(), created.getMetadata().getName());
      recent.forgetCreated(uid);
      recent.forgetAllocation(uid, allocation);
    }
    return o;
  }
}
