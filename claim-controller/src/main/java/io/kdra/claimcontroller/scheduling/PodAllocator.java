package io.kdra.claimcontroller.scheduling;

import io.fabric8.kubernetes.api.model.Node;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.resource.v1.AllocationResult;
import io.fabric8.kubernetes.api.model.resource.v1.ResourceClaim;
import io.kdra.claimcontroller.domain.NodeFilter;
import io.kdra.core.alloc.AllocatedState;
import io.kdra.core.alloc.Deadline;
import io.kdra.core.alloc.RankedSearch;
import java.util.List;
import java.util.Map;
import java.util.function.Supplier;

/**
 * The "allocate for a pod" step: chooses one node and devices for all of a pod's unallocated claims
 * together. Implementations are pure over their inputs (the dra-core allocator); the caller
 * persists the result, serialises calls, and passes every allocation it knows of (including its own
 * not yet visible in the informers) so that no device is handed out twice.
 */
public interface PodAllocator {

  /**
   * Allocates {@code unallocated} for {@code pod} on the first of {@code candidates} (already
   * filtered for the pod and sorted) where all fit.
   *
   * @param allocated what every claim in the cluster holds, with its current or assumed allocation
   * @param deadline when the search must give up ({@link Decision.NotPlaced#timedOut})
   */
  Decision allocate(
      Pod pod,
      List<Node> candidates,
      List<ResourceClaim> unallocated,
      AllocatedState allocated,
      ClusterView view,
      Deadline deadline);

  /**
   * Allocates {@code unallocated} for {@code pod} on the best of {@code ranked}, walked in its
   * order (highest score first): the first node where all fit, unless the claims' {@code
   * firstAvailable} alternatives make kube-scheduler's DynamicResources score differ from node to
   * node; then the highest total of base and weighted DynamicResources score ({@link
   * RankedSearch}). Without an override, the first fit in {@code ranked}'s order.
   *
   * @param earlier the pod's claims allocated before (their allocations count in that score)
   */
  default Decision allocateRanked(
      Pod pod,
      RankedSearch.Ranked ranked,
      List<ResourceClaim> unallocated,
      List<ResourceClaim> earlier,
      AllocatedState allocated,
      ClusterView view,
      Deadline deadline) {
    return allocate(pod, ranked.order(), unallocated, allocated, view, deadline);
  }

  /**
   * The allocator for searches off the scheduling lock ({@link OffLockSearch}), one at a time,
   * concurrently with this one's under the lock: this one, unless it keeps state between calls.
   */
  default PodAllocator detached() {
    return this;
  }

  /** The answer. */
  sealed interface Decision {

    /**
     * All claims fit on {@code node}.
     *
     * @param allocations claim UID to the allocation to write
     */
    record Placed(String node, Map<String, AllocationResult> allocations) implements Decision {}

    /**
     * No candidate fits.
     *
     * @param message the allocator's explanation, for the pod's condition and Event
     * @param perClaim claim name to its own explanation, for Events on the claims
     * @param reason a short stable reason for metrics
     */
    record NotPlaced(String message, Map<String, String> perClaim, String reason)
        implements Decision {

      /** Whether the search stopped at its deadline rather than ruling every node out. */
      public boolean timedOut() {
        return Outcome.Unschedulable.DEADLINE_EXCEEDED.equals(reason);
      }

      /**
       * The {@code PodScheduled} message when the claims fit on none of the nodes that passed the
       * filter, {@code filtered}: its summary when it rejected some, then this explanation. Public
       * so that {@code kubectl dra} words it as this controller does.
       */
      public String message(NodeFilter.Result filtered) {
        return filtered.rejected().isEmpty() ? message : filtered.summary() + " " + message;
      }
    }

    /**
     * No candidate fits, and why is still to be worked out: {@link #explain} runs the diagnosis,
     * which reads only an immutable snapshot, so the caller runs it outside the scheduling lock.
     */
    record Unexplained(Supplier<NotPlaced> diagnosis) implements Decision {

      public NotPlaced explain() {
        return diagnosis.get();
      }
    }
  }
}
