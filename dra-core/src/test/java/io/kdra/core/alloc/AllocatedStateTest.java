package io.kdra.core.alloc;

import static io.kdra.core.alloc.AllocatorCases.ANY_GPU;
import static io.kdra.core.testing.AllocFixtures.claim;
import static io.kdra.core.testing.AllocFixtures.device;
import static io.kdra.core.testing.AllocFixtures.deviceClass;
import static io.kdra.core.testing.AllocFixtures.node;
import static io.kdra.core.testing.AllocFixtures.request;
import static io.kdra.core.testing.AllocFixtures.slice;
import static org.assertj.core.api.Assertions.assertThat;

import io.fabric8.kubernetes.api.model.Node;
import io.fabric8.kubernetes.api.model.resource.v1.AllocationResult;
import io.fabric8.kubernetes.api.model.resource.v1.ResourceClaim;
import io.kdra.core.model.DeviceId;
import java.util.List;
import org.junit.jupiter.api.Test;

/** The versioned allocated state: later states never change what earlier ones answer. */
class AllocatedStateTest {

  static AllocationResult result(String... devices) {
    ResourceClaim c = claim("x", request("r", "gpu").build()).withAllocated(devices).build();
    return c.getStatus().getAllocation();
  }

  static final DeviceId D0 = DeviceId.parse("gpu.example.com/node-a/d0");
  static final DeviceId D1 = DeviceId.parse("gpu.example.com/node-a/d1");

  @Test
  void olderStatesDoNotSeeLaterAllocations() {
    AllocatedState s0 = AllocatedState.empty();
    AllocatedState s1 = s0.plus(result("gpu.example.com/node-a/d0"));
    AllocatedState s2 = s1.plus(result("gpu.example.com/node-a/d1"));
    assertThat(s0.isAllocated(D0)).isFalse();
    assertThat(s1.isAllocated(D0)).isTrue();
    assertThat(s1.isAllocated(D1)).isFalse();
    assertThat(s2.devices()).containsExactlyInAnyOrder(D0, D1);
  }

  @Test
  void branchingFromAnOlderStateCopiesInsteadOfLeaking() {
    AllocatedState s0 = AllocatedState.empty();
    AllocatedState s1 = s0.plus(result("gpu.example.com/node-a/d0"));
    AllocatedState branch = s0.plus(result("gpu.example.com/node-a/d1"));
    assertThat(branch.isAllocated(D1)).isTrue();
    assertThat(branch.isAllocated(D0)).isFalse();
    assertThat(s1.isAllocated(D1)).isFalse();
    assertThat(s1.includes(s0)).isTrue();
    assertThat(branch.includes(s1)).isFalse();
  }

  @Test
  void adminAccessResultsHoldNothing() {
    AllocationResult r = result("gpu.example.com/node-a/d0");
    r.getDevices().getResults().get(0).setAdminAccess(true);
    assertThat(AllocatedState.empty().plus(r).isAllocated(D0)).isFalse();
  }

  @Test
  void fullPoolMarkIsNotCarriedIntoAnEarlierBranch() {
    AllocationSnapshot snap =
        AllocationSnapshot.of(
            List.of(slice("s", "node-a", device("d0").build()).build()),
            InMemoryDeviceClassLister.of(deviceClass("gpu", ANY_GPU)),
            AllocatedState.empty());
    Node n = node("node-a");
    AllocatorOptions opts = AllocatorOptions.defaults(AllocatorFeatures.defaults(), () -> "id");
    ResourceClaim c = claim("c", request("r", "gpu").build()).build();
    var first = (ClaimOutcome.Allocated) new Allocator(snap, opts).allocate(n, List.of(c)).get(0);
    AllocationSnapshot full = snap.withAllocated(snap.allocated().plus(first.result()));
    assertThat(new Allocator(full, opts).allocate(n, List.of(c)).get(0))
        .isInstanceOf(ClaimOutcome.NotAllocated.class); // marks the pool full
    assertThat(new Allocator(full, opts).certainlyFull(n, List.of(c))).isTrue();
    assertThat(new Allocator(snap, opts).certainlyFull(n, List.of(c))).isFalse();
    assertThat(new Allocator(snap, opts).allocate(n, List.of(c)).get(0))
        .isInstanceOf(ClaimOutcome.Allocated.class);
  }

  @Test
  void aBranchIncludesItsParentUpToTheBranchPointOnly() {
    AllocatedState s0 = AllocatedState.empty().plus(result("gpu.example.com/node-a/d0"));
    AllocatedState s1 = s0.plus(result("gpu.example.com/node-a/d1"));
    AllocatedState branch = s0.plus(result("gpu.example.com/node-a/d2"));
    AllocatedState branchNext = branch.plus(result("gpu.example.com/node-a/d3"));
    assertThat(branch.includes(s0)).isTrue();
    assertThat(branchNext.includes(s0)).isTrue();
    assertThat(branchNext.includes(branch)).isTrue();
    assertThat(branch.includes(s1)).isFalse();
    assertThat(s1.includes(branch)).isFalse();
    assertThat(s0.includes(branch)).isFalse();
    assertThat(AllocatedState.empty().includes(s0)).isFalse();
  }

  @Test
  void fullPoolMarkCarriesIntoABranchOfALaterStart() {
    AllocationSnapshot snap =
        AllocationSnapshot.of(
            List.of(slice("s", "node-a", device("d0").build()).build()),
            InMemoryDeviceClassLister.of(deviceClass("gpu", ANY_GPU)),
            AllocatedState.empty());
    Node n = node("node-a");
    AllocatorOptions opts = AllocatorOptions.defaults(AllocatorFeatures.defaults(), () -> "id");
    ResourceClaim c = claim("c", request("r", "gpu").build()).build();
    var first = (ClaimOutcome.Allocated) new Allocator(snap, opts).allocate(n, List.of(c)).get(0);
    AllocationSnapshot full = snap.withAllocated(snap.allocated().plus(first.result()));
    assertThat(new Allocator(full, opts).allocate(n, List.of(c)).get(0))
        .isInstanceOf(ClaimOutcome.NotAllocated.class); // marks the pool full in "full"
    full.allocated().plus(result("gpu.example.com/other/d9")); // "full" has a successor now
    AllocationSnapshot branch =
        full.withAllocated(full.allocated().plus(result("gpu.example.com/other/d8")));
    assertThat(new Allocator(branch, opts).certainlyFull(n, List.of(c))).isTrue();
  }

  @Test
  void branchesOfBranchesSeeExactlyTheirOwnHistory() {
    // each level branches (a sibling took the next version first), deeper than the layers a
    // branch may stack, so the deepest ones are flattened copies
    AllocatedState state = AllocatedState.empty();
    java.util.Set<DeviceId> expected = new java.util.HashSet<>();
    for (int level = 0; level < 10; level++) {
      AllocatedState sibling = state.plus(result("gpu.example.com/sibling/s" + level));
      state = state.plus(result("gpu.example.com/node-a/d" + level));
      expected.add(DeviceId.parse("gpu.example.com/node-a/d" + level));
      assertThat(state.devices()).as("level %d", level).isEqualTo(expected);
      assertThat(state.isAllocated(DeviceId.parse("gpu.example.com/sibling/s" + level))).isFalse();
      assertThat(sibling.isAllocated(DeviceId.parse("gpu.example.com/node-a/d" + level))).isFalse();
      assertThat(sibling.isAllocated(DeviceId.parse("gpu.example.com/sibling/s" + level))).isTrue();
    }
    for (DeviceId id : expected) {
      assertThat(state.isAllocated(id)).isTrue();
    }
  }
}
