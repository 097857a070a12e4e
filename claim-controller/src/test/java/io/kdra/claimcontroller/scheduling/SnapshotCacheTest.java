package io.kdra.claimcontroller.scheduling;

import static org.assertj.core.api.Assertions.assertThat;

import io.fabric8.kubernetes.api.model.resource.v1.AllocationResult;
import io.fabric8.kubernetes.api.model.resource.v1.DeviceClass;
import io.fabric8.kubernetes.api.model.resource.v1.ResourceClaim;
import io.fabric8.kubernetes.api.model.resource.v1.ResourceClaimBuilder;
import io.fabric8.kubernetes.api.model.resource.v1.ResourceSlice;
import io.kdra.core.alloc.AllocatedState;
import io.kdra.core.alloc.AllocationSnapshot;
import io.kdra.core.model.DeviceId;
import io.kdra.core.testing.AllocFixtures;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

class SnapshotCacheTest {

  static final String DRIVER = AllocFixtures.DRIVER;
  final SnapshotCache cache = new SnapshotCache();
  final List<DeviceClass> classes = List.of(AllocFixtures.deviceClass("gpu"));

  static ResourceSlice slice(String node) {
    return AllocFixtures.slice(
            node + "-gpus",
            node,
            AllocFixtures.device("gpu-0").build(),
            AllocFixtures.device("gpu-1").build())
        .build();
  }

  static ResourceClaim claim(String uid, String pool, String device) {
    return new ResourceClaimBuilder()
        .withNewMetadata()
        .withName(uid)
        .withNamespace("ns")
        .withUid(uid)
        .endMetadata()
        .withNewStatus()
        .withAllocation(result(pool, device))
        .endStatus()
        .build();
  }

  static AllocationResult result(String pool, String device) {
    return FakeAllocator.result(pool, device)
        .edit()
        .editDevices()
        .editFirstResult()
        .withDriver(DRIVER)
        .endResult()
        .endDevices()
        .build();
  }

  static boolean taken(AllocationSnapshot s, String pool, String device) {
    return s.allocated().isAllocated(new DeviceId(DRIVER, pool, device));
  }

  /** Whether the snapshot's allocator gives the claim a device, given its node "a". */
  static boolean allocates(AllocationSnapshot s) {
    var allocator =
        new io.kdra.core.alloc.Allocator(
            s,
            io.kdra.core.alloc.AllocatorOptions.defaults(
                io.kdra.core.alloc.AllocatorFeatures.defaults(), () -> "x"));
    return allocator
            .allocate(
                AllocFixtures.node("a"),
                List.of(
                    AllocFixtures.claim("c", AllocFixtures.request("r", "gpu").build()).build()))
            .get(0)
        instanceof io.kdra.core.alloc.ClaimOutcome.Allocated;
  }

  @Test
  void aDeviceTaintRuleTaintsTheSnapshotAndItsChangeRebuildsIt() {
    List<ResourceSlice> slices = List.of(slice("a"));
    var rule = AllocFixtures.taintRule("m", DRIVER, "a", null, "maint", null, "NoSchedule");

    AllocationSnapshot tainted =
        cache.snapshot(slices, List.of(rule), classes, AllocatedState.empty());
    assertThat(allocates(tainted)).isFalse();
    assertThat(cache.snapshot(slices, List.of(rule), classes, AllocatedState.empty()).inventory())
        .isSameAs(tainted.inventory());

    // the rule deleted (untaint): the devices are free again
    assertThat(allocates(cache.snapshot(slices, List.of(), classes, AllocatedState.empty())))
        .isTrue();
    assertThat(cache.inventoryBuilds()).isEqualTo(2);
  }

  @Test
  void theInventoryLastsWhileTheSameSliceObjectsComeBack() {
    List<ResourceSlice> slices = new ArrayList<>(List.of(slice("a"), slice("b")));
    AllocationSnapshot first = cache.snapshot(slices, classes, AllocatedState.empty());
    AllocationSnapshot again =
        cache.snapshot(List.of(slices.get(1), slices.get(0)), classes, AllocatedState.empty());

    assertThat(again.inventory()).isSameAs(first.inventory());
    assertThat(cache.inventoryBuilds()).isEqualTo(1);

    // an informer replaces the object on any change, even one with equal content
    slices.set(0, slice("a"));
    assertThat(cache.snapshot(slices, classes, AllocatedState.empty()).inventory())
        .isNotSameAs(first.inventory());
    slices.add(slice("c"));
    cache.snapshot(slices, classes, AllocatedState.empty());
    slices.remove(2);
    cache.snapshot(slices, classes, AllocatedState.empty());
    assertThat(cache.inventoryBuilds()).isEqualTo(4);
  }

  @Test
  void sameDevicesComparesEveryResult() {
    assertThat(AllocatedClaims.sameDevices(result("a", "gpu-0"), result("a", "gpu-0"))).isTrue();
    assertThat(AllocatedClaims.sameDevices(result("a", "gpu-0"), result("a", "gpu-1"))).isFalse();
    assertThat(AllocatedClaims.sameDevices(result("a", "gpu-0"), result("b", "gpu-0"))).isFalse();
    AllocationResult shared =
        result("a", "gpu-0")
            .edit()
            .editDevices()
            .editFirstResult()
            .withShareID("s-1")
            .endResult()
            .endDevices()
            .build();
    assertThat(AllocatedClaims.sameDevices(result("a", "gpu-0"), shared)).isFalse();
    AllocationResult two =
        result("a", "gpu-0")
            .edit()
            .editDevices()
            .addNewResult()
            .withRequest("gpu")
            .withDriver(DRIVER)
            .withPool("a")
            .withDevice("gpu-1")
            .endResult()
            .endDevices()
            .build();
    assertThat(AllocatedClaims.sameDevices(result("a", "gpu-0"), two)).isFalse();
  }
}
