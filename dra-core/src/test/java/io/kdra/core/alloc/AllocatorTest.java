package io.kdra.core.alloc;

import static io.kdra.core.alloc.AllocatorCases.ANY_GPU;
import static io.kdra.core.alloc.AllocatorCases.MEM_40;
import static io.kdra.core.alloc.AllocatorCases.NODE_A;
import static io.kdra.core.alloc.AllocatorCases.PCIE;
import static io.kdra.core.alloc.AllocatorCases.gpus;
import static io.kdra.core.alloc.AllocatorCases.tc;
import static io.kdra.core.testing.AllocFixtures.DRIVER;
import static io.kdra.core.testing.AllocFixtures.claim;
import static io.kdra.core.testing.AllocFixtures.deviceClass;
import static io.kdra.core.testing.AllocFixtures.gpu;
import static io.kdra.core.testing.AllocFixtures.node;
import static io.kdra.core.testing.AllocFixtures.request;
import static io.kdra.core.testing.AllocFixtures.slice;
import static org.assertj.core.api.Assertions.assertThat;

import io.fabric8.kubernetes.api.model.Node;
import io.fabric8.kubernetes.api.model.resource.v1.ResourceClaim;
import io.kdra.core.testing.Scenario;
import java.util.List;
import java.util.stream.Stream;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * Which devices the allocator picks, one named case per rule of upstream's structured allocator
 * (1.36): the order it tries pools and devices in, incomplete and invalid pools, allocation modes,
 * and the errors and limits it reports. Constraints and firstAvailable are {@link
 * AllocatorChoicesTest}'s, admin access, taints, binding conditions and node selection {@link
 * AllocatorDeviceAccessTest}'s. Each case lists, per claim, {@code request=driver/pool/device} of
 * the allocated devices or {@code !} and the start of the explanation's summary.
 */
class AllocatorTest {

  static Stream<Arguments> cases() {
    return Stream.of(
        tc(
            "one device: first fit",
            gpus("gpu-0", "gpu-1"),
            NODE_A,
            List.of(claim("c", request("r", "gpu").build()).build()),
            "r=gpu.example.com/node-a/gpu-0"),
        tc(
            "count 2: two devices in order",
            gpus("gpu-0", "gpu-1", "gpu-2"),
            NODE_A,
            List.of(claim("c", request("r", "gpu").withCount(2).build()).build()),
            "r=gpu.example.com/node-a/gpu-0, r=gpu.example.com/node-a/gpu-1"),
        tc(
            "class selector filters devices (memory >= 40Gi)",
            Scenario.of(
                    slice(
                            "s",
                            "node-a",
                            gpu("small", "T4", "16Gi", "pci0"),
                            gpu("big", "A100", "40Gi", "pci0"))
                        .build())
                .withClasses(deviceClass("big", ANY_GPU, MEM_40)),
            NODE_A,
            List.of(claim("c", request("r", "big").build()).build()),
            "r=gpu.example.com/node-a/big"),
        tc(
            "request selector filters devices",
            Scenario.of(
                    slice(
                            "s",
                            "node-a",
                            gpu("a", "T4", "16Gi", "pci0"),
                            gpu("b", "L4", "24Gi", "pci0"))
                        .build())
                .withClasses(deviceClass("gpu", ANY_GPU)),
            NODE_A,
            List.of(
                claim(
                        "c",
                        request("r", "gpu")
                            .withSelectors("device.attributes[\"" + DRIVER + "\"].model == \"L4\"")
                            .build())
                    .build()),
            "r=gpu.example.com/node-a/b"),
        tc(
            "device allocated to another claim is skipped",
            gpus("gpu-0", "gpu-1")
                .withExisting(
                    claim("old", request("r", "gpu").build())
                        .withAllocated("gpu.example.com/node-a/gpu-0")
                        .build()),
            NODE_A,
            List.of(claim("c", request("r", "gpu").build()).build()),
            "r=gpu.example.com/node-a/gpu-1"),
        tc(
            "claims of one pod do not share devices",
            gpus("gpu-0", "gpu-1"),
            NODE_A,
            List.of(
                claim("c1", request("r", "gpu").build()).build(),
                claim("c2", request("r", "gpu").build()).build()),
            "r=gpu.example.com/node-a/gpu-0",
            "r=gpu.example.com/node-a/gpu-1"),
        tc(
            "pools in driver then pool-name order",
            Scenario.of(
                    slice("s1", "node-a", gpu("x", "A100", "40Gi", "p"))
                        .withPool("pool-b", 0, 1)
                        .build(),
                    slice("s2", "node-a", gpu("y", "A100", "40Gi", "p"))
                        .withPool("pool-a", 0, 1)
                        .build())
                .withClasses(deviceClass("gpu", ANY_GPU)),
            NODE_A,
            List.of(claim("c", request("r", "gpu").build()).build()),
            "r=gpu.example.com/pool-a/y"),
        tc(
            "slices of a pool in name order",
            Scenario.of(
                    slice("slice-b", "node-a", gpu("x", "A100", "40Gi", "p"))
                        .withPool("p", 0, 2)
                        .build(),
                    slice("slice-a", "node-a", gpu("y", "A100", "40Gi", "p"))
                        .withPool("p", 0, 2)
                        .build())
                .withClasses(deviceClass("gpu", ANY_GPU)),
            NODE_A,
            List.of(claim("c", request("r", "gpu").build()).build()),
            "r=gpu.example.com/p/y"),
        tc(
            "older generation of a pool is ignored",
            Scenario.of(
                    slice("old", "node-a", gpu("old-gpu", "A100", "40Gi", "p"))
                        .withPool("p", 1, 1)
                        .build(),
                    slice("new", "node-a", gpu("new-gpu", "A100", "40Gi", "p"))
                        .withPool("p", 2, 1)
                        .build())
                .withClasses(deviceClass("gpu", ANY_GPU)),
            NODE_A,
            List.of(claim("c", request("r", "gpu").build()).build()),
            "r=gpu.example.com/p/new-gpu"),
        tc(
            "incomplete pool skipped for ExactCount",
            Scenario.of(
                    slice("s1", "node-a", gpu("a", "A100", "40Gi", "p"))
                        .withPool("part", 0, 2)
                        .build(),
                    slice("s2", "node-a", gpu("b", "A100", "40Gi", "p"))
                        .withPool("whole", 0, 1)
                        .build())
                .withClasses(deviceClass("gpu", ANY_GPU)),
            NODE_A,
            List.of(claim("c", request("r", "gpu").build()).build()),
            "r=gpu.example.com/whole/b"),
        tc(
            "incomplete pool is an error for All",
            Scenario.of(
                    slice("s1", "node-a", gpu("a", "A100", "40Gi", "p"))
                        .withPool("part", 0, 2)
                        .build())
                .withClasses(deviceClass("gpu", ANY_GPU)),
            NODE_A,
            List.of(claim("c", request("r", "gpu").withAll().build()).build()),
            "!request \"r\": asks for all devices, but resource pool gpu.example.com/part is "
                + "currently being updated (1 of 2 slices)"),
        // differential seed 349: upstream hands a slice with shared counters to every node,
        // node-local or not, so another node's incomplete pool fails All here too
        tc(
            "incomplete pool of another node with shared counters is not seen (1.37)",
            Scenario.of(
                    slice("a", "node-a", gpu("a", "A100", "40Gi", "p")).build(),
                    slice("b-counters", "node-b")
                        .withPool("node-b", 0, 3)
                        .withCounterSet("mem", "memory", "80Gi")
                        .build(),
                    slice("b-1", "node-b", gpu("b", "A100", "40Gi", "p"))
                        .withPool("node-b", 0, 3)
                        .build())
                .withClasses(deviceClass("gpu", ANY_GPU)),
            NODE_A,
            List.of(claim("c", request("r", "gpu").withAll().build()).build()),
            "r=gpu.example.com/node-a/a"),
        tc(
            "pool with duplicate device names is invalid and skipped",
            Scenario.of(
                    slice("s1", "node-a", gpu("a", "A100", "40Gi", "p"))
                        .withPool("dup", 0, 2)
                        .build(),
                    slice("s2", "node-a", gpu("a", "A100", "40Gi", "p"))
                        .withPool("dup", 0, 2)
                        .build())
                .withClasses(deviceClass("gpu", ANY_GPU)),
            NODE_A,
            List.of(claim("c", request("r", "gpu").build()).build()),
            "!request \"r\": 0 devices in class \"gpu\", 0 free; "
                + "pool dup invalid (duplicate device name a); on node node-a"),
        tc(
            "All allocates every matching device",
            gpus("gpu-0", "gpu-1"),
            NODE_A,
            List.of(claim("c", request("r", "gpu").withAll().build()).build()),
            "r=gpu.example.com/node-a/gpu-0, r=gpu.example.com/node-a/gpu-1"),
        tc(
            "All fails when one matching device is in use",
            gpus("gpu-0", "gpu-1")
                .withExisting(
                    claim("old", request("r", "gpu").build())
                        .withAllocated("gpu.example.com/node-a/gpu-1")
                        .build()),
            NODE_A,
            List.of(claim("c", request("r", "gpu").withAll().build()).build()),
            "!request \"r\": 2 devices in class \"gpu\", 1 free "
                + "(1 allocated to other claims), all needed; on node node-a"),
        tc(
            "missing DeviceClass is explained by name",
            gpus("gpu-0"),
            NODE_A,
            List.of(claim("c", request("r", "nosuch").build()).build()),
            "!request \"r\": device class nosuch not found"),
        tc(
            "CEL runtime error names the expression",
            gpus("gpu-0")
                .withClasses(
                    deviceClass("broken", "device.attributes[\"" + DRIVER + "\"].nosuch == \"x\"")),
            NODE_A,
            List.of(claim("c", request("r", "broken").build()).build()),
            "!request \"r\": class broken: selector #0 on device gpu.example.com/node-a/gpu-0: "
                + "CEL error:"),
        tc(
            "another claim's error blocks the pod's other claims",
            gpus("gpu-0"),
            NODE_A,
            List.of(
                claim("ok", request("r", "gpu").build()).build(),
                claim("bad", request("r", "nosuch").build()).build()),
            "!claim default/bad of the same pod cannot be allocated",
            "!request \"r\": device class nosuch not found"),
        tc(
            "more than 32 devices per claim is an error",
            gpus("gpu-0"),
            NODE_A,
            List.of(claim("c", request("r", "gpu").withCount(33).build()).build()),
            "!number of requested devices 33 exceeds the claim limit of 32"),
        tc(
            "pool being replaced by a newer generation elsewhere is ignored",
            Scenario.of(
                    slice("old", "node-a", gpu("a", "A100", "40Gi", "p"))
                        .withPool("p", 1, 2)
                        .build(),
                    slice("new", "node-b", gpu("b", "A100", "40Gi", "p"))
                        .withPool("p", 2, 2)
                        .build(),
                    // without the newer generation, pool p would be reported incomplete
                    slice("other", "node-a", gpu("c", "A100", "40Gi", "p"))
                        .withPool("q", 0, 1)
                        .build())
                .withClasses(deviceClass("gpu", ANY_GPU)),
            NODE_A,
            List.of(
                claim(
                        "c",
                        request("r", "gpu")
                            .withSelectors(
                                "device.attributes[\"" + DRIVER + "\"].model == \"H100\"")
                            .build())
                    .build()),
            "!request \"r\": 1 device in class \"gpu\", 0 match the request selectors, 0 free; "
                + "on node node-a"),
        tc(
            "search limit yields an explanation, not an endless search",
            Scenario.of(
                    slice(
                            "s",
                            "node-a",
                            gpu("g0", "A100", "40Gi", "p0"),
                            gpu("g1", "A100", "40Gi", "p1"),
                            gpu("g2", "A100", "40Gi", "p2"),
                            gpu("g3", "A100", "40Gi", "p3"))
                        .build())
                .withClasses(deviceClass("gpu", ANY_GPU))
                .withBudget(3),
            NODE_A,
            List.of(
                claim("c", request("r", "gpu").withCount(2).build()).withConstraint(PCIE).build()),
            "!search limit reached after 3 steps; on node node-a"));
  }

  @ParameterizedTest(name = "{0}")
  @MethodSource("cases")
  void allocates(Scenario scenario, Node node, List<ResourceClaim> claims, List<String> expected) {
    List<String> actual =
        Scenario.brief(scenario.allocate(node, claims.toArray(new ResourceClaim[0])));
    assertThat(actual).hasSameSizeAs(expected);
    for (int i = 0; i < expected.size(); i++) {
      assertThat(actual.get(i)).as("claim #%d", i).startsWith(expected.get(i));
    }
  }
}
