package io.kdra.claimcontroller.scheduling;

import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.PodBuilder;
import io.fabric8.kubernetes.api.model.resource.v1.AllocationResult;
import io.fabric8.kubernetes.api.model.resource.v1.ResourceClaim;
import io.fabric8.kubernetes.api.model.resource.v1.ResourceClaimBuilder;
import io.kdra.claimcontroller.domain.Reservation;
import io.kdra.claimcontroller.domain.ResourceVersions;
import io.kdra.claimcontroller.domain.TemplateClaims;
import java.util.ArrayList;
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
 * on their node).
 *
 * <p>No clock decides when an entry goes, however long the informer lags (a relist, a slow watch):
 * as upstream's assume cache, an assumed allocation stays until the informer shows the claim at the
 * resourceVersion written or a newer one, or shows the claim deleted; a created claim until the
 * informer shows it or its deletion; a pod being bound until the informer shows it bound, or shows
 * no pod of that UID. So what is remembered stays as small as the informer's lag. resourceVersions
 * are compared as integers, as upstream's assume cache does (they are opaque to clients by the API
 * conventions, but kube-apiserver's are etcd revisions); a version that is no integer never counts
 * as newer, so such an entry goes only with its claim.
 *
 * <p>Thread-safe.
 */
public final class RecentWrites {

  /**
   * An allocation this controller wrote or is writing, with the lowest resourceVersion of its claim
   * at which the informer shows the truth about it ({@link #IN_FLIGHT} while the write has not
   * ended), and whether its write ended without an answer.
   */
  private record Assumed(
      AllocationResult allocation,
      long shownFrom,
      boolean unanswered,
      String namespace,
      String name) {}

  /**
   * An allocation whose write ended without an answer ({@link #allocationMayHaveLanded}), as
   * remembered now: {@code shownFrom} is the lowest version of claim {@code namespace/name} that
   * tells the truth about it. Each entry is one state of the assumption: when anything settles it
   * again (a pod's next attempt), the entry read before no longer matches ({@link #isCurrent}).
   */
  public record Unanswered(
      String uid,
      String namespace,
      String name,
      AllocationResult allocation,
      long shownFrom,
      Object state) {}

  /** Not known yet: the write is still in flight, and the informer's copy cannot be newer. */
  private static final long IN_FLIGHT = Long.MAX_VALUE;

  private final Map<String, ResourceClaim> created = new ConcurrentHashMap<>();
  private final Map<String, Assumed> allocated = new ConcurrentHashMap<>();
  private final Map<String, Pod> binding = new ConcurrentHashMap<>();

  /**
   * Told the UID of every claim whose created copy or assumed allocation was added, replaced or
   * dropped, right after the change: {@link AllocatedClaims} rechecks only those.
   */
  private final List<Consumer<String>> claimListeners = new CopyOnWriteArrayList<>();

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
    created.put(claim.getMetadata().getUid(), claim);
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
    return Optional.ofNullable(created.get(uid));
  }

  /** Whether an allocation of the claim with {@code uid} is remembered (assumed). */
  boolean assumes(String uid) {
    return allocated.containsKey(uid);
  }

  /** Whether the pod with {@code uid} is being bound by this process, as far as it knows. */
  public boolean isBinding(String uid) {
    return binding.containsKey(uid);
  }

  /**
   * Remembers an allocation this controller is about to write to the claim with {@code uid}; it
   * stays assumed whatever the informer shows until the write has ended ({@link
   * #allocationWritten}, {@link #allocationMayHaveLanded}, {@link #forgetAllocation}).
   *
   * @throws IllegalStateException where the claim has an assumed allocation already and it is
   *     another one: one claim is allocated once, and a decision that allocates a claim assumed
   *     allocated is a bug; the first assumption stays as it was
   */
  public void allocated(String uid, AllocationResult allocation) {
    allocated.compute(
        uid,
        (k, a) -> {
          if (a != null && !Reservation.sameAllocation(a.allocation(), allocation)) {
            throw new IllegalStateException(
                "claim "
                    + uid
                    + " has an assumed allocation of "
                    + devices(a.allocation())
                    + " already; a second one, of "
                    + devices(allocation)
                    + ", would replace it");
          }
          return new Assumed(allocation, IN_FLIGHT, false, null, null);
        });
    claimChanged(uid);
  }

  /**
   * The allocation {@code allocation} of claim {@code uid} was stored as {@code resourceVersion}:
   * the informer answers for it once it shows that version or a newer one.
   */
  public void allocationWritten(String uid, AllocationResult allocation, String resourceVersion) {
    settle(uid, allocation, version(resourceVersion), false, null, null);
  }

  /**
   * The write of claim {@code uid}'s allocation {@code allocation}, made on {@code
   * resourceVersion}, ended without an answer (a timeout, a lost connection): it may have been
   * stored. Any newer version the informer shows tells which: the write was conditioned on that
   * version, so a newer one is either the write itself, something after it, or what made it fail.
   * The claim's {@code namespace/name} is kept for {@link UnansweredSettle}, which reads it when no
   * pod attempt sends it again.
   */
  public void allocationMayHaveLanded(
      String uid,
      AllocationResult allocation,
      String namespace,
      String name,
      String resourceVersion) {
    long basis = version(resourceVersion);
    settle(
        uid, allocation, basis == NOT_A_VERSION ? NOT_A_VERSION : basis + 1, true, namespace, name);
  }

  /**
   * The allocation of claim {@code uid} whose write ended without an answer ({@link
   * #allocationMayHaveLanded}), while the informer has not shown the truth about it. If it did not
   * land and nothing else writes the claim, the informer never will: the pod's next attempt sends
   * it again ({@link PreBind}), or, without one, {@link UnansweredSettle} undoes the attempt, so
   * that the claim's next version tells.
   */
  Optional<Unanswered> unanswered(String uid) {
    Assumed a = allocated.isEmpty() ? null : allocated.get(uid);
    return a != null && a.unanswered()
        ? Optional.of(
            new Unanswered(uid, a.namespace(), a.name(), a.allocation(), a.shownFrom(), a))
        : Optional.empty();
  }

  /**
   * Every allocation whose write ended without an answer and that the informer has not answered for
   * yet.
   */
  public List<Unanswered> unanswered() {
    List<Unanswered> out = new ArrayList<>();
    allocated.forEach(
        (uid, a) -> {
          if (a.unanswered()) {
            out.add(new Unanswered(uid, a.namespace(), a.name(), a.allocation(), a.shownFrom(), a));
          }
        });
    return out;
  }

  /** Whether {@code u} is still the state of its claim's assumption. */
  public boolean isCurrent(Unanswered u) {
    return allocated.get(u.uid()) == u.state();
  }

  /** Forgets {@code u}, unless its assumption changed meanwhile (its claim is gone). */
  public void forgetUnanswered(Unanswered u) {
    if (allocated.remove(u.uid(), u.state())) {
      claimChanged(u.uid());
    }
  }

  /** Settles claim {@code uid}'s assumption if it is of {@code allocation}; never another's. */
  private void settle(
      String uid,
      AllocationResult allocation,
      long shownFrom,
      boolean unanswered,
      String namespace,
      String name) {
    long from = shownFrom == NOT_A_VERSION ? IN_FLIGHT : shownFrom;
    boolean[] settled = {false};
    allocated.computeIfPresent(
        uid,
        (k, a) -> {
          if (!Reservation.sameAllocation(a.allocation(), allocation)) {
            return a;
          }
          settled[0] = true;
          return new Assumed(a.allocation(), from, unanswered, namespace, name);
        });
    if (settled[0]) {
      // the informer may have shown it already: the recheck lets it answer now
      claimChanged(uid);
    }
  }

  /**
   * Forgets the allocation {@code allocation} of claim {@code uid} (it was rolled back or
   * deallocated); an assumption of another allocation stays.
   */
  public void forgetAllocation(String uid, AllocationResult allocation) {
    Assumed a = allocated.get(uid);
    if (a != null
        && Reservation.sameAllocation(a.allocation(), allocation)
        && allocated.remove(uid, a)) {
      claimChanged(uid);
    }
  }

  /**
   * Forgets the allocation {@code allocation} of claim {@code uid} if its write never went out (the
   * attempt failed before it): every write sent settles its assumption before the attempt ends.
   */
  void forgetUnsent(String uid, AllocationResult allocation) {
    Assumed a = allocated.get(uid);
    if (a != null
        && a.shownFrom() == IN_FLIGHT
        && Reservation.sameAllocation(a.allocation(), allocation)
        && allocated.remove(uid, a)) {
      claimChanged(uid);
    }
  }

  /** The allocation's devices, for a message. */
  private static List<String> devices(AllocationResult a) {
    return a.getDevices() == null || a.getDevices().getResults() == null
        ? List.of()
        : a.getDevices().getResults().stream()
            .map(r -> r.getDriver() + "/" + r.getPool() + "/" + r.getDevice())
            .toList();
  }

  /**
   * The informer shows the claim with {@code uid} deleted: nothing remembered of it counts any
   * more.
   */
  public void claimDeleted(String uid) {
    boolean was = created.remove(uid) != null;
    was |= allocated.remove(uid) != null;
    if (was) {
      claimChanged(uid);
    }
  }

  /**
   * Remembers that {@code pod} is being bound to {@code node}, until the informer shows it bound
   * ({@link #assumedBound}) or {@link #forgetBinding}.
   */
  public void binding(Pod pod, String node) {
    Pod bound = new PodBuilder(pod).editOrNewSpec().withNodeName(node).endSpec().build();
    binding.put(pod.getMetadata().getUid(), bound);
  }

  /** The node the pod with {@code uid} is being bound to, if it is. */
  public Optional<String> bindingNode(String uid) {
    return Optional.ofNullable(binding.get(uid)).map(p -> p.getSpec().getNodeName());
  }

  /** Forgets the binding of the pod with {@code uid} (it failed or was rolled back). */
  public void forgetBinding(String uid) {
    binding.remove(uid);
  }

  /**
   * Pods being bound, with {@code spec.nodeName} set, that {@code informed} (the informer's copy of
   * a pod, by namespace and name, or empty) does not show bound yet. A pod the informer shows
   * bound, or no longer shows at all (deleted, or replaced by one of the same name), is forgotten:
   * the pods bound here all came from the informer, so one it lacks now is gone.
   */
  public List<Pod> assumedBound(Function<Pod, Optional<Pod>> informed) {
    List<Pod> out = new ArrayList<>();
    for (Map.Entry<String, Pod> e : binding.entrySet()) {
      Pod seen = informed.apply(e.getValue()).orElse(null);
      boolean gone = seen == null || !e.getKey().equals(seen.getMetadata().getUid());
      if (gone || (seen.getSpec() != null && seen.getSpec().getNodeName() != null)) {
        binding.remove(e.getKey(), e.getValue());
      } else {
        out.add(e.getValue());
      }
    }
    return out;
  }

  /** A claim this controller created that the informer may not show yet. */
  public Optional<ResourceClaim> created(String namespace, String name) {
    return created.values().stream()
        .filter(
            c ->
                namespace.equals(c.getMetadata().getNamespace())
                    && name.equals(c.getMetadata().getName()))
        .findFirst();
  }

  /**
   * Every remembered created claim named {@code namespace/name} (several: the in-memory claims for
   * extended resources share one name).
   */
  List<ResourceClaim> createdAt(String namespace, String name) {
    List<ResourceClaim> out = new ArrayList<>(1);
    for (ResourceClaim c : created.values()) {
      if (namespace.equals(c.getMetadata().getNamespace())
          && name.equals(c.getMetadata().getName())) {
        out.add(c);
      }
    }
    return out;
  }

  /** The claims this controller created for the pod with {@code podUid}, as created. */
  public List<ResourceClaim> createdFor(String namespace, String podUid) {
    return created.values().stream()
        .filter(c -> namespace.equals(c.getMetadata().getNamespace()))
        .filter(c -> TemplateClaims.owningPodOrGroupUid(c).map(podUid::equals).orElse(false))
        .toList();
  }

  /**
   * The informer's claims plus created ones it lacks, with remembered allocations applied. A
   * created claim the informer shows is forgotten: from then on the informer answers for it, and
   * what is remembered stays as small as the informer's lag.
   */
  public List<ResourceClaim> overlay(List<ResourceClaim> informed) {
    List<ResourceClaim> out = new ArrayList<>(informed.size() + created.size());
    for (ResourceClaim c : informed) {
      // a lookup first: a removal locks the key's bin, and most claims are not remembered
      if (!created.isEmpty() && created.containsKey(c.getMetadata().getUid())) {
        created.remove(c.getMetadata().getUid());
      }
      out.add(withAssumed(c));
    }
    for (ResourceClaim c : created.values()) {
      out.add(withAssumed(c));
    }
    return out;
  }

  /**
   * The claim with a remembered allocation applied, until the informer's copy {@code c} is at the
   * version that shows the truth about it: then the assumption is forgotten, and from then on the
   * informer's answer (even a later deallocation) is the truth. Before that, the assumed allocation
   * wins over whatever an older copy says, as upstream's assume cache keeps its object until the
   * informer's is newer.
   */
  public ResourceClaim withAssumed(ResourceClaim c) {
    Assumed a = allocated.isEmpty() ? null : allocated.get(c.getMetadata().getUid());
    if (a == null) {
      return c;
    }
    if (a.shownFrom() != IN_FLIGHT
        && version(c.getMetadata().getResourceVersion()) >= a.shownFrom()) {
      allocated.remove(c.getMetadata().getUid(), a);
      return c;
    }
    return new ResourceClaimBuilder(c)
        .editOrNewStatus()
        .withAllocation(a.allocation())
        .endStatus()
        .build();
  }

  private static final long NOT_A_VERSION = ResourceVersions.NOT_A_VERSION;

  /** {@code resourceVersion} as upstream's assume cache reads it ({@link ResourceVersions}). */
  static long version(String resourceVersion) {
    return ResourceVersions.of(resourceVersion);
  }
}
