package io.kdra.core.alloc;

import static io.kdra.core.testing.AllocFixtures.claim;
import static io.kdra.core.testing.AllocFixtures.device;
import static io.kdra.core.testing.AllocFixtures.deviceClass;
import static io.kdra.core.testing.AllocFixtures.node;
import static io.kdra.core.testing.AllocFixtures.request;
import static io.kdra.core.testing.AllocFixtures.slice;
import static org.assertj.core.api.Assertions.assertThat;

import io.fabric8.kubernetes.api.model.Quantity;
import io.fabric8.kubernetes.api.model.resource.v1.AllocationResult;
import io.fabric8.kubernetes.api.model.resource.v1.CapacityRequestPolicy;
import io.fabric8.kubernetes.api.model.resource.v1.CapacityRequestPolicyRange;
import io.fabric8.kubernetes.api.model.resource.v1.Device;
import io.fabric8.kubernetes.api.model.resource.v1.DeviceRequestAllocationResult;
import io.fabric8.kubernetes.api.model.resource.v1.ResourceClaim;
import io.fabric8.kubernetes.api.model.resource.v1.ResourceClaimStatus;
import io.fabric8.kubernetes.api.model.resource.v1.ResourceSlice;
import io.kdra.core.testing.AllocFixtures;
import io.kdra.core.testing.Scenario;
import java.math.BigDecimal;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;
import org.junit.jupiter.api.Test;

/**
 * The shapes the device-driver publishes for shared GPUs (time-slicing / MPS: consumable capacity
 * with request policies) and MIG (partitions on shared counters, the whole GPU consuming all):
 * claims allocated one after another, each seeing the earlier ones as allocated, never add up to
 * more than a GPU has, judged from the claims' own {@code consumedCapacity} and the counters of the
 * devices they got.
 */
class SharedAndPartitionedGpusTest {
  private static final String D = AllocFixtures.DRIVER;

  private static CapacityRequestPolicy range(String def, String min, String max, String step) {
    CapacityRequestPolicyRange r = new CapacityRequestPolicyRange();
    r.setMin(new Quantity(min));
    if (max != null) {
      r.setMax(new Quantity(max));
    }
    r.setStep(new Quantity(step));
    CapacityRequestPolicy p = new CapacityRequestPolicy();
    p.setDefault(new Quantity(def));
    p.setValidRange(r);
    return p;
  }

  /** Two 24Gi GPUs cut into 4 shares each, as driver.sharing.shares=4 publishes them. */
  private static Scenario sharedGpus(List<ResourceClaim> existing) {
    List<Device> gpus = new ArrayList<>();
    for (int i = 0; i < 2; i++) {
      gpus.add(
          device("gpu-" + i)
              .withMultipleAllocations()
              .withString("sharing", "TimeSlicing")
              .withCapacity("shares", "4", range("1", "1", "4", "1"))
              .withCapacity("memory", "24Gi", range("6Gi", "1Gi", null, "1Gi"))
              .build());
    }
    return Scenario.of(slice("gpus", "node-a", gpus.toArray(new Device[0])).build())
        .withClasses(deviceClass("shared", "device.allowMultipleAllocations"))
        .withExisting(existing.toArray(new ResourceClaim[0]));
  }

  @Test
  void sharesOfTwoGpusAreHandedOutUntilCapacityRunsOutAndNeverBeyond() {
    Random random = new Random(20);
    List<ResourceClaim> allocated = new ArrayList<>();
    int refused = 0;
    for (int i = 0; i < 40; i++) {
      var r = request("gpu", "shared");
      switch (random.nextInt(3)) {
        case 0 -> {} // policy defaults: 1 share, 6Gi
        case 1 -> r.withCapacity("shares", "2");
        default -> r.withCapacity("memory", (1 + random.nextInt(12)) + "Gi");
      }
      ResourceClaim c = claim("c" + i, r.build()).build();
      List<ClaimOutcome> out = sharedGpus(allocated).allocate(node("node-a"), c);
      if (out.get(0) instanceof ClaimOutcome.Allocated a) {
        allocated.add(withAllocation(c, a.result()));
      } else {
        refused++;
      }
      assertWithinCapacity(
          allocated, Map.of("shares", new BigDecimal(4), "memory", new BigDecimal(24L << 30)));
    }
    assertThat(allocated).hasSizeBetween(4, 8);
    assertThat(refused).isPositive();
  }

  @Test
  void aRequestAboveTheGpusFreeCapacityIsNotAllocatedAtAll() {
    ResourceClaim big =
        claim("big", request("gpu", "shared").withCapacity("memory", "20Gi").build()).build();
    ResourceClaim a = withAllocation(big, allocatedResult(sharedGpus(List.of()), big));
    ResourceClaim b0 =
        claim("b0", request("gpu", "shared").withCapacity("memory", "20Gi").build()).build();
    ResourceClaim b = withAllocation(b0, allocatedResult(sharedGpus(List.of(a)), b0));
    ResourceClaim third =
        claim("third", request("gpu", "shared").withCapacity("memory", "5Gi").build()).build();

    assertThat(results(a).get(0).getDevice()).isNotEqualTo(results(b).get(0).getDevice());
    assertThat(results(a).get(0).getConsumedCapacity())
        .containsEntry("memory", new Quantity("20Gi"))
        .containsEntry("shares", new Quantity("1"));
    // 4Gi left on each GPU
    assertThat(sharedGpus(List.of(a, b)).allocate(node("node-a"), third).get(0))
        .isInstanceOf(ClaimOutcome.NotAllocated.class);
  }

  // ---- MIG: an A100-40GB as MigDevices publishes it, 1.35+ style (counters in their own slice)

  private record Partition(String name, String profile, int start, int size, int sms) {}

  private static final List<Partition> A100 = a100();

  private static List<Partition> a100() {
    List<Partition> p = new ArrayList<>();
    for (int s = 0; s < 7; s++) {
      p.add(new Partition("gpu-0-mig-1g5gb-" + s, "1g.5gb", s, 1, 14));
    }
    for (int s : new int[] {0, 2, 4}) {
      p.add(new Partition("gpu-0-mig-2g10gb-" + s, "2g.10gb", s, 2, 28));
    }
    for (int s : new int[] {0, 4}) {
      p.add(new Partition("gpu-0-mig-3g20gb-" + s, "3g.20gb", s, 4, 42));
    }
    p.add(new Partition("gpu-0-mig-4g20gb-0", "4g.20gb", 0, 4, 56));
    p.add(new Partition("gpu-0-mig-7g40gb-0", "7g.40gb", 0, 8, 98));
    return p;
  }

  private static Scenario migGpu(List<ResourceClaim> existing) {
    List<String> all = new ArrayList<>();
    for (int s = 0; s < 8; s++) {
      all.add("memory-slice-" + s);
      all.add("1");
    }
    all.add("multiprocessors");
    all.add("98");
    ResourceSlice counters =
        slice("counters", "node-a")
            .withPool("node-a", 0, 2)
            .withCounterSet("gpu-0-mig", all.toArray(new String[0]))
            .build();
    List<Device> devices = new ArrayList<>();
    for (Partition p : A100) {
      List<String> consumed = new ArrayList<>();
      for (int s = p.start(); s < p.start() + p.size(); s++) {
        consumed.add("memory-slice-" + s);
        consumed.add("1");
      }
      consumed.add("multiprocessors");
      consumed.add(Integer.toString(p.sms()));
      devices.add(
          device(p.name())
              .withString("type", "mig")
              .withString("profile", p.profile())
              .withConsumes("gpu-0-mig", consumed.toArray(new String[0]))
              .build());
    }
    devices.add(
        device("gpu-0")
            .withString("type", "gpu")
            .withConsumes("gpu-0-mig", all.toArray(new String[0]))
            .build());
    ResourceSlice slice =
        slice("devices", "node-a", devices.toArray(new Device[0])).withPool("node-a", 0, 2).build();
    List<io.fabric8.kubernetes.api.model.resource.v1.DeviceClass> classes = new ArrayList<>();
    for (String profile : List.of("1g.5gb", "2g.10gb", "3g.20gb", "4g.20gb", "7g.40gb")) {
      classes.add(
          deviceClass(
              "mig-" + profile.replace(".", "-"),
              "device.attributes[\"" + D + "\"].profile == \"" + profile + "\""));
    }
    classes.add(deviceClass("whole", "device.attributes[\"" + D + "\"].type == \"gpu\""));
    return Scenario.of(counters, slice)
        .withClasses(
            classes.toArray(new io.fabric8.kubernetes.api.model.resource.v1.DeviceClass[0]))
        .withExisting(existing.toArray(new ResourceClaim[0]));
  }

  @Test
  void partitionsAndTheWholeGpuNeverOverlapWhateverIsAskedInWhatOrder() {
    List<String> classes =
        List.of("mig-1g-5gb", "mig-2g-10gb", "mig-3g-20gb", "mig-4g-20gb", "mig-7g-40gb", "whole");
    for (long seed = 1; seed <= 20; seed++) {
      Random random = new Random(seed);
      List<ResourceClaim> allocated = new ArrayList<>();
      for (int i = 0; i < 12; i++) {
        ResourceClaim c =
            claim("c" + i, request("gpu", classes.get(random.nextInt(classes.size()))).build())
                .build();
        if (migGpu(allocated).allocate(node("node-a"), c).get(0)
            instanceof ClaimOutcome.Allocated a) {
          allocated.add(withAllocation(c, a.result()));
        }
        assertNoOverlap(allocated, seed);
      }
      assertThat(allocated).as("seed " + seed).isNotEmpty();
    }
  }

  @Test
  void theWholeGpuWaitsForEveryPartitionAndPartitionsWaitForIt() {
    ResourceClaim slice0 = claim("s0", request("gpu", "mig-3g-20gb").build()).build();
    ResourceClaim s0 = withAllocation(slice0, allocatedResult(migGpu(List.of()), slice0));
    ResourceClaim slice1 = claim("s1", request("gpu", "mig-3g-20gb").build()).build();
    ResourceClaim s1 = withAllocation(slice1, allocatedResult(migGpu(List.of(s0)), slice1));
    assertThat(List.of(results(s0).get(0).getDevice(), results(s1).get(0).getDevice()))
        .containsExactlyInAnyOrder("gpu-0-mig-3g20gb-0", "gpu-0-mig-3g20gb-4");

    ResourceClaim whole = claim("whole", request("gpu", "whole").build()).build();
    assertThat(migGpu(List.of(s0, s1)).allocate(node("node-a"), whole).get(0))
        .isInstanceOf(ClaimOutcome.NotAllocated.class);
    // one slice left: still no whole GPU, but a 2g.10gb fits next to the 3g.20gb at 0
    assertThat(migGpu(List.of(s0)).allocate(node("node-a"), whole).get(0))
        .isInstanceOf(ClaimOutcome.NotAllocated.class);
    ResourceClaim small = claim("small", request("gpu", "mig-2g-10gb").build()).build();
    assertThat(
            results(withAllocation(small, allocatedResult(migGpu(List.of(s0)), small)))
                .get(0)
                .getDevice())
        .isEqualTo("gpu-0-mig-2g10gb-4");
  }

  // ---- helpers

  private static AllocationResult allocatedResult(Scenario s, ResourceClaim c) {
    ClaimOutcome out = s.allocate(node("node-a"), c).get(0);
    assertThat(out).isInstanceOf(ClaimOutcome.Allocated.class);
    return ((ClaimOutcome.Allocated) out).result();
  }

  private static ResourceClaim withAllocation(ResourceClaim c, AllocationResult result) {
    ResourceClaimStatus status = new ResourceClaimStatus();
    status.setAllocation(result);
    c.setStatus(status);
    return c;
  }

  private static List<DeviceRequestAllocationResult> results(ResourceClaim c) {
    return c.getStatus().getAllocation().getDevices().getResults();
  }

  private static void assertWithinCapacity(
      List<ResourceClaim> claims, Map<String, BigDecimal> capacity) {
    Map<String, BigDecimal> used = new HashMap<>();
    for (ResourceClaim c : claims) {
      for (DeviceRequestAllocationResult r : results(c)) {
        assertThat(r.getShareID()).isNotNull();
        assertThat(r.getConsumedCapacity()).containsOnlyKeys(capacity.keySet());
        r.getConsumedCapacity()
            .forEach(
                (k, v) ->
                    used.merge(
                        r.getDevice() + "/" + k, Quantity.getAmountInBytes(v), BigDecimal::add));
      }
    }
    used.forEach(
        (key, amount) ->
            assertThat(amount)
                .as(key + " consumed")
                .isLessThanOrEqualTo(capacity.get(key.substring(key.indexOf('/') + 1))));
  }

  private static void assertNoOverlap(List<ResourceClaim> claims, long seed) {
    Map<String, Partition> byName = new HashMap<>();
    A100.forEach(p -> byName.put(p.name(), p));
    int[] slices = new int[8];
    int sms = 0;
    for (ResourceClaim c : claims) {
      for (DeviceRequestAllocationResult r : results(c)) {
        Partition p =
            r.getDevice().equals("gpu-0")
                ? new Partition("gpu-0", "whole", 0, 8, 98)
                : byName.get(r.getDevice());
        for (int s = p.start(); s < p.start() + p.size(); s++) {
          slices[s]++;
          assertThat(slices[s])
              .as("seed " + seed + ": memory slice " + s + " used once")
              .isEqualTo(1);
        }
        sms += p.sms();
      }
    }
    assertThat(sms).as("seed " + seed + ": multiprocessors").isLessThanOrEqualTo(98);
  }
}
