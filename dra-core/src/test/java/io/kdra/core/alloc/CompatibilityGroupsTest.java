package io.kdra.core.alloc;

import static io.kdra.core.alloc.AllocatorCases.ANY_GPU;
import static io.kdra.core.testing.AllocFixtures.claim;
import static io.kdra.core.testing.AllocFixtures.device;
import static io.kdra.core.testing.AllocFixtures.deviceClass;
import static io.kdra.core.testing.AllocFixtures.firstAvailable;
import static io.kdra.core.testing.AllocFixtures.node;
import static io.kdra.core.testing.AllocFixtures.request;
import static io.kdra.core.testing.AllocFixtures.slice;
import static io.kdra.core.testing.AllocFixtures.sub;
import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Named.named;
import static org.junit.jupiter.params.provider.Arguments.arguments;

import io.fabric8.kubernetes.api.model.resource.v1.Device;
import io.fabric8.kubernetes.api.model.resource.v1.ResourceClaim;
import io.kdra.core.testing.Scenario;
import java.util.ArrayList;
import java.util.List;
import java.util.stream.Stream;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * {@code compatibilityGroups} on counter consumptions (DRADeviceCompatibilityGroups, alpha in
 * 1.37), decided as upstream's experimental allocator: the cases of its allocator_testing.go
 * ("compatibility-groups-*"), same slices, claims and expected devices.
 */
class CompatibilityGroupsTest {

  static final AllocatorFeatures ON = AllocatorFeatures.defaults().withCompatibilityGroups(true);

  static Device grouped(String name, String set, String group) {
    return device(name).withConsumesInGroups(set, List.of(group), "c", "1").build();
  }

  /** Devices in slice "devices" and counter sets of 4 in slice "counters", pool node-a. */
  static Scenario pool(List<String> sets, Device... devices) {
    var counters = slice("counters", "node-a").withPool("node-a", 0, 2);
    for (String set : sets) {
      counters.withCounterSet(set, "c", "4");
    }
    return Scenario.of(
            slice("devices", "node-a", devices).withPool("node-a", 0, 2).build(), counters.build())
        .withClasses(deviceClass("gpu", ANY_GPU))
        .withFeatures(ON);
  }

  static Scenario pool(Device... devices) {
    return pool(List.of("set-1"), devices);
  }

  static ResourceClaim twoRequests() {
    return claim("c", request("r0", "gpu").build(), request("r1", "gpu").build()).build();
  }

  static ResourceClaim one(String name) {
    return claim(name, request("r0", "gpu").build()).build();
  }

  static ResourceClaim holding(String device) {
    return claim("old", request("r", "gpu").build())
        .withAllocated("gpu.example.com/node-a/" + device)
        .build();
  }

  static Arguments tc(String name, Scenario s, List<ResourceClaim> claims, String... expected) {
    return arguments(named(name, s), claims, List.of(expected));
  }

  static Stream<Arguments> cases() {
    return Stream.of(
        tc(
            "compatible: one group shared",
            pool(grouped("device1", "set-1", "mig"), grouped("device2", "set-1", "mig")),
            List.of(twoRequests()),
            "r0=gpu.example.com/node-a/device1, r1=gpu.example.com/node-a/device2"),
        tc(
            "incompatible: disjoint groups on one counter set",
            pool(grouped("device1", "set-1", "mig"), grouped("device2", "set-1", "vgpu")),
            List.of(twoRequests()),
            "!"),
        tc(
            "a device rejected by its taint leaves no narrowing behind",
            pool(
                device("device1")
                    .withTaint("key1", "value1", "NoSchedule")
                    .withConsumesInGroups("set-1", List.of("mig"), "c", "1")
                    .build(),
                grouped("device2", "set-1", "vgpu")),
            List.of(one("c")),
            "r0=gpu.example.com/node-a/device2"),
        tc(
            "incompatible with an allocated peer: its groups read from the slice",
            pool(grouped("device1", "set-1", "mig"), grouped("device2", "set-1", "vgpu"))
                .withExisting(holding("device1")),
            List.of(one("c")),
            "!"),
        tc(
            "compatible with an allocated peer",
            pool(grouped("device1", "set-1", "mig"), grouped("device2", "set-1", "mig"))
                .withExisting(holding("device1")),
            List.of(one("c")),
            "r0=gpu.example.com/node-a/device2"),
        tc(
            "groups are per counter set",
            pool(
                List.of("set-1", "set-2"),
                grouped("device1", "set-1", "mig"),
                grouped("device2", "set-2", "vgpu")),
            List.of(twoRequests()),
            "r0=gpu.example.com/node-a/device1, r1=gpu.example.com/node-a/device2"),
        tc(
            "a device on two counter sets must be admitted by both",
            pool(
                List.of("set-1", "set-2"),
                grouped("device1", "set-1", "mig"),
                device("device2")
                    .withConsumesInGroups("set-1", List.of("vgpu"), "c", "1")
                    .withConsumesInGroups("set-2", List.of("vgpu"), "c", "1")
                    .build()),
            List.of(twoRequests()),
            "!"),
        tc(
            "a failed subrequest's narrowing is rolled back before the next one",
            pool(
                grouped("device1", "set-1", "mig"),
                grouped("device2", "set-1", "mig"),
                grouped("device3", "set-1", "vgpu")),
            List.of(
                claim(
                        "c",
                        request("r0", "gpu").build(),
                        firstAvailable("r1", sub("s0", "gpu", 2), sub("s1", "gpu", 1)))
                    .build()),
            "r0=gpu.example.com/node-a/device1, r1/s1=gpu.example.com/node-a/device2"),
        tc(
            "claims allocated together narrow one intersection",
            pool(grouped("device1", "set-1", "mig"), grouped("device2", "set-1", "mig")),
            List.of(one("a"), one("b")),
            "r0=gpu.example.com/node-a/device1",
            "r0=gpu.example.com/node-a/device2"),
        tc(
            "claims allocated together: no compatible pair",
            pool(grouped("device1", "set-1", "mig"), grouped("device2", "set-1", "vgpu")),
            List.of(one("a"), one("b")),
            "!",
            "!"),
        tc(
            "devices without groups go only with devices without groups",
            pool(
                device("device1").withConsumes("set-1", "c", "1").build(),
                grouped("device2", "set-1", "mig"),
                device("device3").withConsumes("set-1", "c", "1").build()),
            List.of(twoRequests()),
            "r0=gpu.example.com/node-a/device1, r1=gpu.example.com/node-a/device3"),
        tc(
            "gate off: a slice with groups is ignored and its pool incomplete",
            pool(grouped("device1", "set-1", "mig"))
                .withFeatures(AllocatorFeatures.defaults())
                .withSlices(
                    slice(
                            "other",
                            "node-a",
                            device("device2").withConsumes("set-2", "c", "1").build())
                        .withPool("pool-2", 0, 2)
                        .build(),
                    slice("other-counters", "node-a")
                        .withPool("pool-2", 0, 2)
                        .withCounterSet("set-2", "c", "4")
                        .build()),
            List.of(one("c")),
            "r0=gpu.example.com/pool-2/device2"),
        tc(
            "gate off: a device without groups in a pool with groups is not allocated",
            Scenario.of(
                    slice("s1", "node-a", grouped("device1", "set-1", "mig"))
                        .withPool("node-a", 0, 3)
                        .build(),
                    slice("s2", "node-a", device("device2").withConsumes("set-1", "c", "1").build())
                        .withPool("node-a", 0, 3)
                        .build(),
                    slice("s3", "node-a")
                        .withPool("node-a", 0, 3)
                        .withCounterSet("set-1", "c", "4")
                        .build())
                .withClasses(deviceClass("gpu", ANY_GPU)),
            List.of(one("c")),
            "!"));
  }

  @ParameterizedTest(name = "{0}")
  @MethodSource("cases")
  void allocatesAsUpstreamsExperimentalAllocator(
      Scenario s, List<ResourceClaim> claims, List<String> expected) {
    List<String> actual =
        Scenario.brief(s.allocate(node("node-a"), claims.toArray(new ResourceClaim[0])));
    assertThat(actual).hasSize(expected.size());
    List<String> prefixes = new ArrayList<>();
    for (int i = 0; i < expected.size(); i++) {
      prefixes.add(
          actual.get(i).substring(0, Math.min(actual.get(i).length(), expected.get(i).length())));
    }
    assertThat(prefixes).as("%s", actual).isEqualTo(expected);
  }
}
