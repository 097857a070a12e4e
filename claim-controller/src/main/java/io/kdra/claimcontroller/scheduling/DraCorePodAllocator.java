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
import io.kdra.core.alloc.InMemoryDeviceClassLister;
import io.kdra.core.alloc.PodScheduler;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.stream.Collectors;

/**
 * {@link PodAllocator} on dra-core's structured allocator: a snapshot of the slices, classes and
 * every known allocation, then {@link PodScheduler#schedule} over the candidate nodes (first node
 * by name where all the pod's unallocated claims fit together, as the scheduler without scoring).
 * Stateless; the caller serialises calls and passes its own recent allocations in
 * {@code allClaims}.
 */
public final class DraCorePodAllocator implements PodAllocator {

  private final AllocatorOptions options;

  public DraCorePodAllocator(AllocatorOptions options) {
    this.options = options;
  }

  @Override
  public Decision allocate(Pod pod, List<Node> candidates, List<ResourceClaim> unallocated,
      List<ResourceClaim> allClaims, ClusterView view) {
    AllocationSnapshot snapshot = AllocationSnapshot.of(view.slices(),
        new InMemoryDeviceClassLister(view.deviceClasses()),
        AllocatedState.fromClaims(allClaims));
    PodScheduler.Placement placement = PodScheduler.schedule(new Allocator(snapshot, options),
        candidates, pod, unallocated);
    if (placement.allocated()) {
      Map<String, AllocationResult> results = new LinkedHashMap<>();
      for (ClaimOutcome o : placement.outcomes()) {
        results.put(o.claim().getMetadata().getUid(), ((ClaimOutcome.Allocated) o).result());
      }
      return new Decision.Placed(placement.node(), results);
    }
    Map<String, String> perClaim = new LinkedHashMap<>();
    String reason = "Unsatisfiable";
    for (ClaimOutcome o : placement.outcomes()) {
      if (o instanceof ClaimOutcome.NotAllocated na) {
        perClaim.put(o.claim().getMetadata().getName(), na.explanation().summary());
        if ("Unsatisfiable".equals(reason)) {
          reason = camel(na.explanation().kind().name());
        }
      }
    }
    String message = perClaim.entrySet().stream()
        .map(e -> "claim " + e.getKey() + ": " + e.getValue())
        .collect(Collectors.joining("; "));
    return new Decision.NotPlaced(message, perClaim, reason);
  }

  /** {@code MISSING_CLASS} as {@code MissingClass}, for a metrics tag. */
  static String camel(String kind) {
    StringBuilder b = new StringBuilder();
    for (String part : kind.toLowerCase(java.util.Locale.ROOT).split("_")) {
      b.append(Character.toUpperCase(part.charAt(0))).append(part.substring(1));
    }
    return b.toString();
  }
}
