package io.kdra.claimcontroller.scheduling;

import io.fabric8.kubernetes.api.model.resource.v1.AllocationResult;
import io.fabric8.kubernetes.api.model.resource.v1.ResourceClaim;
import io.fabric8.kubernetes.api.model.resource.v1.ResourceClaimBuilder;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;

/**
 * This controller's own recent writes, until the informers show them: claims it created (so a
 * quick second reconcile of the pod does not create another) and allocations it wrote (so the
 * next pod's allocation counts those devices as taken). Like upstream's mutation cache, entries
 * expire after a while; by then the informer has the object, or the write was lost and the
 * informer's answer is the truth. Thread-safe.
 */
public final class RecentWrites {

  private record Entry<T>(T value, Instant at) {}

  private final Map<String, Entry<ResourceClaim>> created = new ConcurrentHashMap<>();
  private final Map<String, Entry<AllocationResult>> allocated = new ConcurrentHashMap<>();
  private final Duration ttl;
  private final Clock clock;

  public RecentWrites(Duration ttl, Clock clock) {
    this.ttl = ttl;
    this.clock = clock;
  }

  /** Remembers a claim this controller created. */
  public void created(ResourceClaim claim) {
    created.put(claim.getMetadata().getUid(), new Entry<>(claim, clock.instant()));
  }

  /** Remembers an allocation this controller wrote to the claim with {@code uid}. */
  public void allocated(String uid, AllocationResult allocation) {
    allocated.put(uid, new Entry<>(allocation, clock.instant()));
  }

  /** Forgets the allocation of claim {@code uid} (it was rolled back or deallocated). */
  public void forgetAllocation(String uid) {
    allocated.remove(uid);
  }

  /** The informer's claims plus created ones it lacks, with remembered allocations applied. */
  public List<ResourceClaim> overlay(List<ResourceClaim> informed) {
    expire();
    List<ResourceClaim> out = new ArrayList<>(informed.size() + created.size());
    Set<String> seen = new HashSet<>();
    for (ResourceClaim c : informed) {
      seen.add(c.getMetadata().getUid());
      out.add(withAssumed(c));
    }
    for (Entry<ResourceClaim> e : created.values()) {
      if (!seen.contains(e.value().getMetadata().getUid())) {
        out.add(withAssumed(e.value()));
      }
    }
    return out;
  }

  /** The claim with a remembered allocation applied when the informer's copy lacks it. */
  public ResourceClaim withAssumed(ResourceClaim c) {
    Entry<AllocationResult> a = allocated.get(c.getMetadata().getUid());
    boolean has = c.getStatus() != null && c.getStatus().getAllocation() != null;
    if (has) {
      // The informer caught up; from now on its answer (even a later deallocation) is the truth.
      allocated.remove(c.getMetadata().getUid());
      return c;
    }
    if (a == null) {
      return c;
    }
    return new ResourceClaimBuilder(c).editOrNewStatus().withAllocation(a.value()).endStatus()
        .build();
  }

  private void expire() {
    Instant cutoff = clock.instant().minus(ttl);
    created.values().removeIf(e -> e.at().isBefore(cutoff));
    allocated.values().removeIf(e -> e.at().isBefore(cutoff));
  }
}
