package io.kdra.claimcontroller.scheduling;

import io.fabric8.kubernetes.api.model.resource.v1.AllocationResult;
import io.kdra.claimcontroller.domain.NodeFilter;
import java.util.Map;

/** What a scheduling cycle ({@link SchedulingCycle#decide}) comes to for one pod. */
sealed interface Decided permits Decided.Placement, Decided.NotPlaced, Decided.Unexplained {

  /**
   * The node and allocations decided for the pod, reserved (assumed) already, with its claims'
   * spans, started: what the binding cycle writes.
   *
   * @param allocations by claim UID, those to write
   * @param relied by claim UID, the allocations of the pod's claims allocated already that the
   *     decision relied on, as seen under the lock: each claim is reserved only while it is still
   *     allocated so
   * @param special the pod's special claim for its extended resources, in memory; or null
   */
  record Placement(
      String node,
      Map<String, AllocationResult> allocations,
      Map<String, AllocationResult> relied,
      AttemptSpans spans,
      ExtendedResources.InMemoryClaim special)
      implements Decided {}

  /** Why the pod was not placed: the attempt's outcome. */
  record NotPlaced(Outcome outcome) implements Decided {}

  /**
   * No node took the claims; the allocator's diagnosis is still to run, outside the lock, then the
   * spans end.
   */
  record Unexplained(
      NodeFilter.Result nodes, PodAllocator.Decision.Unexplained decision, AttemptSpans spans)
      implements Decided {

    /**
     * The outcome, diagnosed: reads only the search's snapshot, so that the next pod's search need
     * not wait for it.
     */
    Outcome.Unschedulable explain() {
      PodAllocator.Decision.NotPlaced np = decision.explain();
      spans.end();
      return new Outcome.Unschedulable(np.message(nodes), np.perClaim(), np.reason());
    }
  }
}
