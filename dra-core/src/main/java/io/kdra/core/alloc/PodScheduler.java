package io.kdra.core.alloc;

import io.fabric8.kubernetes.api.model.Node;
import io.fabric8.kubernetes.api.model.NodeSelector;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.resource.v1.ResourceClaim;
import java.util.ArrayList;
import java.util.BitSet;
import java.util.List;
import java.util.Objects;

/**
 * Places one pod's claims: tries nodes in name order, skipping nodes the pod cannot run on ({@code
 * spec.nodeName}, {@code spec.nodeSelector}, required node affinity, and, as kube-scheduler's
 * DynamicResources filter, the node selectors of the pod's claims that are allocated already), and
 * allocates all of the pod's claims together on one node. Without {@code firstAvailable}
 * alternatives that is the first node where they fit. With them, nodes are scored as the 1.35+
 * scheduler does for prioritized lists: the node whose allocation uses the best-ranked subrequests
 * wins (a node where every such request gets its first choice ends the search), ties going to the
 * first node in search order; like kube-scheduler, only a bounded number of feasible nodes is
 * scored ({@link #feasibleNodesToScore}). The search starts at the first node by name, or, as
 * kube-scheduler's {@code nextStartNodeIndex}, at a position the caller passes and advances by
 * {@link Placement#examined} from one pod to the next, so that the bounded scoring does not keep
 * looking at the same first nodes. Pure and deterministic.
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
    boolean pinned = allocatedSelectors.stream().anyMatch(Objects::nonNull);
    NodeIndex index =
        allocator.snapshot().inventory().nodeIndex(nodes, allocator.options().features());
    List<Node> sorted = index.sorted();
    // only a pod with node constraints filters; without, every node is eligible and no list of
    // them is built per pod
    BitSet eligibleAt = null;
    int eligibleCount = sorted.size();
    if (hasNodeConstraints(pod) || pinned) {
      eligibleAt = new BitSet(sorted.size());
      for (int i = 0; i < sorted.size(); i++) {
        if (podFits(pod, sorted.get(i), allocatedSelectors)) {
          eligibleAt.set(i);
        }
      }
      eligibleCount = eligibleAt.cardinality();
    }
    if (eligibleCount == 0) {
      List<ClaimOutcome> out = new ArrayList<>();
      for (ResourceClaim c : claims) {
        out.add(
            new ClaimOutcome.NotAllocated(
                c,
                Explanation.problem(
                    Explanation.Kind.NO_MATCHING_NODE,
                    null,
                    null,
                    noMatchingNode(nodes.size(), pinned),
                    null)));
      }
      return new Placement(null, out);
    }
    SearchLimitException limit = null;
    String limitNode = null;
    List<ClaimPlan> shared = allocator.prepareForAnyNode(claims);
    SubrequestRanking ranking = SubrequestRanking.of(claims);
    Placement best = null;
    long bestScore = Long.MIN_VALUE;
    long reachable = -1;
    int feasible = 0;
    int enough = feasibleNodesToScore(eligibleCount);
    AllocatedState state = allocator.snapshot().allocated();
    boolean skipFull = allocator.fullNodesSkippable(claims);
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
      if (skipFull && allocator.poolsFull(node)) {
        index.markFull(pos, state);
        continue;
      }
      Allocator.Attempt attempt = allocator.attempt(node, claims, shared);
      if (attempt.results() != null) {
        List<ClaimOutcome> out = new ArrayList<>();
        for (int i = 0; i < claims.size(); i++) {
          out.add(new ClaimOutcome.Allocated(claims.get(i), attempt.results().get(i)));
        }
        Placement placement = new Placement(node.getMetadata().getName(), out, k + 1);
        long score = ranking.score(attempt.results());
        if (score >= ranking.best()) {
          return placement;
        }
        if (reachable < 0) {
          reachable = shared != null ? allocator.bestReachableScore(shared) : ranking.best();
        }
        if (score >= reachable) {
          return placement; // no node can do better: the first such node wins, as in a tie
        }
        feasible++;
        if (score > bestScore) {
          best = placement;
          bestScore = score;
        }
        shared = null; // a successful search leaves its picks in the plans
        continue;
      }
      if (best != null && attempt.problem() == null) {
        continue;
      }
      if (attempt.problem() != null) {
        return new Placement(null, allocator.explain(node, claims, attempt), k + 1);
      }
      if (attempt.limit() != null) {
        shared = null; // the aborted search left picks behind
      }
      if (attempt.limit() != null && limit == null) {
        limit = attempt.limit();
        limitNode = node.getMetadata().getName();
      }
    }
    if (best != null) {
      return new Placement(best.node(), best.outcomes(), k);
    }
    List<ClaimOutcome> explained =
        allocator.explain(null, claims, new Allocator.Attempt(null, null, null));
    String note = notes(nodes.size(), eligibleCount, pinned, limit, limitNode);
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

  /**
   * How many feasible nodes are scored before choosing, as kube-scheduler's default adaptive {@code
   * percentageOfNodesToScore}: all of up to 100 nodes, else {@code max(5, 50 - n/125)} percent of
   * them but at least 100.
   */
  static int feasibleNodesToScore(int nodes) {
    if (nodes < 100) {
      return nodes;
    }
    int percentage = Math.max(5, 50 - nodes / 125);
    return Math.max(100, nodes * percentage / 100);
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

  /** Whether the pod constrains its nodes at all; when not, {@link #podFits} is always true. */
  private static boolean hasNodeConstraints(Pod pod) {
    if (pod == null || pod.getSpec() == null) {
      return false;
    }
    var spec = pod.getSpec();
    return (spec.getNodeName() != null && !spec.getNodeName().isEmpty())
        || (spec.getNodeSelector() != null && !spec.getNodeSelector().isEmpty())
        || (spec.getAffinity() != null
            && spec.getAffinity().getNodeAffinity() != null
            && spec.getAffinity()
                    .getNodeAffinity()
                    .getRequiredDuringSchedulingIgnoredDuringExecution()
                != null);
  }

  /**
   * Whether the pod may run on the node: {@link #podFits(Pod, Node)}, and every allocated claim of
   * the pod may be used there ({@link NodeSelectors#allowAll}).
   */
  public static boolean podFits(Pod pod, Node node, List<NodeSelector> allocatedSelectors) {
    return podFits(pod, node) && NodeSelectors.allowAll(allocatedSelectors, node);
  }

  /** Whether the pod may run on the node: node name, node selector, required node affinity. */
  public static boolean podFits(Pod pod, Node node) {
    if (pod == null || pod.getSpec() == null) {
      return true;
    }
    var spec = pod.getSpec();
    if (spec.getNodeName() != null
        && !spec.getNodeName().isEmpty()
        && !spec.getNodeName().equals(node.getMetadata().getName())) {
      return false;
    }
    if (!NodeSelectors.labelsMatch(spec.getNodeSelector(), node)) {
      return false;
    }
    if (spec.getAffinity() != null && spec.getAffinity().getNodeAffinity() != null) {
      NodeSelector required =
          spec.getAffinity().getNodeAffinity().getRequiredDuringSchedulingIgnoredDuringExecution();
      if (required != null && !NodeSelectors.matches(required, node)) {
        return false;
      }
    }
    return true;
  }
}
