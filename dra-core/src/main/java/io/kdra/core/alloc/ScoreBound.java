package io.kdra.core.alloc;

import java.util.ArrayList;
import java.util.List;

/**
 * The bounds on scoring nodes for a pod with prioritized lists ({@code firstAvailable}): how many
 * feasible nodes are scored before choosing, as kube-scheduler does, and the best score any node
 * could still reach, which lets the search stop at the first node that reaches it. Pure; reads the
 * snapshot (and memoizes through its inventory).
 */
final class ScoreBound {

  private final AllocationSnapshot snapshot;
  private final AllocatorOptions options;

  ScoreBound(AllocationSnapshot snapshot, AllocatorOptions options) {
    this.snapshot = snapshot;
    this.options = options;
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

  /**
   * The best prioritized-list score any node could still reach: per request with alternatives, the
   * first alternative for which the whole cluster has enough free devices matching its class and
   * selectors. A necessary condition only (devices are counted across nodes, constraints and
   * visibility are ignored), so it bounds every node's score from above; reaching it on a node lets
   * the caller stop scoring early.
   *
   * <p>{@link Long#MAX_VALUE} (never stop early) when any selector of the claims (of every request
   * and alternative, not only the prioritized ones) fails to evaluate on some device: a later
   * node's search might reach that device, and upstream, which scores every feasible node, then
   * fails the whole pod; so every node must be tried as upstream would. The same when a request has
   * derived attributes: they are evaluated only inside a node's search, so whether one fails on a
   * later node cannot be known before.
   *
   * @param plans node-independent plans ({@link PodSearch})
   */
  long bestReachableScore(List<ClaimPlan> plans) {
    List<Pool> pools = snapshot.inventory().allPools(options.features());
    DeviceMatcher matcher =
        new DeviceMatcher(
            options.selectors(),
            options.features(),
            null,
            snapshot.inventory().cachesResultsOf(options.selectors()));
    for (ClaimPlan plan : plans) {
      for (ClaimPlan.RequestPlan request : plan.requests) {
        for (RequestData alternative : request.alternatives) {
          if (!alternative.spec().derivedAttributes().isEmpty()
              || failsSomewhere(plan.index, alternative, pools, matcher)) {
            return Long.MAX_VALUE;
          }
        }
      }
    }
    long score = 0;
    for (ClaimPlan plan : plans) {
      for (ClaimPlan.RequestPlan request : plan.requests) {
        if (!request.firstAvailable || request.alternatives.size() < 2) {
          continue;
        }
        for (int i = 0; i < request.alternatives.size(); i++) {
          if (enoughFreeDevices(plan.index, request.alternatives.get(i), pools, matcher)) {
            score += request.alternatives.size() - i;
            break;
          }
        }
      }
    }
    return score;
  }

  /**
   * Whether the alternative's class or request selectors fail to evaluate on some device. The
   * answer depends only on the inventory, the features and the selectors, so the inventory memoizes
   * it: without that, every pod re-evaluated every selector on every device of the cluster (a scan
   * that made first-available scheduling several times slower).
   */
  private boolean failsSomewhere(
      int claimIndex, RequestData alternative, List<Pool> pools, DeviceMatcher matcher) {
    DeviceInventory.SelectorsKey key =
        new DeviceInventory.SelectorsKey(
            options.features(), classSelectors(alternative), alternative.spec().selectors());
    return snapshot
        .inventory()
        .selectorsFailSomewhere(
            options.selectors(),
            key,
            () -> {
              try {
                evaluateEverywhere(claimIndex, alternative, pools, matcher);
                return false;
              } catch (AllocationProblem p) {
                return true;
              }
            });
  }

  /** The class's selector expressions in order, null for a selector without one. */
  private static List<String> classSelectors(RequestData alternative) {
    var cls = alternative.deviceClass();
    if (cls.getSpec() == null || cls.getSpec().getSelectors() == null) {
      return List.of();
    }
    List<String> out = new ArrayList<>();
    for (var s : cls.getSpec().getSelectors()) {
      out.add(s.getCel() == null ? null : s.getCel().getExpression());
    }
    return out;
  }

  /** Evaluates the alternative's selectors on every device; throws where one fails. */
  private static void evaluateEverywhere(
      int claimIndex, RequestData alternative, List<Pool> pools, DeviceMatcher matcher) {
    for (Pool pool : pools) {
      if (!pool.usable()) {
        continue;
      }
      for (SliceInfo slice : pool.slices()) {
        for (CandidateDevice d : slice.devices()) {
          if (matcher.classMatches(claimIndex, alternative, d)) {
            matcher.requestMatches(claimIndex, alternative, d);
          }
        }
      }
    }
  }

  /**
   * Whether the cluster has {@code numDevices} free devices that the alternative's class and
   * selectors match. Through the inventory's {@link MatchingDevices} of these selectors when it
   * keeps one (the selectors' cache owner): only matching devices are walked, and those found
   * allocated are skipped from then on; else every device of the cluster is checked.
   */
  private boolean enoughFreeDevices(
      int claimIndex, RequestData alternative, List<Pool> pools, DeviceMatcher matcher) {
    int needed = Math.max(1, alternative.numDevices());
    DeviceInventory.SelectorsKey key =
        new DeviceInventory.SelectorsKey(
            options.features(), classSelectors(alternative), alternative.spec().selectors());
    MatchingDevices matching =
        snapshot
            .inventory()
            .matchingDevices(
                options.selectors(),
                key,
                () -> matchingDevices(claimIndex, alternative, pools, matcher));
    if (matching != null) {
      return matching.enoughFree(
          snapshot.allocated(), needed, d -> matcher.capacityKnown(alternative, d));
    }
    int found = 0;
    for (Pool pool : pools) {
      if (!pool.usable()) {
        continue;
      }
      for (SliceInfo slice : pool.slices()) {
        for (CandidateDevice d : slice.devices()) {
          boolean free = d.allowMultipleAllocations() || !snapshot.allocated().isAllocated(d.id());
          if (free
              && matcher.classMatches(claimIndex, alternative, d)
              && matcher.requestMatches(claimIndex, alternative, d)
              && ++found >= needed) {
            return true;
          }
        }
      }
    }
    return false;
  }

  /** The devices of usable pools that the alternative's class and request selectors match. */
  private static List<CandidateDevice> matchingDevices(
      int claimIndex, RequestData alternative, List<Pool> pools, DeviceMatcher matcher) {
    List<CandidateDevice> out = new ArrayList<>();
    for (Pool pool : pools) {
      if (!pool.usable()) {
        continue;
      }
      for (SliceInfo slice : pool.slices()) {
        for (CandidateDevice d : slice.devices()) {
          if (matcher.classMatches(claimIndex, alternative, d)
              && matcher.requestSelectorsMatch(claimIndex, alternative, d)) {
            out.add(d);
          }
        }
      }
    }
    return out;
  }
}
