package io.kdra.claimcontroller.scheduling;

import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.resource.v1.AllocationResult;
import io.fabric8.kubernetes.api.model.resource.v1.ResourceClaim;
import io.fabric8.kubernetes.api.model.resource.v1.ResourceClaimConsumerReference;
import io.fabric8.kubernetes.client.KubernetesClientException;
import io.kdra.claimcontroller.domain.Pods;
import io.kdra.claimcontroller.domain.Reservation;
import io.kdra.claimcontroller.k8s.ClaimWriter;
import io.kdra.claimcontroller.k8s.PodBinder;
import io.kdra.events.EventRecorder;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.function.BooleanSupplier;

/**
 * The write half of a scheduling attempt ({@link BindingCycle}), after {@link SchedulingCycle}
 * decided and reserved: every claim reserved for the pod (finalizer, then allocation and {@code
 * reservedFor}; upstream's PreBind), then the binding. Runs outside the scheduling lock. A write
 * refused as stale undoes the reservations made so far and releases the allocations assumed for the
 * rest, so their devices are free for the next decision; an allocation whose write may have reached
 * the API server stays assumed until the informer shows the truth. Each write asks the Lease fence
 * right before it goes out; once it says no, nothing more is written, not even an undo: whoever
 * leads next finds the claims reserved for the pod and binds it there.
 */
final class ReserveAndBind {

  private final ClusterView view;
  private final RecentWrites recent;
  private final ClaimWriter claims;
  private final PodBinder binder;
  private final EventRecorder events;
  private final ClaimTracer tracer;
  private final BooleanSupplier mayWrite;

  /**
   * @param mayWrite asked right before each write (this replica's Lease is fresh): the decision was
   *     made earlier, and the Lease may have gone stale since (a long search, a GC pause, a frozen
   *     process), with another replica leading and deciding meanwhile
   */
  ReserveAndBind(
      ClusterView view,
      RecentWrites recent,
      ClaimWriter claims,
      PodBinder binder,
      EventRecorder events,
      ClaimTracer tracer,
      BooleanSupplier mayWrite) {
    this.mayWrite = mayWrite;
    this.view = view;
    this.recent = recent;
    this.claims = claims;
    this.binder = binder;
    this.events = events;
    this.tracer = tracer;
  }

  /**
   * Reserves {@code podClaims} for {@code pod}, writing {@code allocations} (claim UID to result)
   * where given, and binds the pod to {@code node}.
   */
  Outcome reserveAndBind(
      Pod pod,
      List<ResourceClaim> podClaims,
      String node,
      Map<String, AllocationResult> allocations,
      Map<String, ClaimTracer.TraceSpan> spans) {
    return reserveAndBind(pod, podClaims, node, allocations, spans, () -> {});
  }

  /**
   * As above, running {@code beforeBind} once every claim is reserved (the rest of PreBind: the
   * pod's extended resource claim status); if it fails, the reservations are undone.
   */
  Outcome reserveAndBind(
      Pod pod,
      List<ResourceClaim> podClaims,
      String node,
      Map<String, AllocationResult> allocations,
      Map<String, ClaimTracer.TraceSpan> spans,
      Runnable beforeBind) {
    return reserveAndBind(pod, podClaims, node, allocations, spans, Map.of(), beforeBind);
  }

  /**
   * As above, reserving the claims in {@code groupClaims} (by UID) for the consumer given there:
   * the pod's PodGroup, for the claims its members share; the others for the pod.
   */
  Outcome reserveAndBind(
      Pod pod,
      List<ResourceClaim> podClaims,
      String node,
      Map<String, AllocationResult> allocations,
      Map<String, ClaimTracer.TraceSpan> spans,
      Map<String, ResourceClaimConsumerReference> groupClaims,
      Runnable beforeBind) {
    Optional<Outcome> failed = reserveAll(pod, podClaims, allocations, spans, groupClaims);
    if (failed.isPresent()) {
      return failed.get();
    }
    if (!mayWrite.getAsBoolean()) {
      return PodScheduling.FENCED; // the reservations stay, as below
    }
    try {
      beforeBind.run();
    } catch (RuntimeException e) {
      rollback(pod, podClaims, allocations);
      throw e;
    }
    if (!mayWrite.getAsBoolean()) {
      // the reservations stay: undoing them is a write too, and whoever leads next binds the pod
      // where its claims are allocated
      return PodScheduling.FENCED;
    }
    List<ClaimTracer.TraceSpan> bindSpans =
        podClaims.stream()
            .map(
                c ->
                    tracer.start(c, "bind").attribute("node", node).attribute("pod", Pods.key(pod)))
            .toList();
    try {
      binder.bind(pod, node);
      bindSpans.forEach(ClaimTracer.TraceSpan::end);
    } catch (KubernetesClientException e) {
      bindSpans.forEach(s -> s.end(e));
      if (e.getCode() != 404 && e.getCode() != 409) {
        throw e;
      }
      // The pod is gone, or replaced by one of the same name (the binding names the UID):
      // nothing will use these reservations, so they are undone now rather than left to cleanup.
      rollback(pod, podClaims, allocations);
      return new Outcome.Waiting(
          "pod "
              + Pods.key(pod)
              + " was deleted or replaced while "
              + "being bound; its reservations were released");
    } catch (RuntimeException e) {
      bindSpans.forEach(s -> s.end(e));
      throw e;
    }
    events.normal(pod, "Scheduled", "Successfully assigned " + Pods.key(pod) + " to " + node);
    return new Outcome.Bound(node);
  }

  /**
   * Reserves every claim, deciding on the informer's copy where it has one; on a stale or refused
   * step, undoes the reservations made so far and forgets the allocations not written.
   */
  private Optional<Outcome> reserveAll(
      Pod pod,
      List<ResourceClaim> podClaims,
      Map<String, AllocationResult> allocations,
      Map<String, ClaimTracer.TraceSpan> spans,
      Map<String, ResourceClaimConsumerReference> groupClaims) {
    List<ResourceClaim> done = new ArrayList<>();
    for (int i = 0; i < podClaims.size(); i++) {
      ResourceClaim c = podClaims.get(i);
      String uid = c.getMetadata().getUid();
      AllocationResult a = allocations.get(uid);
      AllocationWrite written = new AllocationWrite();
      Reservation.Step step;
      try {
        step =
            groupClaims.containsKey(uid)
                ? claims.reserve(
                    c.getMetadata().getNamespace(),
                    c.getMetadata().getName(),
                    cached(c),
                    groupClaims.get(uid),
                    a,
                    spans.get(uid).annotations(),
                    written)
                : claims.reserve(
                    c.getMetadata().getNamespace(),
                    c.getMetadata().getName(),
                    cached(c),
                    pod,
                    a,
                    spans.get(uid).annotations(),
                    written);
      } catch (RuntimeException e) {
        // this claim's write may have been applied; the claims after it were never written
        if (a != null) {
          written.settle(uid);
        }
        forgetAssumed(podClaims.subList(i + 1, podClaims.size()), allocations);
        throw e;
      }
      if (written.fenced) {
        // nothing more is written, the reservations made so far not undone either (see
        // reserveAndBind); the allocations not written are no longer assumed
        forgetAssumed(podClaims.subList(i, podClaims.size()), allocations);
        return Optional.of(PodScheduling.FENCED);
      }
      if (step instanceof Reservation.Step.Stale || step instanceof Reservation.Step.Refused) {
        rollback(pod, done, allocations);
        forgetAssumed(podClaims.subList(i, podClaims.size()), allocations);
        return Optional.of(
            step instanceof Reservation.Step.Stale s
                ? new Outcome.Retry(s.reason())
                : new Outcome.Unschedulable(
                    ((Reservation.Step.Refused) step).reason(), Map.of(), "ClaimRefused"));
      }
      if (a != null) {
        written.settle(uid);
      }
      if (step instanceof Reservation.Step.Write) {
        done.add(c);
      }
    }
    return Optional.empty();
  }

  /**
   * The informer's copy or, for a claim created in this attempt that the informer has not shown
   * yet, the create response: either saves a read, and its resourceVersion guards the writes as a
   * read's would.
   */
  private ResourceClaim cached(ResourceClaim c) {
    return view.claim(c.getMetadata().getNamespace(), c.getMetadata().getName())
        .or(() -> recent.created(c.getMetadata().getNamespace(), c.getMetadata().getName()))
        .orElse(null);
  }

  /**
   * What became of one claim's status writes, told to {@link #recent} once the reservation ended:
   * stored (assumed until the informer shows that version), sent without an answer (assumed until
   * it shows a newer one than the write was made on), or never sent (forgotten).
   */
  private final class AllocationWrite implements ClaimWriter.StatusWrites {
    private String sentOn;
    private String stored;
    private boolean fenced;

    @Override
    public boolean mayWrite() {
      fenced = !ReserveAndBind.this.mayWrite.getAsBoolean();
      return !fenced;
    }

    @Override
    public void sending(String resourceVersion) {
      sentOn = resourceVersion;
      stored = null;
    }

    @Override
    public void stored(String resourceVersion) {
      stored = resourceVersion;
    }

    void settle(String uid) {
      if (stored != null) {
        recent.allocationWritten(uid, stored);
      } else if (sentOn != null) {
        recent.allocationMayHaveLanded(uid, sentOn);
      } else {
        recent.forgetAllocation(uid);
      }
    }
  }

  private void forgetAssumed(
      List<ResourceClaim> notWritten, Map<String, AllocationResult> allocations) {
    for (ResourceClaim c : notWritten) {
      if (allocations.containsKey(c.getMetadata().getUid())) {
        recent.forgetAllocation(c.getMetadata().getUid());
      }
    }
  }

  private void rollback(Pod pod, List<ResourceClaim> done, Map<String, AllocationResult> ours) {
    for (ResourceClaim c : done) {
      boolean allocatedByUs = ours.containsKey(c.getMetadata().getUid());
      claims.release(c.getMetadata().getNamespace(), c.getMetadata().getName(), pod, allocatedByUs);
      if (allocatedByUs) {
        recent.forgetAllocation(c.getMetadata().getUid());
      }
    }
  }
}
