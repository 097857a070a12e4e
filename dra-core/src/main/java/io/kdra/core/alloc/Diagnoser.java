package io.kdra.core.alloc;

import io.fabric8.kubernetes.api.model.Node;
import io.fabric8.kubernetes.api.model.resource.v1.ResourceClaim;
import java.util.ArrayList;
import java.util.List;
import java.util.function.Supplier;

/**
 * Builds the {@link Explanation} for a claim that could not be allocated: per request, how many
 * devices are in the class, match the request, and are free (and why the others are not); which
 * pools were skipped; and which constraints no combination of devices satisfies (found by
 * re-running a bounded search with one constraint at a time); and, for a failed attempt to allocate
 * several claims together, each claim's outcome ({@link #outcomes}). Pure; uses its own search
 * state.
 */
final class Diagnoser {

  /** Step budget for each constraint probe; probes that run out count as "not proven failing". */
  private static final long PROBE_BUDGET = 20_000;

  private final List<Pool> pools;
  private final AllocatedState allocated;
  private final AllocatorFeatures features;
  private final DeviceMatcher matcher;
  private final Supplier<String> shareIds;

  Diagnoser(
      List<Pool> pools,
      AllocatedState allocated,
      AllocatorFeatures features,
      DeviceMatcher matcher,
      Supplier<String> shareIds) {
    this.pools = pools;
    this.allocated = allocated;
    this.features = features;
    this.matcher = matcher;
    this.shareIds = shareIds;
  }

  /**
   * The outcomes of a failed attempt to allocate {@code claims} together, each claim with its
   * explanation: the problem found (the other claims blocked by it), or, per claim prepared and
   * searched alone, why it does not fit; a claim that fits alone is blocked by one that does not,
   * or by the search limit, or fits only apart from the others. {@code node} null means
   * cluster-wide: every pool is considered, as if all devices were reachable from one node.
   */
  static List<ClaimOutcome> outcomes(
      AllocationSnapshot snapshot,
      AllocatorOptions options,
      Node node,
      List<ResourceClaim> claims,
      Allocator.Attempt attempt) {
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
                        + Allocator.key(claims.get(p.claimIndex()))
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
    List<ClaimPlan> plans = new ArrayList<>();
    int firstShort = -1;
    for (int i = 0; i < claims.size(); i++) {
      Explanation e;
      ClaimPlan plan = null;
      try {
        plan =
            ClaimPlan.prepare(
                i,
                claims.get(i),
                snapshot.classes(),
                pools,
                options.features(),
                matcher,
                snapshot.allocated());
        e =
            fitsAlone(snapshot, options, plan, pools, matcher)
                ? null
                : diagnoser.explain(plan, nodeName);
      } catch (AllocationProblem p) {
        e = Explanation.problem(p.kind(), nodeName, p.request(), p.getMessage(), p.expression());
      } catch (SearchLimitException s) {
        e =
            Explanation.problem(
                Explanation.Kind.SEARCH_LIMIT, nodeName, null, s.getMessage(), null);
      }
      alone.add(e);
      plans.add(plan);
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
                "claim "
                    + Allocator.key(claims.get(firstShort))
                    + " of the same pod cannot be allocated",
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
            // the plan prepared above: a claim without an explanation prepared without a problem
            reports = diagnoser.reports(plans.get(i));
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

  private static boolean fitsAlone(
      AllocationSnapshot snapshot,
      AllocatorOptions options,
      ClaimPlan plan,
      List<Pool> pools,
      DeviceMatcher matcher) {
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

  /** Pools that were skipped because they are incomplete or invalid. */
  List<PoolIssue> poolIssues() {
    return pools.stream().filter(p -> !p.usable()).map(PoolIssue::of).toList();
  }

  /** Per-request counts for the claim's requests and subrequests. */
  List<RequestReport> reports(ClaimPlan plan) {
    List<RequestReport> out = new ArrayList<>();
    Counters counters = new Counters(allocated);
    for (ClaimPlan.RequestPlan rp : plan.requests) {
      for (RequestData rd : rp.alternatives) {
        out.add(report(plan.index, rd, counters));
      }
    }
    return out;
  }

  /** A full UNSATISFIABLE explanation for the claim, as if allocated alone. */
  Explanation explain(ClaimPlan plan, String node) {
    List<RequestReport> reports = reports(plan);
    List<String> failing = new ArrayList<>();
    String message = null;
    boolean anyShort = false;
    for (ClaimPlan.RequestPlan rp : plan.requests) {
      boolean allShort = true;
      for (int i = 0; i < rp.alternatives.size(); i++) {
        allShort &= reportFor(reports, rp.alternatives.get(i)).short_();
      }
      anyShort |= allShort;
    }
    if (!anyShort) {
      List<Constraint> all = ClaimPlan.constraints(plan.index, plan.claim);
      for (int i = 0; i < all.size(); i++) {
        List<Constraint> one = ClaimPlan.constraints(plan.index, plan.claim).subList(i, i + 1);
        if (probeFails(plan.copy(List.copyOf(one)))) {
          failing.add(all.get(i).describe());
        }
      }
      if (failing.isEmpty()) {
        if (!all.isEmpty()
            && probeFails(plan.copy(ClaimPlan.constraints(plan.index, plan.claim)))) {
          message = "the claim's constraints cannot all be satisfied together";
        } else if (probeFails(plan.copy(List.of()))) {
          message = "not enough free devices for all requests together";
        } else {
          message = "devices are free, but not together with the other claims being allocated";
        }
      }
    }
    return new Explanation(
        Explanation.Kind.UNSATISFIABLE, node, reports, poolIssues(), failing, message, null, null);
  }

  private static RequestReport reportFor(List<RequestReport> reports, RequestData rd) {
    for (RequestReport r : reports) {
      if (r.request().equals(rd.spec().resultName())) {
        return r;
      }
    }
    throw new IllegalStateException("no report for " + rd.spec().resultName());
  }

  /** For the explanation only: a capacity that cannot be computed counts as not fitting. */
  private boolean capacityFits(RequestSpec spec, CandidateDevice d) {
    try {
      return Capacity.fits(
          spec, d, allocated.consumedCapacity(d.id()), features.fractionalCapacityRange());
    } catch (Capacity.CapacityException e) {
      return false;
    }
  }

  private boolean probeFails(ClaimPlan copy) {
    try {
      Search s =
          new Search(List.of(copy), pools, allocated, features, matcher, shareIds, PROBE_BUDGET);
      return !s.run();
    } catch (SearchLimitException e) {
      return false;
    } catch (AllocationProblem e) {
      return true;
    }
  }

  private RequestReport report(int claimIndex, RequestData rd, Counters counters) {
    int inClass = 0;
    int matching = 0;
    int free = 0;
    int taken = 0;
    int tainted = 0;
    String blockingTaint = null;
    int noCounters = 0;
    int noCapacity = 0;
    int noNodeOperations = 0;
    NodeOperations nodeOperations = NodeOperations.on(features, matcher.node());
    RequestSpec spec = rd.spec();
    for (Pool pool : pools) {
      if (!pool.usable()) {
        continue;
      }
      for (SliceInfo s : pool.slices()) {
        for (CandidateDevice d : s.devices()) {
          if (!matcher.visible(d) || !matcher.classMatches(claimIndex, rd, d)) {
            continue;
          }
          inClass++;
          if (!matcher.requestMatches(claimIndex, rd, d)) {
            continue;
          }
          matching++;
          boolean multi = features.consumableCapacity() && d.allowMultipleAllocations();
          if (!spec.adminAccess() && !multi && allocated.isAllocated(d.id())) {
            taken++;
          } else if (!nodeOperations.allows(d)) {
            noNodeOperations++;
          } else if (features.deviceTaints()
              && Taints.blocking(d.taints(), spec.tolerations()) != null) {
            tainted++;
            if (blockingTaint == null) {
              blockingTaint = Taints.describe(Taints.blocking(d.taints(), spec.tolerations()));
            }
          } else if (d.consumesCounters()
              && (!features.partitionableDevices()
                  || (!(multi && allocated.isShared(d.id())) && !counters.wouldFit(pool, d)))) {
            noCounters++;
          } else if (features.consumableCapacity() && !capacityFits(spec, d)) {
            noCapacity++;
          } else {
            free++;
          }
        }
      }
    }
    long needed = spec.all() ? matching : spec.count();
    boolean filtered = !spec.selectors().isEmpty() || !spec.capacityRequests().isEmpty();
    return new RequestReport(
        spec.resultName(),
        spec.className(),
        needed,
        spec.all(),
        inClass,
        filtered,
        matching,
        free,
        taken,
        tainted,
        blockingTaint,
        noCounters,
        noCapacity,
        noNodeOperations == 0 ? null : noNodeOperations + " " + nodeOperationsWhy(features));
  }

  /** Why devices that skip node operations are refused here: the gate, or the node. */
  private String nodeOperationsWhy(AllocatorFeatures features) {
    return features.optionalNodeOperations()
        ? "skip node operations, which node "
            + (matcher.node() == null ? "" : matcher.node().getMetadata().getName())
            + " does not declare"
        : "skip node operations, which needs " + NodeOperations.FEATURE + " on";
  }
}
