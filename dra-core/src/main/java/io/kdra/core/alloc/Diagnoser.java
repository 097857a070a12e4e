package io.kdra.core.alloc;

import java.util.ArrayList;
import java.util.List;
import java.util.function.Supplier;

/**
 * Builds the {@link Explanation} for a claim that could not be allocated: per request, how many
 * devices are in the class, match the request, and are free (and why the others are not); which
 * pools were skipped; and which constraints no combination of devices satisfies (found by
 * re-running a bounded search with one constraint at a time). Pure; uses its own search state.
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
          } else if (features.consumableCapacity()
              && !Capacity.fits(spec, d, allocated.consumedCapacity(d.id()))) {
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
        noCapacity);
  }
}
