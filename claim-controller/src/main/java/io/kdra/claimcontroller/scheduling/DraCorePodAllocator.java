package io.kdra.claimcontroller.scheduling;

import io.fabric8.kubernetes.api.model.Node;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.resource.v1.AllocationResult;
import io.fabric8.kubernetes.api.model.resource.v1.ResourceClaim;
import io.kdra.core.alloc.AllocatedState;
import io.kdra.core.alloc.AllocationSnapshot;
import io.kdra.core.alloc.Allocator;
import io.kdra.core.alloc.AllocatorOptions;
import io.kdra.core.alloc.ClaimOutcome;
import io.kdra.core.alloc.Deadline;
import io.kdra.core.alloc.InMemoryDeviceClassLister;
import io.kdra.core.alloc.PodScheduler;
import io.kdra.core.alloc.RankedSearch;
import io.kdra.core.taint.DeviceTaintRules;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.stream.Collectors;

/**
 * {@link PodAllocator} on dra-core's structured allocator: a snapshot of the slices, classes and
 * every known allocation, then {@link PodScheduler#schedule} over the candidate nodes (the first
 * node where all the pod's unallocated claims fit together, searching from where the last pod's
 * search stopped, as kube-scheduler; scored among a bounded number for {@code firstAvailable}),
 * stopping at the attempt's deadline; why no node fits is diagnosed by the caller, outside its lock
 * ({@link Decision.Unexplained}). {@link #allocate} keeps its snapshot from one call to the next
 * ({@link SnapshotCache}), so the inventory's caches last while the slices do; the caller
 * serialises calls and passes what every allocation holds, its own recent ones included ({@link
 * AllocatedClaims}, kept incrementally). {@link #placement} and {@link #allocator} build a fresh
 * snapshot for one-off questions ({@code kubectl dra}).
 */
public final class DraCorePodAllocator implements PodAllocator {

  private final AllocatorOptions options;
  private final SnapshotCache cache = new SnapshotCache();

  /**
   * Where the next pod's search starts among its candidates, as kube-scheduler's {@code
   * nextStartNodeIndex}: advanced by the nodes each search went over, so that the bounded scoring
   * of {@code firstAvailable} claims does not keep scoring the same first nodes by name (it left
   * devices of the best choice free further on). Guarded by {@link #cache}.
   */
  private int nextStart;

  /**
   * The allocator for searches off the scheduling lock: its own snapshot cache, so that such a
   * search never holds {@link #cache} while the pods under the lock search (the inventory is built
   * a second time, once, when the first such search runs).
   */
  private final DraCorePodAllocator detached;

  public DraCorePodAllocator(AllocatorOptions options) {
    this.options = options;
    this.detached = new DraCorePodAllocator(options, null);
  }

  private DraCorePodAllocator(AllocatorOptions options, DraCorePodAllocator detached) {
    this.options = options;
    this.detached = detached == null ? this : detached;
  }

  @Override
  public PodAllocator detached() {
    return detached;
  }

  @Override
  public Decision allocate(
      Pod pod,
      List<Node> candidates,
      List<ResourceClaim> unallocated,
      AllocatedState allocated,
      ClusterView view,
      Deadline deadline) {
    synchronized (cache) {
      AllocationSnapshot snapshot =
          cache.snapshot(view.slices(), view.deviceTaintRules(), view.deviceClasses(), allocated);
      PodScheduler.Searched searched =
          PodScheduler.search(
              new Allocator(snapshot, options),
              candidates,
              pod,
              unallocated,
              List.of(),
              nextStart,
              deadline);
      if (!candidates.isEmpty()) {
        nextStart = (int) ((nextStart + (long) searched.examined()) % candidates.size());
      }
      if (searched.placement() != null) {
        return decide(searched.placement());
      }
      return new Decision.Unexplained(() -> (Decision.NotPlaced) decide(searched.explained()));
    }
  }

  @Override
  public Decision allocateRanked(
      Pod pod,
      RankedSearch.Ranked ranked,
      List<ResourceClaim> unallocated,
      List<ResourceClaim> earlier,
      AllocatedState allocated,
      ClusterView view,
      Deadline deadline) {
    synchronized (cache) {
      AllocationSnapshot snapshot =
          cache.snapshot(view.slices(), view.deviceTaintRules(), view.deviceClasses(), allocated);
      PodScheduler.Searched searched =
          RankedSearch.search(
              new Allocator(snapshot, options), ranked, pod, unallocated, earlier, deadline);
      if (searched.placement() != null) {
        return decide(searched.placement());
      }
      return new Decision.Unexplained(() -> (Decision.NotPlaced) decide(searched.explained()));
    }
  }

  /**
   * The allocator's placement behind {@link #allocate}, with its structured explanations ({@code
   * kubectl dra} shows their per-request counts).
   */
  public PodScheduler.Placement placement(
      Pod pod,
      List<Node> candidates,
      List<ResourceClaim> unallocated,
      List<ResourceClaim> allClaims,
      ClusterView view) {
    return PodScheduler.schedule(allocator(allClaims, view), candidates, pod, unallocated);
  }

  /**
   * The allocator over the view's slices (tainted by its DeviceTaintRules) and classes, with every
   * claim's allocation taken.
   */
  public Allocator allocator(List<ResourceClaim> allClaims, ClusterView view) {
    AllocationSnapshot snapshot =
        AllocationSnapshot.of(
            DeviceTaintRules.apply(view.slices(), view.deviceTaintRules()),
            new InMemoryDeviceClassLister(view.deviceClasses()),
            AllocatedState.fromClaims(allClaims));
    return new Allocator(snapshot, options);
  }

  /** The decision for a placement: its node and results, or its explanations as one message. */
  public static Decision decide(PodScheduler.Placement placement) {
    if (placement.allocated()) {
      Map<String, AllocationResult> results = new LinkedHashMap<>();
      for (ClaimOutcome o : placement.outcomes()) {
        results.put(o.claim().getMetadata().getUid(), ((ClaimOutcome.Allocated) o).result());
      }
      return new Decision.Placed(placement.node(), results);
    }
    Map<String, String> perClaim = perClaim(placement.outcomes());
    String reason = "Unsatisfiable";
    for (ClaimOutcome o : placement.outcomes()) {
      if (o instanceof ClaimOutcome.NotAllocated na && "Unsatisfiable".equals(reason)) {
        reason = camel(na.explanation().kind().name());
      }
    }
    return new Decision.NotPlaced(message(perClaim), perClaim, reason);
  }

  /** Claim name to the summary of its explanation, for the claims not allocated. */
  public static Map<String, String> perClaim(List<ClaimOutcome> outcomes) {
    Map<String, String> perClaim = new LinkedHashMap<>();
    for (ClaimOutcome o : outcomes) {
      if (o instanceof ClaimOutcome.NotAllocated na) {
        perClaim.put(o.claim().getMetadata().getName(), na.explanation().summary());
      }
    }
    return perClaim;
  }

  /** {@code claim a: ...; claim b: ...}: the message for the pod's condition and Event. */
  public static String message(Map<String, String> perClaim) {
    return perClaim.entrySet().stream()
        .map(e -> "claim " + e.getKey() + ": " + e.getValue())
        .collect(Collectors.joining("; "));
  }

  /** {@code MISSING_CLASS} as {@code MissingClass}, for a metrics tag. */
  static String camel(String kind) {
    StringBuilder b = new StringBuilder();
    for (String part : kind.toLowerCase(Locale.ROOT).split("_")) {
      b.append(Character.toUpperCase(part.charAt(0))).append(part.substring(1));
    }
    return b.toString();
  }
}
