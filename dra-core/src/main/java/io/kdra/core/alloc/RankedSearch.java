package io.kdra.core.alloc;

import io.fabric8.kubernetes.api.model.Node;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.resource.v1.ResourceClaim;
import java.util.ArrayList;
import java.util.BitSet;
import java.util.List;

/**
 * Places one pod's claims walking the nodes in the caller's order, highest score first (the other
 * score plugins' weighted sum), so that the first node where the claims fit is the best one and no
 * second search is needed. The DynamicResources score ({@link DynamicResourcesScore}) varies from
 * node to node only with {@code firstAvailable} alternatives: then nodes where the claims fit are
 * collected until no later node can beat the best total (its base plus the plugin's full weighted
 * score is not higher) or as many as kube-scheduler scores ({@link
 * ScoreBound#feasibleNodesToScore}); the highest total wins, equal totals going to the first in the
 * caller's order (the higher base score, then the name). Pure and deterministic.
 *
 * <p>The rest is {@link PodScheduler#search}'s: nodes known full are skipped, a selector error on a
 * node fails the pod, the deadline keeps the best placement found so far, and why no node fits is
 * left to the caller ({@link PodScheduler.Searched#explained}).
 */
public final class RankedSearch {

  private RankedSearch() {}

  /**
   * The candidates in the order to try them, with each one's base score.
   *
   * @param byName every candidate, in name order: the same list object, or the same node objects,
   *     from one pod to the next keeps the allocator's node index
   * @param order the candidates, highest base first (equal bases in name order)
   * @param base each node's base score, in {@code order}'s order (non-increasing)
   */
  public record Ranked(List<Node> byName, List<Node> order, long[] base) {}

  /**
   * Allocates {@code claims} (the pod's unallocated ones) for {@code pod} on the best of {@code
   * ranked}: {@code allocated} are its claims allocated earlier, which count in the
   * DynamicResources score with their recorded allocations.
   */
  public static PodScheduler.Searched search(
      Allocator allocator,
      Ranked ranked,
      Pod pod,
      List<ResourceClaim> claims,
      List<ResourceClaim> allocated,
      Deadline deadline) {
    NodeIndex index =
        allocator.snapshot().inventory().nodeIndex(ranked.byName(), allocator.options().features());
    List<Node> sorted = index.sorted();
    BitSet eligibleAt = NodeEligibility.eligible(pod, sorted, List.of());
    int eligibleCount = eligibleAt == null ? sorted.size() : eligibleAt.cardinality();
    if (eligibleCount == 0) {
      return PodScheduler.noEligibleNode(claims, ranked.byName().size(), false);
    }
    PodSearch search = allocator.forPod(claims, deadline);
    SubrequestRanking ranking = SubrequestRanking.of(claims);
    boolean varies = ranking.best() > 0; // without alternatives every node scores the same
    Fits fits = new Fits(ranked, DynamicResourcesScore.raw(allocated));
    long reachable = -1;
    int enough = ScoreBound.feasibleNodesToScore(eligibleCount);
    AllocatedState state = allocator.snapshot().allocated();
    boolean skipFull = search.skipsFullNodes();
    SearchLimitException limit = null;
    String limitNode = null;
    List<Node> order = ranked.order();
    int i = 0;
    for (; i < order.size(); i++) {
      Node node = order.get(i);
      int pos = index.position(node);
      if (pos < 0 || (eligibleAt != null && !eligibleAt.get(pos))) {
        continue;
      }
      if (fits.size() >= enough
          || (fits.size() > 0
              && fits.maxScored(reachable)
              && ranked.base()[i]
                      + DynamicResourcesScore.WEIGHT * DynamicResourcesScore.MAX_NODE_SCORE
                  <= fits.bestTotal())) {
        break;
      }
      if (skipFull) {
        if (index.nextNotKnownFull(pos, state) != pos) {
          continue;
        }
        if (search.poolsFull(node)) {
          index.markFull(pos, state);
          continue;
        }
      }
      Allocator.Attempt attempt;
      try {
        if (deadline.passed()) {
          throw new SearchDeadlineException();
        }
        attempt = search.attempt(node);
      } catch (SearchDeadlineException e) {
        if (fits.size() > 0) {
          return PodScheduler.answered(fits.best(claims, i + 1));
        }
        return PodScheduler.timedOut(claims, i + 1, eligibleCount);
      }
      if (attempt.results() != null) {
        fits.add(i, node, attempt.results(), ranking.score(attempt.results()), claims);
        if (!varies) {
          return PodScheduler.answered(fits.best(claims, i + 1));
        }
        if (reachable < 0) {
          reachable = search.bestReachableScore(ranking.best());
        }
        continue;
      }
      if (attempt.problem() != null) {
        int examined = i + 1;
        return new PodScheduler.Searched(
            null,
            examined,
            false,
            () -> new PodScheduler.Placement(null, search.explain(node, attempt), examined));
      }
      if (attempt.limit() != null && limit == null) {
        limit = attempt.limit();
        limitNode = node.getMetadata().getName();
      }
    }
    if (fits.size() > 0) {
      return PodScheduler.answered(fits.best(claims, i));
    }
    SearchLimitException limitFound = limit;
    String limitAt = limitNode;
    int n = order.size();
    return new PodScheduler.Searched(
        null,
        n,
        false,
        () ->
            PodScheduler.explainNone(
                search, ranked.byName().size(), eligibleCount, false, limitFound, limitAt, n));
  }

  /** The nodes where the claims fit so far, with their scores. */
  private static final class Fits {
    private final Ranked ranked;
    private final long allocatedRaw;
    private final List<Integer> at = new ArrayList<>();
    private final List<Node> nodes = new ArrayList<>();
    private final List<List<io.fabric8.kubernetes.api.model.resource.v1.AllocationResult>> results =
        new ArrayList<>();
    private final List<Long> raw = new ArrayList<>();
    private long maxRaw;
    private long maxRank = -1;

    Fits(Ranked ranked, long allocatedRaw) {
      this.ranked = ranked;
      this.allocatedRaw = allocatedRaw;
    }

    int size() {
      return at.size();
    }

    void add(
        int i,
        Node node,
        List<io.fabric8.kubernetes.api.model.resource.v1.AllocationResult> r,
        long rank,
        List<ResourceClaim> claims) {
      long s = allocatedRaw + DynamicResourcesScore.raw(claims, r);
      at.add(i);
      nodes.add(node);
      results.add(r);
      raw.add(s);
      maxRaw = Math.max(maxRaw, s);
      maxRank = Math.max(maxRank, rank);
    }

    /**
     * Whether a node scoring the most that any node can reach was found: only then are the
     * normalised scores final (no later node raises the maximum they are scaled against).
     */
    boolean maxScored(long reachable) {
      return reachable >= 0 && maxRank >= reachable;
    }

    long total(int k) {
      return ranked.base()[at.get(k)]
          + DynamicResourcesScore.WEIGHT * DynamicResourcesScore.normalized(raw.get(k), maxRaw);
    }

    long bestTotal() {
      return total(bestIndex());
    }

    private int bestIndex() {
      int best = 0;
      for (int k = 1; k < at.size(); k++) {
        if (total(k) > total(best)) { // equal totals: the first in the caller's order
          best = k;
        }
      }
      return best;
    }

    PodScheduler.Placement best(List<ResourceClaim> claims, int examined) {
      int k = bestIndex();
      List<ClaimOutcome> out = new ArrayList<>();
      for (int c = 0; c < claims.size(); c++) {
        out.add(new ClaimOutcome.Allocated(claims.get(c), results.get(k).get(c)));
      }
      return new PodScheduler.Placement(nodes.get(k).getMetadata().getName(), out, examined);
    }
  }
}
