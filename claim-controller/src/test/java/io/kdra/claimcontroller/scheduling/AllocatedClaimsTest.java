package io.kdra.claimcontroller.scheduling;

import static org.assertj.core.api.Assertions.assertThat;

import io.fabric8.kubernetes.api.model.resource.v1.AllocationResult;
import io.fabric8.kubernetes.api.model.resource.v1.ResourceClaim;
import io.fabric8.kubernetes.api.model.resource.v1.ResourceClaimBuilder;
import io.kdra.core.alloc.AllocatedState;
import io.kdra.core.model.DeviceId;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Random;
import java.util.Set;
import java.util.TreeSet;
import org.junit.jupiter.api.Test;

class AllocatedClaimsTest {

  final RecentWrites recent = new RecentWrites();

  /** The API server's resourceVersions: every claim built is a newer version than the last. */
  static long versions;

  /** The informer's claims by key; every change is noticed, as the informer's events are. */
  final Map<AllocatedClaims.Key, ResourceClaim> informer = new LinkedHashMap<>();

  final AllocatedClaims tracker =
      AllocatedClaims.over(
          k -> Optional.ofNullable(informer.get(k)),
          () -> List.copyOf(informer.values()),
          recent,
          () -> true);

  static ResourceClaim claim(String name, String uid, AllocationResult allocation) {
    ResourceClaimBuilder b =
        new ResourceClaimBuilder()
            .withNewMetadata()
            .withNamespace("ns")
            .withName(name)
            .withUid(uid)
            .withResourceVersion(String.valueOf(++versions))
            .endMetadata();
    if (allocation != null) {
      b.withNewStatus().withAllocation(allocation).endStatus();
    }
    return b.build();
  }

  static AllocationResult on(String node, String device) {
    return FakeAllocator.result(node, device);
  }

  void inform(ResourceClaim c) {
    informer.put(AllocatedClaims.Key.of(c), c);
    tracker.claimChanged(c.getMetadata().getNamespace(), c.getMetadata().getName());
  }

  void delete(ResourceClaim c) {
    informer.remove(AllocatedClaims.Key.of(c));
    tracker.claimChanged(c.getMetadata().getNamespace(), c.getMetadata().getName());
  }

  static Set<String> devices(AllocatedState s) {
    Set<String> out = new TreeSet<>();
    s.devices().forEach(d -> out.add(d.pool() + "/" + d.device()));
    return out;
  }

  static boolean taken(AllocatedState s, String node, String device) {
    return s.isAllocated(new DeviceId(FakeAllocator.DRIVER, node, device));
  }

  @Test
  void anAssumedAllocationCountsAtOnceAndOnceWhenTheInformerEchoesIt() {
    inform(claim("a", "uid-a", null));
    assertThat(devices(tracker.state())).isEmpty();

    recent.allocated("uid-a", on("n0", "dev-0"));
    assertThat(taken(tracker.state(), "n0", "dev-0")).as("before the echo").isTrue();

    // the echo of the finalizer write (no allocation yet), then of the status write
    inform(claim("a", "uid-a", null));
    assertThat(taken(tracker.state(), "n0", "dev-0")).isTrue();
    inform(claim("a", "uid-a", on("n0", "dev-0")));
    assertThat(devices(tracker.state())).containsExactly("n0/dev-0");
    assertThat(tracker.rebuilds()).as("the echo changes nothing").isZero();
    assertThat(tracker.fullPasses()).isEqualTo(1);
  }

  @Test
  void aFailedWriteFreesItsDevices() {
    inform(claim("a", "uid-a", null));
    recent.allocated("uid-a", on("n0", "dev-0"));
    assertThat(taken(tracker.state(), "n0", "dev-0")).isTrue();

    recent.forgetAllocation("uid-a", on("n0", "dev-0"));
    assertThat(taken(tracker.state(), "n0", "dev-0")).isFalse();
  }

  /**
   * However long the informer lags, an allocation written counts until the informer shows the
   * version written (or a newer one); then the informer answers alone, a later deallocation too.
   */
  @Test
  void anAssumedAllocationCountsUntilTheInformerShowsTheVersionWritten() {
    ResourceClaim before = claim("a", "uid-a", null);
    inform(before);
    recent.allocated("uid-a", on("n0", "dev-0"));
    ResourceClaim stored = claim("a", "uid-a", on("n0", "dev-0"));
    recent.allocationWritten("uid-a", on("n0", "dev-0"), stored.getMetadata().getResourceVersion());

    inform(before);
    assertThat(taken(tracker.state(), "n0", "dev-0")).as("an older copy").isTrue();
    assertThat(recent.assumes("uid-a")).isTrue();

    inform(stored);
    assertThat(taken(tracker.state(), "n0", "dev-0")).isTrue();
    assertThat(recent.assumes("uid-a")).as("the informer caught up").isFalse();
    inform(claim("a", "uid-a", null));
    assertThat(taken(tracker.state(), "n0", "dev-0")).as("deallocated later").isFalse();
  }

  /** A write whose answer was lost counts until the informer shows a newer version than its own. */
  @Test
  void anUnansweredWriteCountsUntilTheInformerShowsWhatCameOfIt() {
    ResourceClaim before = claim("a", "uid-a", null);
    inform(before);
    recent.allocated("uid-a", on("n0", "dev-0"));
    recent.allocationMayHaveLanded(
        "uid-a", on("n0", "dev-0"), "ns", "claim", before.getMetadata().getResourceVersion());
    inform(before);
    assertThat(taken(tracker.state(), "n0", "dev-0")).isTrue();

    // it did not land: whatever newer version the informer shows is the truth
    inform(claim("a", "uid-a", null));
    assertThat(taken(tracker.state(), "n0", "dev-0")).isFalse();
    assertThat(recent.assumes("uid-a")).isFalse();
  }

  @Test
  void aClaimTheInformerShowsDeletedTakesItsAssumedAllocationAlong() {
    ResourceClaim created = claim("a", "uid-a", null);
    recent.created(created);
    recent.allocated("uid-a", on("n0", "dev-0"));
    assertThat(taken(tracker.state(), "n0", "dev-0")).as("a created claim not shown").isTrue();

    recent.claimDeleted("uid-a");
    assertThat(taken(tracker.state(), "n0", "dev-0")).isFalse();
    assertThat(recent.assumes("uid-a")).isFalse();
    assertThat(recent.createdByUid("uid-a")).isEmpty();
  }

  @Test
  void createdClaimsSharingOneNameCountEach() {
    // the in-memory claims for extended resources share one name until created
    recent.created(claim("in-memory", "p1", null));
    recent.created(claim("in-memory", "p2", null));
    recent.allocated("p1", on("n0", "dev-0"));
    recent.allocated("p2", on("n0", "dev-1"));
    assertThat(devices(tracker.state())).containsExactly("n0/dev-0", "n0/dev-1");

    recent.forgetCreated("p1");
    recent.forgetAllocation("p1", on("n0", "dev-0"));
    assertThat(devices(tracker.state())).containsExactly("n0/dev-1");
  }

  @Test
  void aDeallocationOrADeleteFreesTheDevicesAndARecreatedClaimCountsAnew() {
    inform(claim("a", "uid-a", on("n0", "dev-0")));
    inform(claim("b", "uid-b", on("n0", "dev-1")));
    assertThat(devices(tracker.state())).containsExactly("n0/dev-0", "n0/dev-1");

    inform(claim("a", "uid-a", null));
    assertThat(devices(tracker.state())).containsExactly("n0/dev-1");
    delete(claim("b", "uid-b", null));
    inform(claim("b", "uid-b2", on("n1", "dev-1")));
    assertThat(devices(tracker.state())).containsExactly("n1/dev-1");
  }

  /**
   * After any sequence of informer events (add, update with or without an allocation, delete,
   * re-create under the same name) and of this controller's writes (create, assume, roll back, a
   * write stored or unanswered), the incremental state holds exactly the devices of a full rebuild.
   */
  @Test
  void afterAnySequenceOfChangesTheStateEqualsAFullRebuild() {
    for (long seed = 0; seed < 20; seed++) {
      Random random = new Random(seed);
      RecentWrites writes = new RecentWrites();
      Map<AllocatedClaims.Key, ResourceClaim> shown = new LinkedHashMap<>();
      AllocatedClaims incremental =
          AllocatedClaims.over(
              k -> Optional.ofNullable(shown.get(k)),
              () -> List.copyOf(shown.values()),
              writes,
              () -> true);
      List<String> uids = new ArrayList<>();
      // what each claim was last assumed allocated as: what its settle and forget name
      Map<String, AllocationResult> assumedAs = new HashMap<>();
      int nextUid = 0;
      for (int step = 0; step < 1500; step++) {
        String name = "c" + random.nextInt(30);
        AllocatedClaims.Key key = new AllocatedClaims.Key("ns", name);
        ResourceClaim current = shown.get(key);
        AllocationResult some = on("n" + random.nextInt(4), "dev-" + random.nextInt(8));
        switch (random.nextInt(9)) {
          case 0, 1 -> { // informer: an update of the claim there, or a new one
            String uid =
                current != null && random.nextInt(4) != 0
                    ? current.getMetadata().getUid()
                    : "u" + nextUid++;
            shown.put(key, claim(name, uid, random.nextBoolean() ? some : null));
            uids.add(uid);
            incremental.claimChanged("ns", name);
          }
          case 2 -> { // informer: the echo of an assumed allocation
            if (current != null && writes.assumes(current.getMetadata().getUid())) {
              String uid = current.getMetadata().getUid();
              ResourceClaim assumed = writes.withAssumed(current);
              shown.put(key, claim(name, uid, assumed.getStatus().getAllocation()));
              incremental.claimChanged("ns", name);
            }
          }
          case 3 -> { // informer: a delete
            if (current != null) {
              shown.remove(key);
              incremental.claimChanged("ns", name);
              writes.claimDeleted(current.getMetadata().getUid());
            }
          }
          case 4 -> { // this controller creates a claim
            String uid = "u" + nextUid++;
            writes.created(claim(random.nextInt(5) == 0 ? "in-memory" : name, uid, null));
            uids.add(uid);
          }
          case 5, 6 -> { // this controller assumes an allocation
            if (!uids.isEmpty()) {
              String uid = uids.get(random.nextInt(uids.size()));
              if (!writes.assumes(uid)) { // one assumption per claim
                writes.allocated(uid, some);
                assumedAs.put(uid, some);
              }
            }
          }
          case 7 -> { // a write failed, or a placeholder was replaced
            if (!uids.isEmpty()) {
              String uid = uids.get(random.nextInt(uids.size()));
              if (random.nextBoolean()) {
                writes.forgetAllocation(uid, assumedAs.getOrDefault(uid, some));
              } else {
                writes.forgetCreated(uid);
              }
            }
          }
          default -> { // a write ends: stored as one of the next versions, or unanswered
            if (!uids.isEmpty()) {
              String uid = uids.get(random.nextInt(uids.size()));
              if (random.nextBoolean()) {
                writes.allocationWritten(
                    uid,
                    assumedAs.getOrDefault(uid, some),
                    String.valueOf(versions + 1 + random.nextInt(3)));
              } else {
                writes.allocationMayHaveLanded(
                    uid,
                    assumedAs.getOrDefault(uid, some),
                    "ns",
                    "claim",
                    String.valueOf(versions - random.nextInt(3)));
              }
            }
          }
        }
        if (random.nextInt(4) == 0) {
          Set<String> got = devices(incremental.state());
          Set<String> want =
              devices(AllocatedState.fromClaims(writes.overlay(List.copyOf(shown.values()))));
          assertThat(got).as("seed %d, step %d", seed, step).isEqualTo(want);
        }
      }
      // (assumed allocations of claims never seen, which this sequence makes up, take full passes)
      assertThat(incremental.fullPasses()).as("seed %d", seed).isLessThan(400);
    }
  }
}
