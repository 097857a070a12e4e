package io.kdra.core.alloc;

import io.fabric8.kubernetes.api.model.resource.v1.DeviceTaint;
import io.kdra.core.model.DeviceId;
import io.kdra.core.model.Quantity;
import java.util.ArrayList;
import java.util.BitSet;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.function.Supplier;

/**
 * One depth-first backtracking search over claims, requests, subrequests and device slots, as
 * upstream's {@code allocateOne}: first fit in pool, slice, device order; further slots of the same
 * request resume after the last chosen device (combinations, not permutations); the first complete
 * solution wins. Single-threaded and single-use. Work is bounded by a step budget; when it runs out
 * the search throws {@link SearchLimitException}; when its {@link Deadline} passes (asked every
 * {@link Deadline#CHECK_EVERY} steps), {@link SearchDeadlineException}.
 */
final class Search {

  /** Outcome of one search step; {@code TOO_MANY} is upstream's "result max size exceeded". */
  private enum Step {
    DONE,
    FAILED,
    TOO_MANY
  }

  /** A picked device and what picking it changed, so that it can be undone. */
  record Pick(
      RequestData request,
      CandidateDevice device,
      Pool pool,
      boolean countersReserved,
      int constraintsAdded,
      boolean marked,
      Map<String, Quantity> consumed,
      String shareId,
      List<Runnable> groupsConsumed) {}

  private final List<ClaimPlan> claims;
  private final List<Pool> pools;
  private final AllocatedState allocated;
  private final AllocatorFeatures features;
  private final DeviceMatcher matcher;
  private final Supplier<String> shareIds;
  private final long budget;
  private final Deadline deadline;
  private final Counters counters;
  private final CompatibilityGroups groups;
  private final NodeOperations nodeOperations;
  private final Map<DeviceId, BitSet> allocating = new HashMap<>();
  private final Map<DeviceId, Map<String, Quantity>> allocatingCapacity = new HashMap<>();
  private long steps;

  Search(
      List<ClaimPlan> claims,
      List<Pool> pools,
      AllocatedState allocated,
      AllocatorFeatures features,
      DeviceMatcher matcher,
      Supplier<String> shareIds,
      long budget) {
    this(claims, pools, allocated, features, matcher, shareIds, budget, Deadline.NONE);
  }

  Search(
      List<ClaimPlan> claims,
      List<Pool> pools,
      AllocatedState allocated,
      AllocatorFeatures features,
      DeviceMatcher matcher,
      Supplier<String> shareIds,
      long budget,
      Deadline deadline) {
    this.deadline = deadline;
    this.claims = claims;
    this.pools = pools;
    this.allocated = allocated;
    this.features = features;
    this.matcher = matcher;
    this.shareIds = shareIds;
    this.budget = budget;
    this.counters = new Counters(allocated);
    this.groups = new CompatibilityGroups(allocated);
    this.nodeOperations = NodeOperations.on(features, matcher.node());
  }

  /** Runs the search; true when every claim got all its devices (see the plans' picks). */
  boolean run() {
    return allocateOne(0, 0, 0, 0, false, 0, 0, 0) == Step.DONE;
  }

  long steps() {
    return steps;
  }

  private Step allocateOne(
      int c,
      int r,
      int sub,
      int slot,
      boolean inSub,
      int startPool,
      int startSlice,
      int startDevice) {
    if (++steps > budget) {
      throw new SearchLimitException(steps - 1);
    }
    if (steps % Deadline.CHECK_EVERY == 0 && deadline.passed()) {
      throw new SearchDeadlineException();
    }
    if (c >= claims.size()) {
      return Step.DONE;
    }
    ClaimPlan claim = claims.get(c);
    if (r >= claim.requests.size()) {
      Step next = allocateOne(c + 1, 0, 0, 0, false, 0, 0, 0);
      return next == Step.TOO_MANY ? Step.FAILED : next;
    }
    ClaimPlan.RequestPlan plan = claim.requests.get(r);
    if (plan.firstAvailable && !inSub) {
      boolean allTooMany = true;
      for (int i = 0; i < plan.alternatives.size(); i++) {
        Step s = allocateOne(c, r, i, 0, true, 0, 0, 0);
        if (s == Step.TOO_MANY) {
          continue;
        }
        allTooMany = false;
        if (s == Step.DONE) {
          plan.selected = i;
          return Step.DONE;
        }
      }
      return allTooMany ? Step.TOO_MANY : Step.FAILED;
    }
    RequestData rd = plan.alternatives.get(sub);
    if (rd.spec().all() && rd.allDevices().isEmpty()) {
      return Step.FAILED;
    }
    if (slot >= rd.numDevices()) {
      return allocateOne(c, r + 1, 0, 0, false, 0, 0, 0);
    }
    if (claim.picks.size() + rd.numDevices() - slot > ClaimPlan.MAX_RESULTS) {
      return Step.TOO_MANY;
    }
    if (rd.spec().all()) {
      RequestData.Candidate cand = rd.allDevices().get(slot);
      Pick pick = allocateDevice(claim, rd, cand.device(), cand.pool(), true);
      if (pick == null) {
        return Step.FAILED;
      }
      Step s = allocateOne(c, r, sub, slot + 1, inSub, 0, 0, 0);
      if (s != Step.DONE) {
        undo(claim, pick);
      }
      return s;
    }
    boolean admin = rd.spec().adminAccess();
    for (int p = startPool; p < pools.size(); p++) {
      Pool pool = pools.get(p);
      if (!pool.usable() || (!admin && pool.exhaustion().isFull(allocated))) {
        continue;
      }
      int sliceStart = p == startPool ? startSlice : 0;
      boolean wholePool = sliceStart == 0 && (p != startPool || startDevice == 0);
      boolean allAllocated = true;
      for (int si = sliceStart; si < pool.slices().size(); si++) {
        List<CandidateDevice> devices = pool.slices().get(si).devices();
        int deviceStart = p == startPool && si == startSlice ? startDevice : 0;
        for (int di = deviceStart; di < devices.size(); di++) {
          CandidateDevice d = devices.get(di);
          if (allAllocated && !allocated.isAllocated(d.id())) {
            allAllocated = false;
          }
          if (admin ? allocatingFor(d.id(), c) : inUse(d.id())) {
            continue;
          }
          if (!matcher.selectable(c, rd, d)) {
            continue;
          }
          if (features.consumableCapacity() && !capacityFits(c, rd.spec(), d)) {
            continue;
          }
          Pick pick = allocateDevice(claim, rd, d, pool, false);
          if (pick == null) {
            continue;
          }
          Step s = allocateOne(c, r, sub, slot + 1, inSub, p, si, di + 1);
          if (s == Step.DONE) {
            return s;
          }
          undo(claim, pick);
          if (s == Step.TOO_MANY) {
            return s;
          }
        }
      }
      if (wholePool && allAllocated) {
        pool.exhaustion().markFull(allocated);
      }
    }
    return Step.FAILED;
  }

  /** Checks availability and constraints; on success records the pick and returns it. */
  private Pick allocateDevice(
      ClaimPlan claim, RequestData rd, CandidateDevice d, Pool pool, boolean must) {
    RequestSpec spec = rd.spec();
    boolean multi = features.consumableCapacity() && d.allowMultipleAllocations();
    if (!multi && spec.adminAccess() && allocatingFor(d.id(), claim.index)) {
      return null;
    }
    if (!spec.adminAccess() && inUse(d.id())) {
      return null;
    }
    if (!nodeOperations.allows(d)) {
      return null;
    }
    if (!features.partitionableDevices() && d.consumesCounters()) {
      return null;
    }
    boolean skipCounters =
        multi && (allocated.isShared(d.id()) || allocatingCapacity.containsKey(d.id()));
    List<Runnable> groupsConsumed = List.of();
    if (features.compatibilityGroups() && !skipCounters && d.consumesCounters()) {
      // before the counters, as upstream: a rejection here has nothing to release
      groupsConsumed = groups.tryConsume(pool, d);
      if (groupsConsumed == null) {
        return null;
      }
    }
    boolean reserved = false;
    if (!skipCounters && d.consumesCounters()) {
      if (!counters.tryReserve(pool, d)) {
        CompatibilityGroups.restore(groupsConsumed);
        return null;
      }
      reserved = true;
    }
    if (features.deviceTaints()) {
      DeviceTaint blocking = Taints.blocking(d.taints(), spec.tolerations());
      if (blocking != null) {
        release(pool, d, reserved, groupsConsumed);
        return null;
      }
    }
    int added = 0;
    for (Constraint con : claim.constraints) {
      if (!con.add(spec, d, (r, dev, a) -> matcher.constraintValue(claim.index, r, dev, a))) {
        for (int i = added - 1; i >= 0; i--) {
          claim.constraints.get(i).remove(spec, d);
        }
        release(pool, d, reserved, groupsConsumed);
        if (must) {
          throw new AllocationProblem(
              claim.index,
              spec.resultName(),
              Explanation.Kind.FATAL,
              "cannot add device "
                  + d.id()
                  + " because a claim constraint would not be "
                  + "satisfied: "
                  + con.describe(),
              null);
        }
        return null;
      }
      added++;
    }
    if (features.consumableCapacity() && !capacityFits(claim.index, spec, d)) {
      for (int i = added - 1; i >= 0; i--) {
        claim.constraints.get(i).remove(spec, d);
      }
      release(pool, d, reserved, groupsConsumed);
      return null;
    }
    if (!multi) {
      allocating.computeIfAbsent(d.id(), k -> new BitSet()).set(claim.index);
    }
    Map<String, Quantity> use = null;
    String shareId = null;
    if (multi) {
      use = Capacity.consumption(spec, d, features.fractionalCapacityRange());
      shareId = shareIds.get();
      Map<String, Quantity> sum = allocatingCapacity.computeIfAbsent(d.id(), k -> new HashMap<>());
      use.forEach((k, v) -> sum.merge(k, v, Quantity::add));
    }
    Pick pick = new Pick(rd, d, pool, reserved, added, !multi, use, shareId, groupsConsumed);
    claim.picks.add(pick);
    return pick;
  }

  private void undo(ClaimPlan claim, Pick pick) {
    claim.picks.remove(claim.picks.size() - 1);
    CandidateDevice d = pick.device();
    if (pick.consumed() != null) {
      Map<String, Quantity> sum = allocatingCapacity.get(d.id());
      pick.consumed().forEach((k, v) -> sum.merge(k, Quantity.ZERO.subtract(v), Quantity::add));
      if (claimsSharing(d.id(), pick) == 0) {
        allocatingCapacity.remove(d.id());
      }
    }
    if (pick.marked()) {
      allocating.get(d.id()).clear(claim.index);
    }
    for (int i = pick.constraintsAdded() - 1; i >= 0; i--) {
      claim.constraints.get(i).remove(pick.request().spec(), d);
    }
    release(pick.pool(), d, pick.countersReserved(), pick.groupsConsumed());
  }

  /** Releases what a pick took from the pool's counter sets: counters, then group narrowing. */
  private void release(Pool pool, CandidateDevice d, boolean reserved, List<Runnable> groups) {
    if (reserved) {
      counters.release(pool, d);
    }
    CompatibilityGroups.restore(groups);
  }

  /** Remaining picks of the device (shares) anywhere in the search, other than {@code removed}. */
  private int claimsSharing(DeviceId id, Pick removed) {
    int n = 0;
    for (ClaimPlan c : claims) {
      for (Pick p : c.picks) {
        if (p != removed && p.device().id().equals(id)) {
          n++;
        }
      }
    }
    return n;
  }

  /** A capacity that cannot be computed aborts the allocation, as upstream's does. */
  private boolean capacityFits(int claimIndex, RequestSpec spec, CandidateDevice d) {
    try {
      return Capacity.fits(spec, d, consumed(d.id()), features.fractionalCapacityRange());
    } catch (Capacity.CapacityException e) {
      throw new AllocationProblem(
          claimIndex,
          spec.resultName(),
          Explanation.Kind.FATAL,
          "checking capacity for device " + d.id() + ": " + e.getMessage(),
          null);
    }
  }

  private boolean inUse(DeviceId id) {
    if (allocated.isAllocated(id)) {
      return true;
    }
    BitSet b = allocating.get(id);
    return b != null && !b.isEmpty();
  }

  private boolean allocatingFor(DeviceId id, int claimIndex) {
    BitSet b = allocating.get(id);
    return b != null && b.get(claimIndex);
  }

  private Map<String, Quantity> consumed(DeviceId id) {
    Map<String, Quantity> existing = allocated.consumedCapacity(id);
    Map<String, Quantity> inFlight = allocatingCapacity.get(id);
    if (inFlight == null || inFlight.isEmpty()) {
      return existing;
    }
    Map<String, Quantity> sum = new HashMap<>(existing);
    inFlight.forEach((k, v) -> sum.merge(k, v, Quantity::add));
    return sum;
  }

  /** All picks of all claims, for building results. */
  List<List<Pick>> picks() {
    List<List<Pick>> out = new ArrayList<>();
    for (ClaimPlan c : claims) {
      out.add(List.copyOf(c.picks));
    }
    return out;
  }
}
