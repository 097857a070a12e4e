package io.kdra.claimcontroller.scheduling;

import io.fabric8.kubernetes.api.model.resource.v1.ResourceClaim;
import io.kdra.claimcontroller.domain.ResourceVersions;
import io.kdra.claimcontroller.domain.Upstream;

/**
 * What {@link UnansweredSettle} does with one allocation whose write ended without an answer and
 * that no pod attempt has sent again, given the claim as the API server has it now: a pure
 * decision. Only versions decide, never a clock: the write was conditioned on the version before
 * {@code shownFrom}, so any version from {@code shownFrom} on is the write itself, something after
 * it, or what made it fail, and the informer will show it.
 */
final class UnansweredDecision {

  private UnansweredDecision() {}

  /** One step. */
  sealed interface Step {
    /** Why, for the log line. */
    String why();
  }

  /** The claim is gone: nothing it held counts any more. */
  record Forget(String why) implements Step {}

  /** Nothing to write: the informer will show the version that tells, or nothing ever can. */
  record LeaveToInformer(String why) implements Step {}

  /**
   * Undo the attempt on the version read, as upstream's Unreserve undoes an attempt that allocated
   * a claim: remove the finalizer the attempt added, conditioned on {@code read}'s version, the one
   * the lost write was made on. Both writes were conditioned on that version, so at most one lands:
   * this one (the claim's next version is unallocated, as before the attempt, and the lost write
   * never lands) or the lost one, or another writer's (this one gets a conflict); either way the
   * claim's next version tells the truth. Not the allocation sent again: landed, it would leave the
   * claim allocated without consumers, which nothing deallocates (neither this controller's cleanup
   * nor upstream's resourceclaim controller deallocates a claim that was never reserved).
   */
  record Unreserve(ResourceClaim read, String why) implements Step {}

  /** The step for {@code u}, whose claim the API server has as {@code read} (null: not found). */
  static Step decide(RecentWrites.Unanswered u, ResourceClaim read) {
    if (read == null) {
      return new Forget("the claim is gone");
    }
    if (!u.uid().equals(read.getMetadata().getUid())) {
      return new Forget(
          "the claim is gone (one of the same name has UID " + read.getMetadata().getUid() + ")");
    }
    String rv = read.getMetadata().getResourceVersion();
    long version = ResourceVersions.of(rv);
    if (version < 0 || u.shownFrom() == Long.MAX_VALUE) {
      // no integer to compare: only the claim's deletion settles it, as RecentWrites says
      return new LeaveToInformer("its resourceVersion " + rv + " is no integer");
    }
    if (version >= u.shownFrom()) {
      return new LeaveToInformer(
          "the API server has version " + rv + ", which tells whether the write landed");
    }
    if (read.getStatus() != null && read.getStatus().getAllocation() != null) {
      // not on kube-apiserver: the write was made on this version, when the claim had none
      return new LeaveToInformer("it has an allocation at version " + rv + " already");
    }
    if (read.getMetadata().getFinalizers() == null
        || !read.getMetadata().getFinalizers().contains(Upstream.FINALIZER)) {
      // likewise: the attempt added the finalizer before it wrote the allocation
      return new LeaveToInformer("it lacks the finalizer " + Upstream.FINALIZER);
    }
    return new Unreserve(read, "it is still at version " + rv + ", on which the write was made");
  }
}
