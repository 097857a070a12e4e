package io.kdra.core.alloc;

import io.fabric8.kubernetes.api.model.Node;
import io.fabric8.kubernetes.api.model.resource.v1.ResourceClaim;
import java.util.List;

/**
 * One pod's claims, tried node after node: the allocator's single entry for {@link PodScheduler}.
 * It owns what carries from one node's attempt to the next: the node-independent plans (reused
 * until a search leaves picks in them), whether nodes with only full pools can be skipped, and the
 * best score any node could still reach. Not thread-safe: one search at a time.
 */
final class PodSearch {

  private final Allocator allocator;
  private final List<ResourceClaim> claims;
  private final boolean skipsFullNodes;
  private final Deadline deadline;

  /** Plans to reuse on the next node ({@link Allocator#prepareForAnyNode}); null when none. */
  private List<ClaimPlan> shared;

  /** The plans the last successful attempt started from (null: prepared on its node). */
  private List<ClaimPlan> lastSuccessPlans;

  PodSearch(Allocator allocator, List<ResourceClaim> claims, Deadline deadline) {
    this.allocator = allocator;
    this.deadline = deadline;
    this.claims = claims;
    this.shared = allocator.prepareForAnyNode(claims);
    this.skipsFullNodes = allocator.fullNodesSkippable(claims);
  }

  /** Whether a node whose pools are all full can be skipped for these claims. */
  boolean skipsFullNodes() {
    return skipsFullNodes;
  }

  /** Whether every usable pool on the node is known to be full ({@link Allocator#poolsFull}). */
  boolean poolsFull(Node node) {
    return allocator.poolsFull(node);
  }

  /**
   * Tries all the claims together on {@code node}. A successful search leaves its picks in the
   * shared plans and an aborted one leaves picks behind, so after either the next node prepares its
   * own plans. Throws {@link SearchDeadlineException} once the pod's deadline passed: the search
   * stops there, and nothing of it is reused.
   */
  Allocator.Attempt attempt(Node node) {
    List<ClaimPlan> plans = shared;
    Allocator.Attempt attempt;
    try {
      attempt = allocator.attempt(node, claims, plans, deadline);
    } catch (SearchDeadlineException e) {
      shared = null;
      throw e;
    }
    if (attempt.results() != null) {
      lastSuccessPlans = plans;
      shared = null;
    } else if (attempt.limit() != null) {
      shared = null;
    }
    return attempt;
  }

  /**
   * The best prioritized-list score any node could still reach ({@link ScoreBound}), from the plans
   * the last successful attempt started from; {@code unknown} when it prepared its own.
   */
  long bestReachableScore(long unknown) {
    return lastSuccessPlans != null
        ? new ScoreBound(allocator.snapshot(), allocator.options())
            .bestReachableScore(lastSuccessPlans)
        : unknown;
  }

  /** The claims' outcomes for a failed attempt on {@code node} (null: cluster-wide). */
  List<ClaimOutcome> explain(Node node, Allocator.Attempt attempt) {
    return Diagnoser.outcomes(allocator.snapshot(), allocator.options(), node, claims, attempt);
  }
}
