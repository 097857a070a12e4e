package io.kdra.core.alloc;

import io.fabric8.kubernetes.api.model.Node;
import io.fabric8.kubernetes.api.model.NodeSelector;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.resource.v1.ResourceClaim;
import java.util.ArrayList;
import java.util.BitSet;
import java.util.List;
import java.util.Objects;
import java.util.function.Supplier;

/**
 * Places one pod's claims: tries nodes in name order, skipping nodes the pod cannot run on ({@code
 * spec.nodeName}, {@code spec.nodeSelector}, required node affinity, and, as kube-scheduler's
 * DynamicResources filter, the node selectors of the pod's claims that are allocated already), and
 * allocates all of the pod's claims together on one node. Without {@code firstAvailable}
 * alternatives that is the first node where they fit. With them, nodes are scored as the 1.35+
 * scheduler does for prioritized lists: the node whose allocation uses the best-ranked subrequests
 * wins (a node where every such request gets its first choice ends the search), ties going to the
 * first node in search order; like kube-scheduler, only a bounded number of feasible nodes is
 * scored ({@link ScoreBound#feasibleNodesToScore}). The search starts at the first node by name,
 * or, as kube-scheduler's {@code nextStartNodeIndex}, at a position the caller passes and advances
 * by {@link Placement#examined} from one pod to the next, so that the bounded scoring does not keep
 * looking at the same first nodes. Pure and deterministic.
 *
 * <p>It only drives the search: which nodes a pod may use is {@link NodeEligibility}'s, trying the
 * claims on one node and what carries over to the next is {@link PodSearch}'s (the allocator's one
 * entry for it), the scoring bounds are {@link ScoreBound}'s, and explanations {@link Diagnoser}'s.
 */
public final class PodScheduler {

  private PodScheduler() {}

  /**
   * The placement of a pod.
   *
   * @param node the chosen node's name, or null when the claims could not be allocated
   * @param outcomes one outcome per claim, in input order
   * @param examined how many nodes (name-order positions from the start) the search went over, for
   *     the caller's next start ({@code (start + examined) % nodes}, as kube-scheduler)
   */
  public record Placement(String node, List<ClaimOutcome> outcomes, int examined) {

    public Placement(String node, List<ClaimOutcome> outcomes) {
      this(node, outcomes, 0);
    }

    public boolean allocated() {
      return node != null;
    }
  }

  /**
   * Allocates {@code claims} for {@code pod} (null: no node constraints) on the first suitable
   * node. When none fits, the explanations cover all nodes (cluster-wide counts), except for errors
   * upstream reports, which are reported as found on the first node.
   */
  public static Placement schedule(
      Allocator allocator, List<Node> nodes, Pod pod, List<ResourceClaim> claims) {
    return schedule(allocator, nodes, pod, claims, List.of());
  }

  /**
   * As {@link #schedule(Allocator, List, Pod, List)} for a pod that also has allocated claims:
   * {@code claims} are the pod's unallocated claims, {@code allocatedSelectors} the {@code
   * status.allocation.nodeSelector}s of its allocated ones (see {@link NodeSelectors#ofAllocated});
   * only nodes that all of them allow are tried.
   */
  public static Placement schedule(
      Allocator allocator,
      List<Node> nodes,
      Pod pod,
      List<ResourceClaim> claims,
      List<NodeSelector> allocatedSelectors) {
    return schedule(allocator, nodes, pod, claims, allocatedSelectors, 0);
  }

  /**
   * As {@link #schedule(Allocator, List, Pod, List, List)}, searching from the node at {@code
   * start} in name order (modulo the node count) round to the one before it.
   */
  public static Placement schedule(
      Allocator allocator,
      List<Node> nodes,
      Pod pod,
      List<ResourceClaim> claims,
      List<NodeSelector> allocatedSelectors,
      int start) {
    return search(allocator, nodes, pod, claims, allocatedSelectors, start, Deadline.NONE)
        .explained();
  }

  /**
   * A search's answer before a failure is explained: the placement when a node was found or the
   * deadline passed, else the diagnosis still to run ({@link #explained}). The diagnosis reads only
   * the allocator's immutable snapshot, so a caller that serialises searches can run it after
   * letting the next search start.
   *
   * @param placement the placement, or null while the diagnosis has not run
   * @param examined as {@link Placement#examined}
   * @param timedOut whether the search stopped at its deadline (the outcomes say so, no diagnosis)
   */
  public record Searched(
      Placement placement, int examined, boolean timedOut, Supplier<Placement> diagnosis) {

    /** The placement, running the diagnosis first when it has not run. */
    public Placement explained() {
      return placement != null ? placement : diagnosis.get();
    }
  }

  /**
   * As {@link #schedule(Allocator, List, Pod, List, List, int)}, giving up once {@code deadline}
   * passed (asked before each node and within each node's search, see {@link Deadline}): then the
   * best placement scored so far wins, and without one every claim is explained by {@link
   * Explanation.Kind#DEADLINE_EXCEEDED}. A failure's diagnosis is left to the caller.
   */
  public static Searched search(
      Allocator allocator,
      List<Node> nodes,
      Pod pod,
      List<ResourceClaim> claims,
      List<NodeSelector> allocatedSelectors,
      int start,
      Deadline deadline) {
    boolean pinned = allocatedSelectors.stream().anyMatch(Objects::nonNull);
    NodeIndex index =
        allocator.snapshot().inventory().nodeIndex(nodes, allocator.options().features());
    List<Node> sorted = index.sorted();
    BitSet eligibleAt = NodeEligibility.eligible(pod, sorted, allocatedSelectors);
    int eligibleCount = eligibleAt == null ? sorted.size() : eligibleAt.cardinality();
    if (eligibleCount == 0) {
      return noEligibleNode(claims, nodes.size(), pinned);
    }
    SearchLimitException limit = null;
    String limitNode = null;
    PodSearch search = allocator.forPod(claims, deadline);
    SubrequestRanking ranking = SubrequestRanking.of(claims);
    Placement best = null;
    long bestScore = Long.MIN_VALUE;
    long reachable = -1;
    int feasible = 0;
    int enough = ScoreBound.feasibleNodesToScore(eligibleCount);
    AllocatedState state = allocator.snapshot().allocated();
    boolean skipFull = search.skipsFullNodes();
    int n = sorted.size();
    int first = Math.floorMod(start, n);
    int k = 0; // steps from first: pos = (first + k) % n
    for (; k < n; k++) {
      int pos = (first + k) % n;
      if (skipFull) {
        int sideEnd = pos >= first ? n : first; // the end of this side of the wrap
        int next = index.nextNotKnownFull(pos, state); // jumps over nodes already found full
        if (next >= sideEnd) {
          k += sideEnd - pos - 1;
          continue;
        }
        k += next - pos;
        pos = next;
      }
      if (eligibleAt != null && !eligibleAt.get(pos)) {
        continue;
      }
      Node node = sorted.get(pos);
      if (best != null && feasible >= enough) {
        break;
      }
      if (skipFull && search.poolsFull(node)) {
        index.markFull(pos, state);
        continue;
      }
      Allocator.Attempt attempt;
      try {
        if (deadline.passed()) {
          throw new SearchDeadlineException();
        }
        attempt = search.attempt(node);
      } catch (SearchDeadlineException e) {
        if (best != null) {
          return answered(new Placement(best.node(), best.outcomes(), k + 1));
        }
        return timedOut(claims, k + 1, eligibleCount);
      }
      if (attempt.results() != null) {
        List<ClaimOutcome> out = new ArrayList<>();
        for (int i = 0; i < claims.size(); i++) {
          out.add(new ClaimOutcome.Allocated(claims.get(i), attempt.results().get(i)));
        }
        Placement placement = new Placement(node.getMetadata().getName(), out, k + 1);
        long score = ranking.score(attempt.results());
        if (score >= ranking.best()) {
          return answered(placement);
        }
        if (reachable < 0) {
          reachable = search.bestReachableScore(ranking.best());
        }
        if (score >= reachable) {
          return answered(placement); // no node can do better: the first such node wins, as a tie
        }
        feasible++;
        if (score > bestScore) {
          best = placement;
          bestScore = score;
        }
        continue;
      }
      if (best != null && attempt.problem() == null) {
        continue;
      }
      if (attempt.problem() != null) {
        int examined = k + 1;
        return new Searched(
            null,
            examined,
            false,
            () -> new Placement(null, search.explain(node, attempt), examined));
      }
      if (attempt.limit() != null && limit == null) {
        limit = attempt.limit();
        limitNode = node.getMetadata().getName();
      }
    }
    if (best != null) {
      return answered(new Placement(best.node(), best.outcomes(), k));
    }
    SearchLimitException limitFound = limit;
    String limitAt = limitNode;
    return new Searched(
        null,
        n,
        false,
        () -> explainNone(search, nodes.size(), eligibleCount, pinned, limitFound, limitAt, n));
  }

  /** Every claim explained by {@link Explanation.Kind#NO_MATCHING_NODE}. */
  static Searched noEligibleNode(List<ResourceClaim> claims, int nodes, boolean pinned) {
    List<ClaimOutcome> out = new ArrayList<>();
    for (ResourceClaim c : claims) {
      out.add(
          new ClaimOutcome.NotAllocated(
              c,
              Explanation.problem(
                  Explanation.Kind.NO_MATCHING_NODE,
                  null,
                  null,
                  noMatchingNode(nodes, pinned),
                  null)));
    }
    return answered(new Placement(null, out));
  }

  static Searched answered(Placement p) {
    return new Searched(p, p.examined(), false, null);
  }

  /** Every claim explained as stopped at the deadline; no diagnosis runs. */
  static Searched timedOut(List<ResourceClaim> claims, int examined, int eligible) {
    String why =
        "search exceeded its deadline before finding a node ("
            + eligible
            + (eligible == 1 ? " node" : " nodes")
            + " eligible)";
    List<ClaimOutcome> out = new ArrayList<>();
    for (ResourceClaim c : claims) {
      out.add(
          new ClaimOutcome.NotAllocated(
              c, Explanation.problem(Explanation.Kind.DEADLINE_EXCEEDED, null, null, why, null)));
    }
    return new Searched(new Placement(null, out, examined), examined, true, null);
  }

  /** Why no node took the claims: the diagnosis over all nodes, with the search's notes. */
  static Placement explainNone(
      PodSearch search,
      int all,
      int eligibleCount,
      boolean pinned,
      SearchLimitException limit,
      String limitNode,
      int n) {
    List<ClaimOutcome> explained = search.explain(null, new Allocator.Attempt(null, null, null));
    String note = notes(all, eligibleCount, pinned, limit, limitNode);
    boolean noCommon =
        explained.stream()
            .anyMatch(
                o ->
                    ((ClaimOutcome.NotAllocated) o).explanation().kind()
                        == Explanation.Kind.NO_COMMON_NODE);
    if (noCommon) {
      String tried = eligibleCount + (eligibleCount == 1 ? " node" : " nodes") + " tried";
      note = note == null ? tried : tried + "; " + note;
    }
    if (note == null) {
      return new Placement(null, explained, n);
    }
    List<ClaimOutcome> out = new ArrayList<>();
    for (ClaimOutcome o : explained) {
      Explanation e = ((ClaimOutcome.NotAllocated) o).explanation();
      out.add(new ClaimOutcome.NotAllocated(o.claim(), e.withNote(note)));
    }
    return new Placement(null, out, n);
  }

  /**
   * Why a pod has no node: none of the {@code nodes} matches its node name, node selector and
   * required node affinity ({@code pinned}: and the node selectors of its allocated claims).
   */
  public static String noMatchingNode(int nodes, boolean pinned) {
    return "no node matches the pod's node name, node selector and required node affinity"
        + (pinned ? " and the node selectors of its allocated claims" : "")
        + " ("
        + nodes
        + (nodes == 1 ? " node)" : " nodes)");
  }

  private static String notes(
      int all, int eligible, boolean pinned, SearchLimitException limit, String node) {
    List<String> notes = new ArrayList<>();
    if (eligible < all) {
      notes.add(
          (all - eligible)
              + " of "
              + all
              + " nodes excluded by the pod's node selection"
              + (pinned ? " and its allocated claims" : ""));
    }
    if (limit != null) {
      notes.add(limit.getMessage() + " on node " + node);
    }
    return notes.isEmpty() ? null : String.join("; ", notes);
  }

  /**
   * Whether the pod may run on the node: {@link #podFits(Pod, Node)}, and every allocated claim of
   * the pod may be used there ({@link NodeSelectors#allowAll}).
   */
  public static boolean podFits(Pod pod, Node node, List<NodeSelector> allocatedSelectors) {
    return NodeEligibility.fits(pod, node, allocatedSelectors);
  }

  /** Whether the pod may run on the node: node name, node selector, required node affinity. */
  public static boolean podFits(Pod pod, Node node) {
    return NodeEligibility.fits(pod, node);
  }
}
