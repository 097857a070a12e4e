package io.kdra.claimcontroller.scheduling;

import io.fabric8.kubernetes.api.model.resource.v1.AllocationResult;
import io.fabric8.kubernetes.api.model.resource.v1.DeviceRequestAllocationResult;
import io.fabric8.kubernetes.api.model.resource.v1.ResourceClaim;
import io.kdra.core.alloc.AllocatedState;
import java.util.ArrayList;
import java.util.Collection;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.BooleanSupplier;
import java.util.function.Function;
import java.util.function.Predicate;
import java.util.function.Supplier;

/**
 * What every claim's allocation holds, kept from one scheduling attempt to the next and updated
 * from change notices instead of a pass over every claim per attempt: the informer's events (by
 * namespace and name) and {@link RecentWrites}' changes to created claims and assumed allocations
 * (by UID). {@link #state} rechecks only the claims named since the last call, each against the
 * source of truth ({@code claimsAt}: the informer's copy and a created one it lacks, with an
 * assumed allocation applied), so a notice is a hint that may come early, late or twice, never the
 * data. A new allocation extends the {@link AllocatedState}; one gone or changed (a deallocation, a
 * failed write) rebuilds it from the allocations held, without a listing. Without notices ({@code
 * live} false: a view without events) every call is a full pass, as before.
 *
 * <p>Notices are thread-safe; {@link #state} is not: the caller serialises attempts (the scheduling
 * lock), and any change made under that lock must be noticed before it is released.
 */
final class AllocatedClaims {

  /** A claim's namespace and name: what an informer event and a created claim are found by. */
  record Key(String namespace, String name) {
    static Key of(ResourceClaim c) {
      return new Key(c.getMetadata().getNamespace(), c.getMetadata().getName());
    }
  }

  private record Held(Key key, AllocationResult allocation) {}

  private final Function<Key, List<ResourceClaim>> claimsAt;
  private final Supplier<Collection<ResourceClaim>> allClaims;
  private final Function<String, Key> createdKey;
  private final Predicate<String> assumes;
  private final BooleanSupplier live;

  private final Set<Key> dirtyKeys = ConcurrentHashMap.newKeySet();
  private final Set<String> dirtyUids = ConcurrentHashMap.newKeySet();

  /** Claim UID to its allocation counted in {@link #state}; guarded by the caller's lock. */
  private final Map<String, Held> held = new HashMap<>();

  /** Every claim UID seen, to its key, and back; guarded by the caller's lock. */
  private final Map<String, Key> keyOf = new HashMap<>();

  private final Map<Key, Set<String>> uidsAt = new HashMap<>();
  private AllocatedState state;
  private long fullPasses;
  private long rebuilds;

  /**
   * @param claimsAt the claims now at a key, with their current or assumed allocation (at most the
   *     informer's and a created one)
   * @param allClaims every claim so, for a full pass
   * @param createdKey the key of a created claim by UID, or null
   * @param assumes whether an allocation of the claim with this UID is assumed
   * @param live whether every change is noticed ({@link #claimChanged}, {@link #uidChanged})
   */
  AllocatedClaims(
      Function<Key, List<ResourceClaim>> claimsAt,
      Supplier<Collection<ResourceClaim>> allClaims,
      Function<String, Key> createdKey,
      Predicate<String> assumes,
      BooleanSupplier live) {
    this.claimsAt = claimsAt;
    this.allClaims = allClaims;
    this.createdKey = createdKey;
    this.assumes = assumes;
    this.live = live;
  }

  /**
   * Over the informer's claims ({@code informed} by key, {@code informedAll} all of them) and this
   * controller's {@code recent} writes, told of the latter's changes.
   */
  static AllocatedClaims over(
      Function<Key, Optional<ResourceClaim>> informed,
      Supplier<List<ResourceClaim>> informedAll,
      RecentWrites recent,
      BooleanSupplier live) {
    AllocatedClaims a =
        new AllocatedClaims(
            k -> claimsAt(informed, recent, k),
            () -> recent.overlay(informedAll.get()),
            uid -> recent.createdByUid(uid).map(Key::of).orElse(null),
            recent::assumes,
            live);
    recent.onClaimChanged(a::uidChanged);
    return a;
  }

  /**
   * The claims at {@code key} as scheduling counts them: the informer's copy, and created ones it
   * does not show yet, each with an assumed allocation applied. A created claim the informer shows
   * is forgotten: from then on the informer answers for it (as {@link RecentWrites#overlay}).
   */
  static List<ResourceClaim> claimsAt(
      Function<Key, Optional<ResourceClaim>> informed, RecentWrites recent, Key key) {
    List<ResourceClaim> out = new ArrayList<>(2);
    Optional<ResourceClaim> shown = informed.apply(key);
    String uid = shown.map(c -> c.getMetadata().getUid()).orElse(null);
    if (uid != null && recent.createdByUid(uid).isPresent()) {
      recent.forgetCreated(uid);
    }
    for (ResourceClaim c : recent.createdAt(key.namespace(), key.name())) {
      if (!c.getMetadata().getUid().equals(uid)) {
        out.add(recent.withAssumed(c));
      }
    }
    shown.ifPresent(c -> out.add(recent.withAssumed(c)));
    return out;
  }

  /** The claim {@code namespace/name} may have changed (an informer event, after its cache). */
  void claimChanged(String namespace, String name) {
    dirtyKeys.add(new Key(namespace, name));
  }

  /** The claim with {@code uid} may have changed (a created copy or an assumed allocation). */
  void uidChanged(String uid) {
    dirtyUids.add(uid);
  }

  /** What every claim's allocation holds now. */
  AllocatedState state() {
    if (!live.getAsBoolean() || state == null) {
      return fullPass();
    }
    boolean removed = false;
    for (Key k : drain(dirtyKeys)) {
      removed |= recheck(k);
    }
    for (String uid : drain(dirtyUids)) {
      Key k = keyOf.get(uid);
      if (k == null) {
        k = createdKey.apply(uid);
      }
      if (k != null) {
        removed |= recheck(k);
      } else if (assumes.test(uid)) {
        // an assumed allocation of a claim never seen: count it the slow, sure way
        return fullPass();
      }
    }
    if (removed) {
      rebuilds++;
      AllocatedState s = AllocatedState.empty();
      for (Held h : held.values()) {
        s = s.plus(h.allocation());
      }
      state = s;
    }
    return state;
  }

  /** Full passes over every claim, and rebuilds from the held allocations (for tests). */
  long fullPasses() {
    return fullPasses;
  }

  long rebuilds() {
    return rebuilds;
  }

  /** Notices taken before the listing are covered by it; later ones stay for the next call. */
  private AllocatedState fullPass() {
    fullPasses++;
    dirtyKeys.clear();
    dirtyUids.clear();
    held.clear();
    keyOf.clear();
    uidsAt.clear();
    AllocatedState s = AllocatedState.empty();
    for (ResourceClaim c : allClaims.get()) {
      Key k = Key.of(c);
      String uid = c.getMetadata().getUid();
      see(uid, k);
      AllocationResult a = allocation(c);
      if (a != null && !held.containsKey(uid)) {
        held.put(uid, new Held(k, a));
        s = s.plus(a);
      }
    }
    state = s;
    return s;
  }

  /**
   * Brings what is held for the claims at {@code k} up to date; true when an allocation held went
   * away or changed (the state must be rebuilt).
   */
  private boolean recheck(Key k) {
    Map<String, AllocationResult> now = new HashMap<>(2);
    Set<String> present = new HashSet<>(2);
    for (ResourceClaim c : claimsAt.apply(k)) {
      String uid = c.getMetadata().getUid();
      present.add(uid);
      see(uid, k);
      AllocationResult a = allocation(c);
      if (a != null) {
        now.putIfAbsent(uid, a);
      }
    }
    boolean removed = false;
    Set<String> known = uidsAt.get(k);
    if (known != null) {
      for (String uid : List.copyOf(known)) {
        if (!present.contains(uid)) {
          known.remove(uid);
          keyOf.remove(uid);
        }
        if (!now.containsKey(uid) && held.remove(uid) != null) {
          removed = true;
        }
      }
      if (known.isEmpty()) {
        uidsAt.remove(k);
      }
    }
    for (Map.Entry<String, AllocationResult> e : now.entrySet()) {
      Held h = held.get(e.getKey());
      if (h == null) {
        state = state.plus(e.getValue());
      } else if (h.allocation() != e.getValue() && !sameDevices(h.allocation(), e.getValue())) {
        removed = true;
      }
      held.put(e.getKey(), new Held(k, e.getValue()));
    }
    return removed;
  }

  private void see(String uid, Key k) {
    keyOf.put(uid, k);
    uidsAt.computeIfAbsent(k, x -> new HashSet<>(2)).add(uid);
  }

  private static AllocationResult allocation(ResourceClaim c) {
    return c.getStatus() == null ? null : c.getStatus().getAllocation();
  }

  private static <T> List<T> drain(Set<T> dirty) {
    if (dirty.isEmpty()) {
      return List.of();
    }
    List<T> out = List.copyOf(dirty);
    // removed before they are read again: a notice that comes meanwhile stays for the next call
    out.forEach(dirty::remove);
    return out;
  }

  /**
   * The same devices, shares and consumed capacity: an informer's copy of an allocation this
   * controller assumed is a different object with the same content.
   */
  static boolean sameDevices(AllocationResult a, AllocationResult b) {
    List<DeviceRequestAllocationResult> x =
        a.getDevices() == null ? null : a.getDevices().getResults();
    List<DeviceRequestAllocationResult> y =
        b.getDevices() == null ? null : b.getDevices().getResults();
    if (x == null || y == null) {
      return x == y;
    }
    if (x.size() != y.size()) {
      return false;
    }
    for (int i = 0; i < x.size(); i++) {
      DeviceRequestAllocationResult r = x.get(i);
      DeviceRequestAllocationResult s = y.get(i);
      if (!Objects.equals(r.getDriver(), s.getDriver())
          || !Objects.equals(r.getPool(), s.getPool())
          || !Objects.equals(r.getDevice(), s.getDevice())
          || !Objects.equals(r.getShareID(), s.getShareID())
          || !Objects.equals(r.getAdminAccess(), s.getAdminAccess())
          || !Objects.equals(r.getConsumedCapacity(), s.getConsumedCapacity())) {
        return false;
      }
    }
    return true;
  }
}
