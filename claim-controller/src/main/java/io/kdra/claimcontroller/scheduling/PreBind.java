package io.kdra.claimcontroller.scheduling;

import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.resource.v1.AllocationResult;
import io.fabric8.kubernetes.api.model.resource.v1.ResourceClaim;
import io.fabric8.kubernetes.api.model.resource.v1.ResourceClaimConsumerReference;
import io.kdra.claimcontroller.domain.PodGroupClaims;
import io.kdra.claimcontroller.domain.Reservation;
import io.kdra.claimcontroller.k8s.ClaimWriter;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.function.BooleanSupplier;

/**
 * kube-scheduler's PreBind for this scheduler (DynamicResources' {@code bindClaim}): every claim
 * reserved for the pod, or for its PodGroup where the members share it (finalizer, then allocation
 * and {@code reservedFor}), decided on the informer's copy. A write refused as stale undoes the
 * reservations made so far and releases the allocations assumed for the rest, so their devices are
 * free for the next decision; an allocation whose write may have reached the API server stays
 * assumed until the informer shows the truth. Each write asks the Lease fence right before it goes
 * out; once it says no, nothing more is written, not even an undo: whoever leads next finds the
 * claims reserved for the pod and binds it there.
 */
final class PreBind {

  private final ClusterView view;
  private final RecentWrites recent;
  private final ClaimWriter claims;
  private final BooleanSupplier mayWrite;

  /**
   * @param mayWrite asked right before each write (this replica's Lease is fresh): the decision was
   *     made earlier, and the Lease may have gone stale since (a long search, a GC pause, a frozen
   *     process), with another replica leading and deciding meanwhile
   */
  PreBind(ClusterView view, RecentWrites recent, ClaimWriter claims, BooleanSupplier mayWrite) {
    this.view = view;
    this.recent = recent;
    this.claims = claims;
    this.mayWrite = mayWrite;
  }

  /**
   * Reserves every claim, deciding on the informer's copy where it has one: those in {@code
   * allocations} allocated so, the others only while allocated as in {@code relied} (a claim
   * allocated again elsewhere since the decision is stale); on a stale or refused step, undoes the
   * reservations made so far and forgets the allocations not written.
   */
  Optional<Outcome> reserveAll(
      Pod pod,
      List<ResourceClaim> podClaims,
      Map<String, AllocationResult> allocations,
      Map<String, AllocationResult> relied,
      Map<String, ClaimTracer.TraceSpan> spans,
      Map<String, ResourceClaimConsumerReference> groupClaims) {
    List<ResourceClaim> done = new ArrayList<>();
    // what a rollback deallocates: this attempt's allocations and those it sent again
    Map<String, AllocationResult> ours = new HashMap<>(allocations);
    for (int i = 0; i < podClaims.size(); i++) {
      ResourceClaim c = podClaims.get(i);
      String uid = c.getMetadata().getUid();
      AllocationResult a = allocations.get(uid);
      // an allocation sent before without an answer is sent again if it did not land (see there)
      RecentWrites.Unanswered sentBefore = a == null ? recent.unanswered(uid).orElse(null) : null;
      AllocationResult unanswered = sentBefore == null ? null : sentBefore.allocation();
      if (unanswered != null) {
        ours.put(uid, unanswered);
      }
      AllocationWrite written = new AllocationWrite(a != null ? a : unanswered);
      ResourceClaimConsumerReference consumer =
          groupClaims.containsKey(uid) ? groupClaims.get(uid) : PodGroupClaims.podConsumer(pod);
      Reservation.Step step;
      try {
        step =
            unanswered == null
                ? claims.reserve(
                    c.getMetadata().getNamespace(),
                    c.getMetadata().getName(),
                    cached(c),
                    consumer,
                    a,
                    a == null ? relied.get(uid) : null,
                    spans.get(uid).annotations(),
                    written)
                : claims.reserveUnanswered(
                    c.getMetadata().getNamespace(),
                    c.getMetadata().getName(),
                    cached(c),
                    consumer,
                    unanswered,
                    sentBefore.shownFrom(),
                    spans.get(uid).annotations(),
                    written);
      } catch (RuntimeException e) {
        // this claim's write may have been applied; the claims after it were never written
        if (a != null) {
          written.settle(c);
        } else if (unanswered != null) {
          written.settleAgain(c);
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
        rollback(pod, done, ours);
        forgetAssumed(podClaims.subList(i, podClaims.size()), allocations);
        return Optional.of(
            step instanceof Reservation.Step.Stale s
                ? new Outcome.Retry(s.reason())
                : new Outcome.Unschedulable(
                    ((Reservation.Step.Refused) step).reason(), Map.of(), "ClaimRefused"));
      }
      if (a != null) {
        written.settle(c);
      } else if (unanswered != null) {
        written.settleAgain(c);
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
    /** The allocation written, the assumption this settles: never another attempt's. */
    private final AllocationResult allocation;

    private String sentOn;
    private String stored;
    private boolean fenced;

    AllocationWrite(AllocationResult allocation) {
      this.allocation = allocation;
    }

    @Override
    public boolean mayWrite() {
      fenced = !PreBind.this.mayWrite.getAsBoolean();
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

    void settle(ResourceClaim c) {
      String uid = c.getMetadata().getUid();
      if (stored != null) {
        recent.allocationWritten(uid, allocation, stored);
      } else if (sentOn != null) {
        mayHaveLanded(c);
      } else {
        recent.forgetAllocation(uid, allocation);
      }
    }

    /**
     * As {@link #settle}, for an allocation sent before without an answer: where nothing was sent
     * this time, that first write is still unanswered, and stays assumed.
     */
    void settleAgain(ResourceClaim c) {
      if (stored != null) {
        recent.allocationWritten(c.getMetadata().getUid(), allocation, stored);
      } else if (sentOn != null) {
        mayHaveLanded(c);
      }
    }

    private void mayHaveLanded(ResourceClaim c) {
      recent.allocationMayHaveLanded(
          c.getMetadata().getUid(),
          allocation,
          c.getMetadata().getNamespace(),
          c.getMetadata().getName(),
          sentOn);
    }
  }

  private void forgetAssumed(
      List<ResourceClaim> notWritten, Map<String, AllocationResult> allocations) {
    for (ResourceClaim c : notWritten) {
      String uid = c.getMetadata().getUid();
      if (allocations.containsKey(uid)) {
        recent.forgetAllocation(uid, allocations.get(uid));
      }
    }
  }

  /**
   * Undoes the reservations of {@code podClaims} for {@code pod}, which is gone (its binding found
   * it deleted or replaced): each claim left with no consumer is deallocated, whoever allocated it,
   * as the cleanup (upstream's resourceclaim controller) deallocates a claim when it removes its
   * last consumer that is gone. Not only this attempt's allocations: one sent by an earlier attempt
   * whose answer was lost is the pod's too, and a claim allocated for no consumer is never
   * deallocated by anything.
   */
  void rollbackForGonePod(
      Pod pod, List<ResourceClaim> podClaims, Map<String, AllocationResult> allocations) {
    for (ResourceClaim c : podClaims) {
      claims.release(c.getMetadata().getNamespace(), c.getMetadata().getName(), pod, true);
      String uid = c.getMetadata().getUid();
      if (allocations.containsKey(uid)) {
        recent.forgetAllocation(uid, allocations.get(uid));
      }
    }
  }

  /** Undoes the reservations of {@code done}; those allocated by this attempt are released. */
  void rollback(Pod pod, List<ResourceClaim> done, Map<String, AllocationResult> ours) {
    for (ResourceClaim c : done) {
      boolean allocatedByUs = ours.containsKey(c.getMetadata().getUid());
      claims.release(c.getMetadata().getNamespace(), c.getMetadata().getName(), pod, allocatedByUs);
      if (allocatedByUs) {
        recent.forgetAllocation(c.getMetadata().getUid(), ours.get(c.getMetadata().getUid()));
      }
    }
  }
}
