package io.kdra.core.alloc;

import io.fabric8.kubernetes.api.model.Node;
import io.fabric8.kubernetes.api.model.resource.v1.AllocationResult;
import io.fabric8.kubernetes.api.model.resource.v1.ResourceClaim;
import java.util.ArrayList;
import java.util.List;

/**
 * The structured allocator: decides, for one node, which devices a set of claims (typically one
 * pod's) would get, exactly as upstream's {@code k8s.io/dynamic-resource-allocation/structured}
 * allocator of Kubernetes 1.36 would, and explains why not when it cannot.
 *
 * <p>Contract: {@link #allocate} is all-or-nothing (every claim is allocated, or none is), pure
 * (reads only the snapshot and options; the caller persists results and derives the next snapshot),
 * deterministic for a deterministic share-ID supplier, thread-safe, and never throws for bad input:
 * conditions upstream reports as errors (missing DeviceClass, CEL failures, disabled features,
 * {@code All} on an incomplete pool) become {@link Explanation}s on the claim. Work is bounded by
 * {@link AllocatorOptions#stepBudget()}.
 */
public final class Allocator {

  private final AllocationSnapshot snapshot;
  private final AllocatorOptions options;

  public Allocator(AllocationSnapshot snapshot, AllocatorOptions options) {
    this.snapshot = snapshot;
    this.options = options;
  }

  public AllocationSnapshot snapshot() {
    return snapshot;
  }

  public AllocatorOptions options() {
    return options;
  }

  /**
   * Allocates all claims together on {@code node}. Claims must not be allocated already.
   *
   * @return one outcome per claim, in input order: all {@link ClaimOutcome.Allocated}, or all
   *     {@link ClaimOutcome.NotAllocated}
   */
  public List<ClaimOutcome> allocate(Node node, List<ResourceClaim> claims) {
    Attempt attempt = attempt(node, claims);
    if (attempt.results() != null) {
      List<ClaimOutcome> out = new ArrayList<>();
      for (int i = 0; i < claims.size(); i++) {
        out.add(new ClaimOutcome.Allocated(claims.get(i), attempt.results().get(i)));
      }
      return out;
    }
    return explain(node, claims, attempt);
  }

  /** The result of one attempt on one node: results, or why there are none. */
  record Attempt(
      List<AllocationResult> results, AllocationProblem problem, SearchLimitException limit) {}

  Attempt attempt(Node node, List<ResourceClaim> claims) {
    return attempt(node, claims, null);
  }

  /**
   * True when the node certainly cannot take the claims: none of them asks for admin access or for
   * {@code All} devices, and every usable pool on the node is known to be fully allocated.
   * O(pools); lets first-fit over many full nodes skip them without starting a search. False means
   * "unknown". {@code All} is never skipped: upstream reports an incomplete or invalid pool on the
   * node as an error that fails the pod, and evaluates selectors on allocated devices too.
   */
  boolean certainlyFull(Node node, List<ResourceClaim> claims) {
    return fullNodesSkippable(claims) && poolsFull(node);
  }

  /**
   * The node-independent half of {@link #certainlyFull}: whether a node whose pools are all full
   * can be skipped for these claims (checked once per pod, not once per node).
   */
  boolean fullNodesSkippable(List<ResourceClaim> claims) {
    for (ResourceClaim c : claims) {
      if (c.getSpec() == null
          || c.getSpec().getDevices() == null
          || c.getSpec().getDevices().getRequests() == null) {
        return false;
      }
      for (var r : c.getSpec().getDevices().getRequests()) {
        if (r.getExactly() != null
            && (Boolean.TRUE.equals(r.getExactly().getAdminAccess())
                || "All".equals(r.getExactly().getAllocationMode()))) {
          return false;
        }
        if (r.getFirstAvailable() != null
            && r.getFirstAvailable().stream().anyMatch(s -> "All".equals(s.getAllocationMode()))) {
          return false;
        }
      }
    }
    return true;
  }

  /**
   * The node half of {@link #certainlyFull}: every usable pool on the node is known to be fully
   * allocated in this snapshot's state. Stays true in every state that includes this one.
   */
  boolean poolsFull(Node node) {
    for (Pool p : snapshot.inventory().poolsFor(node, options.features())) {
      if (p.usable() && !p.exhaustion().isFull(snapshot.allocated())) {
        return false;
      }
    }
    return true;
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
   * fails the whole pod; so every node must be tried as upstream would.
   *
   * @param plans node-independent plans from {@link #prepareForAnyNode}
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
          if (failsSomewhere(plan.index, alternative, pools, matcher)) {
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

  /**
   * Plans that do not depend on the node (no request uses All), to reuse across nodes; null when
   * some request uses All or preparing fails (then each node prepares, and reports, by itself).
   */
  List<ClaimPlan> prepareForAnyNode(List<ResourceClaim> claims) {
    for (ResourceClaim c : claims) {
      if (c.getSpec() == null
          || c.getSpec().getDevices() == null
          || c.getSpec().getDevices().getRequests() == null) {
        return null;
      }
      for (var r : c.getSpec().getDevices().getRequests()) {
        if (r.getExactly() != null && "All".equals(r.getExactly().getAllocationMode())) {
          return null;
        }
        if (r.getFirstAvailable() != null
            && r.getFirstAvailable().stream().anyMatch(s -> "All".equals(s.getAllocationMode()))) {
          return null;
        }
      }
    }
    try {
      return prepare(claims, List.of(), null);
    } catch (AllocationProblem p) {
      return null;
    }
  }

  /**
   * One attempt on one node. {@code shared} plans (from {@link #prepareForAnyNode}) are reused when
   * given; a failed search leaves them clean (every pick undone), an aborted one does not, so
   * callers must drop them after a search limit.
   */
  Attempt attempt(Node node, List<ResourceClaim> claims, List<ClaimPlan> shared) {
    List<Pool> pools = snapshot.inventory().poolsFor(node, options.features());
    DeviceMatcher matcher =
        new DeviceMatcher(
            options.selectors(),
            options.features(),
            node,
            snapshot.inventory().cachesResultsOf(options.selectors()));
    try {
      List<ClaimPlan> plans = shared != null ? shared : prepare(claims, pools, matcher);
      Search search =
          new Search(
              plans,
              pools,
              snapshot.allocated(),
              options.features(),
              matcher,
              options.shareIds(),
              options.stepBudget());
      if (!search.run()) {
        return new Attempt(null, null, null);
      }
      List<List<Search.Pick>> picks = search.picks();
      List<AllocationResult> results = new ArrayList<>();
      for (int i = 0; i < plans.size(); i++) {
        results.add(
            ResultBuilder.build(
                plans.get(i), picks.get(i), node.getMetadata().getName(), options.features()));
      }
      return new Attempt(results, null, null);
    } catch (AllocationProblem p) {
      return new Attempt(null, p, null);
    } catch (SearchLimitException e) {
      return new Attempt(null, null, e);
    }
  }

  private List<ClaimPlan> prepare(
      List<ResourceClaim> claims, List<Pool> pools, DeviceMatcher matcher) {
    List<ClaimPlan> plans = new ArrayList<>();
    for (int i = 0; i < claims.size(); i++) {
      plans.add(
          ClaimPlan.prepare(
              i,
              claims.get(i),
              snapshot.classes(),
              pools,
              options.features(),
              matcher,
              snapshot.allocated()));
    }
    return plans;
  }

  /**
   * Explanations for a failed attempt. {@code node} null means cluster-wide: every pool is
   * considered, as if all devices were reachable from one node.
   */
  List<ClaimOutcome> explain(Node node, List<ResourceClaim> claims, Attempt attempt) {
    String nodeName = node == null ? null : node.getMetadata().getName();
    List<ClaimOutcome> out = new ArrayList<>();
    if (attempt.problem() != null) {
      AllocationProblem p = attempt.problem();
      for (int i = 0; i < claims.size(); i++) {
        Explanation e =
            i == p.claimIndex()
                ? Explanation.problem(
                    p.kind(), nodeName, p.request(), p.getMessage(), p.expression())
                : Explanation.problem(
                    Explanation.Kind.BLOCKED_BY_OTHER_CLAIM,
                    nodeName,
                    null,
                    "claim "
                        + key(claims.get(p.claimIndex()))
                        + " of the same pod cannot be "
                        + "allocated",
                    null);
        out.add(new ClaimOutcome.NotAllocated(claims.get(i), e));
      }
      return out;
    }
    List<Pool> pools =
        node == null
            ? snapshot.inventory().allPools(options.features())
            : snapshot.inventory().poolsFor(node, options.features());
    DeviceMatcher matcher =
        new DeviceMatcher(
            options.selectors(),
            options.features(),
            node,
            snapshot.inventory().cachesResultsOf(options.selectors()));
    Diagnoser diagnoser =
        new Diagnoser(pools, snapshot.allocated(), options.features(), matcher, options.shareIds());
    List<Explanation> alone = new ArrayList<>();
    int firstShort = -1;
    for (int i = 0; i < claims.size(); i++) {
      Explanation e;
      try {
        ClaimPlan plan =
            ClaimPlan.prepare(
                i,
                claims.get(i),
                snapshot.classes(),
                pools,
                options.features(),
                matcher,
                snapshot.allocated());
        e = fitsAlone(plan, pools, matcher) ? null : diagnoser.explain(plan, nodeName);
      } catch (AllocationProblem p) {
        e = Explanation.problem(p.kind(), nodeName, p.request(), p.getMessage(), p.expression());
      } catch (SearchLimitException s) {
        e =
            Explanation.problem(
                Explanation.Kind.SEARCH_LIMIT, nodeName, null, s.getMessage(), null);
      }
      alone.add(e);
      if (e != null && firstShort < 0) {
        firstShort = i;
      }
    }
    for (int i = 0; i < claims.size(); i++) {
      Explanation e = alone.get(i);
      if (e == null && attempt.limit() != null) {
        e =
            new Explanation(
                Explanation.Kind.SEARCH_LIMIT,
                nodeName,
                List.of(),
                diagnoser.poolIssues(),
                List.of(),
                attempt.limit().getMessage(),
                null,
                null);
      } else if (e == null && firstShort >= 0) {
        e =
            Explanation.problem(
                Explanation.Kind.BLOCKED_BY_OTHER_CLAIM,
                nodeName,
                null,
                "claim " + key(claims.get(firstShort)) + " of the same pod cannot be allocated",
                null);
      } else if (e == null) {
        String why =
            node == null
                ? "enough free devices exist, but not on any one node"
                    + (claims.size() > 1 ? " for all of the pod's claims" : "")
                : "each claim fits alone, but not all of the pod's claims together";
        List<RequestReport> reports = List.of();
        if (node == null) {
          try {
            reports =
                diagnoser.reports(
                    ClaimPlan.prepare(
                        i,
                        claims.get(i),
                        snapshot.classes(),
                        pools,
                        options.features(),
                        matcher,
                        snapshot.allocated()));
          } catch (AllocationProblem p) {
            // counting matches cluster-wide evaluates selectors on devices no node's search
            // reached; an error there is no reason of this claim's, so the counts are left out
          }
        }
        e =
            new Explanation(
                Explanation.Kind.NO_COMMON_NODE,
                nodeName,
                reports,
                List.of(),
                List.of(),
                why,
                null,
                null);
      }
      out.add(new ClaimOutcome.NotAllocated(claims.get(i), e));
    }
    return out;
  }

  private boolean fitsAlone(ClaimPlan plan, List<Pool> pools, DeviceMatcher matcher) {
    Search s =
        new Search(
            List.of(plan.copy(ClaimPlan.constraints(plan.index, plan.claim))),
            pools,
            snapshot.allocated(),
            options.features(),
            matcher,
            options.shareIds(),
            options.stepBudget());
    return s.run();
  }

  static String key(ResourceClaim c) {
    return c.getMetadata().getNamespace() + "/" + c.getMetadata().getName();
  }
}
