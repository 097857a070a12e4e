package io.kdra.core.alloc;

import static io.kdra.core.alloc.AllocatorCases.ANY_GPU;
import static io.kdra.core.testing.AllocFixtures.claim;
import static io.kdra.core.testing.AllocFixtures.device;
import static io.kdra.core.testing.AllocFixtures.deviceClass;
import static io.kdra.core.testing.AllocFixtures.node;
import static io.kdra.core.testing.AllocFixtures.request;
import static io.kdra.core.testing.AllocFixtures.slice;
import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Named.named;
import static org.junit.jupiter.params.provider.Arguments.arguments;

import io.fabric8.kubernetes.api.model.Quantity;
import io.fabric8.kubernetes.api.model.resource.v1.AllocationResult;
import io.fabric8.kubernetes.api.model.resource.v1.CapacityRequestPolicy;
import io.fabric8.kubernetes.api.model.resource.v1.CapacityRequestPolicyRange;
import io.fabric8.kubernetes.api.model.resource.v1.ResourceClaim;
import io.kdra.core.testing.Scenario;
import java.util.List;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

/** Partitionable devices (shared counters) and consumable capacity. */
class PartitionAndCapacityTest {

  /** A GPU with 8 memory slices shared by a full device and two halves, 1.35+ style. */
  static Scenario partitioned(ResourceClaim... existing) {
    return Scenario.of(
            slice("counters", "node-a")
                .withPool("node-a", 0, 2)
                .withCounterSet("gpu-0", "mem", "8")
                .build(),
            slice(
                    "devices",
                    "node-a",
                    device("full").withConsumes("gpu-0", "mem", "8").build(),
                    device("half-0").withConsumes("gpu-0", "mem", "4").build(),
                    device("half-1").withConsumes("gpu-0", "mem", "4").build())
                .withPool("node-a", 0, 2)
                .build())
        .withClasses(deviceClass("gpu", ANY_GPU))
        .withExisting(existing);
  }

  static Arguments tc(String name, Scenario s, List<ResourceClaim> claims, String... expected) {
    return arguments(named(name, s), claims, List.of(expected));
  }

  static Stream<Arguments> cases() {
    return Stream.of(
        tc(
            "partitions share counters: backtracks from the full device to two halves",
            partitioned(),
            List.of(
                claim("a", request("r", "gpu").build()).build(),
                claim("b", request("r", "gpu").build()).build()),
            "r=gpu.example.com/node-a/half-0",
            "r=gpu.example.com/node-a/half-1"),
        tc(
            "never oversubscribes: three claims, counters for two",
            partitioned(),
            List.of(
                claim("a", request("r", "gpu").build()).build(),
                claim("b", request("r", "gpu").build()).build(),
                claim("c", request("r", "gpu").build()).build()),
            "!each claim fits alone, but not all of the pod's claims together"),
        tc(
            "two halves fit where the full device does not",
            partitioned(),
            List.of(claim("a", request("r", "gpu").withCount(2).build()).build()),
            "r=gpu.example.com/node-a/half-0, r=gpu.example.com/node-a/half-1"),
        tc(
            "counters of already-allocated devices are used up",
            partitioned(
                claim("old", request("r", "gpu").build())
                    .withAllocated("gpu.example.com/node-a/half-0")
                    .build()),
            List.of(claim("a", request("r", "gpu").build()).build()),
            "r=gpu.example.com/node-a/half-1"),
        tc(
            "explanation counts devices without free counters",
            partitioned(
                claim("old", request("r", "gpu").build())
                    .withAllocated("gpu.example.com/node-a/full")
                    .build()),
            List.of(claim("a", request("r", "gpu").build()).build()),
            "!request \"r\": 3 devices in class \"gpu\", 0 free "
                + "(1 allocated to other claims, 2 without free shared counters)"),
        tc(
            "counter devices skipped with partitionable devices off",
            partitioned()
                .withFeatures(AllocatorFeatures.defaults().withPartitionableDevices(false)),
            List.of(claim("a", request("r", "gpu").build()).build()),
            "!request \"r\": 3 devices in class \"gpu\", 0 free "
                + "(3 without free shared counters)"));
  }

  @ParameterizedTest(name = "{0}")
  @MethodSource("cases")
  void allocates(Scenario s, List<ResourceClaim> claims, List<String> expected) {
    List<String> actual =
        Scenario.brief(s.allocate(node("node-a"), claims.toArray(new ResourceClaim[0])));
    for (int i = 0; i < expected.size(); i++) {
      assertThat(actual.get(i)).startsWith(expected.get(i));
    }
  }

  static Scenario nic(CapacityRequestPolicy policy) {
    return Scenario.of(
            slice(
                    "s",
                    "node-a",
                    device("nic")
                        .withMultipleAllocations()
                        .withCapacity("bandwidth", "10G", policy)
                        .build())
                .build())
        .withClasses(deviceClass("nic", ANY_GPU));
  }

  static AllocationResult allocated(List<ClaimOutcome> outcomes, int i) {
    return ((ClaimOutcome.Allocated) outcomes.get(i)).result();
  }

  @Test
  void multiAllocatableDeviceIsSharedUntilCapacityRunsOut() {
    List<ClaimOutcome> out =
        nic(null)
            .allocate(
                node("node-a"),
                claim("a", request("r", "nic").withCapacity("bandwidth", "4G").build()).build(),
                claim("b", request("r", "nic").withCapacity("bandwidth", "4G").build()).build());
    var first = allocated(out, 0).getDevices().getResults().get(0);
    var second = allocated(out, 1).getDevices().getResults().get(0);
    assertThat(first.getShareID()).isEqualTo("share-1");
    assertThat(second.getShareID()).isEqualTo("share-2");
    assertThat(first.getConsumedCapacity()).containsEntry("bandwidth", new Quantity("4G"));

    List<ClaimOutcome> tooMuch =
        nic(null)
            .allocate(
                node("node-a"),
                claim("a", request("r", "nic").withCapacity("bandwidth", "6G").build()).build(),
                claim("b", request("r", "nic").withCapacity("bandwidth", "6G").build()).build());
    assertThat(tooMuch.get(0)).isInstanceOf(ClaimOutcome.NotAllocated.class);
  }

  @Test
  void existingSharesConsumeCapacity() {
    ResourceClaim old = claim("old", request("r", "nic").build()).build();
    List<ClaimOutcome> first =
        nic(null)
            .allocate(
                node("node-a"),
                claim("a", request("r", "nic").withCapacity("bandwidth", "7G").build()).build());
    old.setStatus(new io.fabric8.kubernetes.api.model.resource.v1.ResourceClaimStatus());
    old.getStatus().setAllocation(allocated(first, 0));
    List<ClaimOutcome> next =
        nic(null)
            .withExisting(old)
            .allocate(
                node("node-a"),
                claim("b", request("r", "nic").withCapacity("bandwidth", "4G").build()).build());
    assertThat(Scenario.brief(next).get(0))
        .startsWith(
            "!request \"r\": 1 device in class "
                + "\"nic\", 1 matches the request selectors, 0 free (1 without enough capacity)");
  }

  @Test
  void requestPolicyRoundsUpToStep() {
    CapacityRequestPolicyRange range = new CapacityRequestPolicyRange();
    range.setMin(new Quantity("1G"));
    range.setStep(new Quantity("2G"));
    CapacityRequestPolicy policy = new CapacityRequestPolicy();
    policy.setDefault(new Quantity("1G"));
    policy.setValidRange(range);
    List<ClaimOutcome> out =
        nic(policy)
            .allocate(
                node("node-a"),
                claim("a", request("r", "nic").withCapacity("bandwidth", "2G").build()).build());
    assertThat(allocated(out, 0).getDevices().getResults().get(0).getConsumedCapacity())
        .containsEntry("bandwidth", new Quantity("3G"));
  }

  /** 1.37 (DRAFractionalCapacityRange): ranges of whole thousandths are stepped in thousandths. */
  @Test
  void fractionalRangeRoundsUpInThousandths() {
    CapacityRequestPolicyRange range = new CapacityRequestPolicyRange();
    range.setMin(new Quantity("500m"));
    range.setStep(new Quantity("250m"));
    CapacityRequestPolicy policy = new CapacityRequestPolicy();
    policy.setValidRange(range);
    List<ClaimOutcome> out =
        nic(policy)
            .allocate(
                node("node-a"),
                claim("a", request("r", "nic").withCapacity("bandwidth", "1.1").build()).build());
    assertThat(allocated(out, 0).getDevices().getResults().get(0).getConsumedCapacity())
        .containsEntry("bandwidth", new Quantity("1250m"));
  }

  /** Upstream aborts the allocation rather than trying other devices (1.37). */
  @Test
  void aRequestTheRangeCannotRepresentFailsTheClaim() {
    CapacityRequestPolicyRange range = new CapacityRequestPolicyRange();
    range.setMin(new Quantity("500m"));
    range.setStep(new Quantity("250m"));
    CapacityRequestPolicy policy = new CapacityRequestPolicy();
    policy.setValidRange(range);
    List<ClaimOutcome> out =
        nic(policy)
            .allocate(
                node("node-a"),
                claim("a", request("r", "nic").withCapacity("bandwidth", "1000500u").build())
                    .build());
    assertThat(Scenario.brief(out).get(0))
        .isEqualTo(
            "!request \"r\": checking capacity for device gpu.example.com/node-a/nic: capacity"
                + " \"bandwidth\": capacity request cannot be represented in the device's range"
                + " arithmetic: request 1000500u is not a representable milli value");
  }

  /**
   * 1.37: All takes every matching device whose own capacity can hold the request; one that other
   * claims' shares have filled fails All instead of being left out (1.36 allocated the other one).
   */
  @Test
  void allFailsOnAMatchingDeviceThatSharesHaveFilled() {
    Scenario twoNics =
        Scenario.of(
                slice(
                        "s",
                        "node-a",
                        device("nic-0")
                            .withMultipleAllocations()
                            .withCapacity("bandwidth", "10G", null)
                            .build(),
                        device("nic-1")
                            .withMultipleAllocations()
                            .withCapacity("bandwidth", "10G", null)
                            .build())
                    .build())
            .withClasses(deviceClass("nic", ANY_GPU));
    ResourceClaim old = claim("old", request("r", "nic").build()).build();
    List<ClaimOutcome> first =
        twoNics.allocate(
            node("node-a"),
            claim("a", request("r", "nic").withCapacity("bandwidth", "7G").build()).build());
    old.setStatus(new io.fabric8.kubernetes.api.model.resource.v1.ResourceClaimStatus());
    old.getStatus().setAllocation(allocated(first, 0));
    List<ClaimOutcome> next =
        twoNics
            .withExisting(old)
            .allocate(
                node("node-a"),
                claim("b", request("r", "nic").withAll().withCapacity("bandwidth", "4G").build())
                    .build());
    assertThat(Scenario.brief(next).get(0)).startsWith("!request \"r\"");
  }

  @Test
  void capacityRequestsNeedTheFeature() {
    List<ClaimOutcome> out =
        nic(null)
            .withFeatures(AllocatorFeatures.defaults().withConsumableCapacity(false))
            .allocate(
                node("node-a"),
                claim("a", request("r", "nic").withCapacity("bandwidth", "2G").build()).build());
    assertThat(Scenario.brief(out).get(0))
        .isEqualTo(
            "!request \"r\": has capacity requests, "
                + "but the DRAConsumableCapacity feature is disabled");
  }
}
