package io.kdra.claimcontroller.scheduling;

import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.PodBuilder;
import io.fabric8.kubernetes.api.model.resource.v1.AllocationResult;
import io.fabric8.kubernetes.api.model.resource.v1.ResourceClaim;
import io.fabric8.kubernetes.api.model.resource.v1.ResourceClaimBuilder;
import io.kdra.claimcontroller.domain.TemplateClaims;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Iterator;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.function.Consumer;
import java.util.function.Function;

/**
 * This controller's own recent writes, until the informers show them: claims it created (so a quick
 * second reconcile of the pod does not create another), allocations it decided on (so the next
 * pod's allocation counts those devices as taken, also while the first pod's writes are still in
 * flight: the scheduler's "assume" step) and pods it is binding (so that what they request counts
 * on their node). Like upstream's mutation cache, entries expire after a while; by then the
 * informer has the object, or the write was lost and the informer's answer is the truth.
 * Thread-safe.
 */
public final class RecentWrites {

  private record Entry<T>(T value, Instant at) {}

  private final Map<String, Entry<ResourceClaim>> created = new ConcurrentHashMap<>();
  private final Map<String, Entry<AllocationResult>> allocated = new ConcurrentHashMap<>();
  private final Map<String, Entry<Pod>> binding = new ConcurrentHashMap<>();
  private final Duration ttl;
  private final Clock clock;

  /**
   * Told the UID of every claim whose created copy or assumed allocation was added, replaced or
   * dropped (also by expiry), right after the change: {@link AllocatedClaims} rechecks only those.
   */
  private final List<Consumer<String>> claimListeners = new CopyOnWriteArrayList<>();

  public RecentWrites(Duration ttl, Clock clock) {
    this.ttl = ttl;
    this.clock = clock;
  }

  /** Adds who is told of changes to created claims and assumed allocations. */
  void onClaimChanged(Consumer<String> listener) {
    claimListeners.add(listener);
  }

  private void claimChanged(String uid) {
    for (Consumer<String> l : claimListeners) {
      l.accept(uid);
    }
  }

  /** Remembers a claim this controller created. */
  public void created(ResourceClaim claim) {
    created.put(claim.getMetadata().getUid(), new Entry<>(claim, clock.instant()));
    claimChanged(claim.getMetadata().getUid());
  }

  /**
   * Forgets the created claim with {@code uid} (it was deleted, or replaced by its stored copy).
   */
  public void forgetCreated(String uid) {
    if (created.remove(uid) != null) {
      claimChanged(uid);
    }
  }

  /** The created claim with {@code uid} while remembered. */
  Optional<ResourceClaim> createdByUid(String uid) {
    Entry<ResourceClaim> e = created.get(uid);
    return e == null ? Optional.empty() : Optional.of(e.value());
  }

  /** Whether an allocation of the claim with {@code uid} is remembered (assumed). */
  boolean assumes(String uid) {
    return allocated.containsKey(uid);
  }

  /** Whether the pod with {@code uid} is being bound by this process, as far as it knows. */
  public boolean isBinding(String uid) {
    expire();
    return binding.containsKey(uid);
  }

  /** Remembers an allocation this controller wrote to the claim with {@code uid}. */
  public void allocated(String uid, AllocationResult allocation) {
    allocated.put(uid, new Entry<>(allocation, clock.instant()));
    claimChanged(uid);
  }

  /** Forgets the allocation of claim {@code uid} (it was rolled back or deallocated). */
  public void forgetAllocation(String uid) {
    if (allocated.remove(uid) != null) {
      claimChanged(uid);
    }
  }

  /**
   * Remembers that {@code pod} is being bound to {@code node}, until the informer shows it bound
   * ({@link #assumedBound}) or {@link #forgetBinding}.
   */
  public void binding(Pod pod, String node) {
    Pod bound = new PodBuilder(pod).editOrNewSpec().withNodeName(node).endSpec().build();
    binding.put(pod.getMetadata().getUid(), new Entry<>(bound, clock.instant()));
  }

  /** Forgets the binding of the pod with {@code uid} (it failed or was rolled back). */
  public void forgetBinding(String uid) {
    binding.remove(uid);
  }

  /**
   * Pods being bound, with {@code spec.nodeName} set, that {@code informed} (the informer's copy of
   * a pod, by namespace and name, or empty) does not show bound yet.
   */
  public List<Pod> assumedBound(Function<Pod, Optional<Pod>> informed) {
    expire();
    List<Pod> out = new ArrayList<>();
    for (Map.Entry<String, Entry<Pod>> e : binding.entrySet()) {
      Pod seen = informed.apply(e.getValue().value()).orElse(null);
      if (seen != null
          && e.getKey().equals(seen.getMetadata().getUid())
          && seen.getSpec() != null
          && seen.getSpec().getNodeName() != null) {
        binding.remove(e.getKey());
      } else {
        out.add(e.getValue().value());
      }
    }
    return out;
  }

  /** A claim this controller created that the informer may not show yet. */
  public Optional<ResourceClaim> created(String namespace, String name) {
    expire();
    return created.values().stream()
        .map(Entry::value)
        .filter(
            c ->
                namespace.equals(c.getMetadata().getNamespace())
                    && name.equals(c.getMetadata().getName()))
        .findFirst();
  }

  /**
   * Every remembered created claim named {@code namespace/name} (several: the in-memory claims for
   * extended resources share one name), expired ones included until the next expiry.
   */
  List<ResourceClaim> createdAt(String namespace, String name) {
    List<ResourceClaim> out = new ArrayList<>(1);
    for (Entry<ResourceClaim> e : created.values()) {
      ResourceClaim c = e.value();
      if (namespace.equals(c.getMetadata().getNamespace())
          && name.equals(c.getMetadata().getName())) {
        out.add(c);
      }
    }
    return out;
  }

  /** The claims this controller created for the pod with {@code podUid}, as created. */
  public List<ResourceClaim> createdFor(String namespace, String podUid) {
    expire();
    return created.values().stream()
        .map(Entry::value)
        .filter(c -> namespace.equals(c.getMetadata().getNamespace()))
        .filter(c -> TemplateClaims.owningPod(c).map(o -> podUid.equals(o.getUid())).orElse(false))
        .toList();
  }

  /**
   * The informer's claims plus created ones it lacks, with remembered allocations applied. A
   * created claim the informer shows is forgotten: from then on the informer answers for it, and
   * what is remembered stays as small as the informer's lag.
   */
  public List<ResourceClaim> overlay(List<ResourceClaim> informed) {
    expire();
    List<ResourceClaim> out = new ArrayList<>(informed.size() + created.size());
    for (ResourceClaim c : informed) {
      // a lookup first: a removal locks the key's bin, and most claims are not remembered
      if (!created.isEmpty() && created.containsKey(c.getMetadata().getUid())) {
        created.remove(c.getMetadata().getUid());
      }
      out.add(withAssumed(c));
    }
    for (Entry<ResourceClaim> e : created.values()) {
      out.add(withAssumed(e.value()));
    }
    return out;
  }

  /** The claim with a remembered allocation applied when the informer's copy lacks it. */
  public ResourceClaim withAssumed(ResourceClaim c) {
    Entry<AllocationResult> a =
        allocated.isEmpty() ? null : allocated.get(c.getMetadata().getUid());
    boolean has = c.getStatus() != null && c.getStatus().getAllocation() != null;
    if (has) {
      // The informer caught up; from now on its answer (even a later deallocation) is the truth.
      if (a != null) {
        allocated.remove(c.getMetadata().getUid());
      }
      return c;
    }
    if (a == null) {
      return c;
    }
    return new ResourceClaimBuilder(c)
        .editOrNewStatus()
        .withAllocation(a.value())
        .endStatus()
        .build();
  }

  /** Drops what is older than the TTL now (it also happens on most reads). */
  void expire() {
    Instant cutoff = clock.instant().minus(ttl);
    expire(created, cutoff, true);
    expire(allocated, cutoff, true);
    expire(binding, cutoff, false);
  }

  private <T> void expire(Map<String, Entry<T>> entries, Instant cutoff, boolean claims) {
    for (Iterator<Map.Entry<String, Entry<T>>> it = entries.entrySet().iterator(); it.hasNext(); ) {
      Map.Entry<String, Entry<T>> e = it.next();
      if (e.getValue().at().isBefore(cutoff) && entries.remove(e.getKey(), e.getValue())) {
        if (claims) {
          claimChanged(e.getKey());
        }
      }
    }
  }
}
