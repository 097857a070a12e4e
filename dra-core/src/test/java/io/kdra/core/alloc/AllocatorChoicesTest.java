package io.kdra.core.alloc;

import static io.kdra.core.alloc.AllocatorCases.ANY_GPU;
import static io.kdra.core.alloc.AllocatorCases.NODE_A;
import static io.kdra.core.alloc.AllocatorCases.PCIE;
import static io.kdra.core.alloc.AllocatorCases.allOf;
import static io.kdra.core.alloc.AllocatorCases.gpus;
import static io.kdra.core.alloc.AllocatorCases.tc;
import static io.kdra.core.testing.AllocFixtures.DRIVER;
import static io.kdra.core.testing.AllocFixtures.claim;
import static io.kdra.core.testing.AllocFixtures.device;
import static io.kdra.core.testing.AllocFixtures.deviceClass;
import static io.kdra.core.testing.AllocFixtures.firstAvailable;
import static io.kdra.core.testing.AllocFixtures.gpu;
import static io.kdra.core.testing.AllocFixtures.node;
import static io.kdra.core.testing.AllocFixtures.request;
import static io.kdra.core.testing.AllocFixtures.slice;
import static io.kdra.core.testing.AllocFixtures.sub;
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
 * Which devices the allocator picks when a claim leaves it a choice: firstAvailable's subrequests,
 * matchAttribute and distinctAttribute constraints. Cases as in {@link AllocatorTest}.
 */
class AllocatorChoicesTest {

  static Stream<Arguments> cases() {
    return Stream.of(
        tc(
            "firstAvailable takes the first subrequest that fits",
            gpus("gpu-0", "gpu-1"),
            NODE_A,
            List.of(
                claim("c", firstAvailable("r", sub("two", "gpu", 2), sub("one", "gpu", 1)))
                    .build()),
            "r/two=gpu.example.com/node-a/gpu-0, r/two=gpu.example.com/node-a/gpu-1"),
        tc(
            "firstAvailable falls back when the first choice is exhausted",
            gpus("gpu-0", "gpu-1"),
            NODE_A,
            List.of(
                claim("c", firstAvailable("r", sub("three", "gpu", 3), sub("one", "gpu", 1)))
                    .build()),
            "r/one=gpu.example.com/node-a/gpu-0"),
        tc(
            "firstAvailable with the feature off is an error",
            gpus("gpu-0").withFeatures(AllocatorFeatures.defaults().withPrioritizedList(false)),
            NODE_A,
            List.of(claim("c", firstAvailable("r", sub("one", "gpu", 1))).build()),
            "!request \"r\": has subrequests, but the DRAPrioritizedList feature is disabled"),
        tc(
            "matchAttribute backtracks to devices sharing a PCIe root",
            Scenario.of(
                    slice(
                            "s",
                            "node-a",
                            gpu("g0", "A100", "40Gi", "pci0"),
                            gpu("g1", "A100", "40Gi", "pci1"),
                            gpu("g2", "A100", "40Gi", "pci1"))
                        .build())
                .withClasses(deviceClass("gpu", ANY_GPU)),
            NODE_A,
            List.of(
                claim("c", request("r", "gpu").withCount(2).build()).withConstraint(PCIE).build()),
            "r=gpu.example.com/node-a/g1, r=gpu.example.com/node-a/g2"),
        tc(
            "matchAttribute across requests (request/subrequest names)",
            Scenario.of(
                    slice(
                            "s",
                            "node-a",
                            gpu("g0", "A100", "40Gi", "pci0"),
                            gpu("g1", "L4", "24Gi", "pci1"),
                            gpu("g2", "A100", "40Gi", "pci1"))
                        .build())
                .withClasses(deviceClass("gpu", ANY_GPU)),
            NODE_A,
            List.of(
                claim(
                        "c",
                        request("a", "gpu")
                            .withSelectors(
                                "device.attributes[\"" + DRIVER + "\"].model == \"A100\"")
                            .build(),
                        firstAvailable(
                            "b",
                            sub(
                                "l4",
                                "gpu",
                                1,
                                "device.attributes[\"" + DRIVER + "\"].model == \"L4\"")))
                    .withConstraint(PCIE, "a", "b/l4")
                    .build()),
            "a=gpu.example.com/node-a/g2, b/l4=gpu.example.com/node-a/g1"),
        tc(
            "matchAttribute that no devices satisfy is explained",
            Scenario.of(
                    slice(
                            "s",
                            "node-a",
                            gpu("g0", "A100", "40Gi", "pci0"),
                            gpu("g1", "A100", "40Gi", "pci1"))
                        .build())
                .withClasses(deviceClass("gpu", ANY_GPU)),
            NODE_A,
            List.of(
                claim("c", request("r", "gpu").withCount(2).build()).withConstraint(PCIE).build()),
            "!constraint matchAttribute resource.kubernetes.io/pcieRoot (all requests) cannot be "
                + "satisfied; on node node-a"),
        tc(
            "device without the matched attribute is never chosen",
            Scenario.of(
                    slice("s", "node-a", device("bare").build(), gpu("g1", "A100", "40Gi", "pci1"))
                        .build())
                .withClasses(deviceClass("gpu", ANY_GPU)),
            NODE_A,
            List.of(claim("c", request("r", "gpu").build()).withConstraint(PCIE).build()),
            "r=gpu.example.com/node-a/g1"),
        tc(
            "distinctAttribute picks different values",
            Scenario.of(
                    slice(
                            "s",
                            "node-a",
                            gpu("g0", "A100", "40Gi", "pci0"),
                            gpu("g1", "A100", "40Gi", "pci0"),
                            gpu("g2", "A100", "40Gi", "pci1"))
                        .build())
                .withClasses(deviceClass("gpu", ANY_GPU)),
            NODE_A,
            List.of(
                claim("c", request("r", "gpu").withCount(2).build()).withDistinct(PCIE).build()),
            "r=gpu.example.com/node-a/g0, r=gpu.example.com/node-a/g2"),
        // differential seed 36, a deliberate divergence: upstream 1.36 keeps one value per
        // request for distinctAttribute, so a request's third device is only compared with its
        // second, and upstream allocates g0, g1, g2 (pci0 twice). We keep the values pairwise
        // distinct, as the API documents (docs/dev/oracles.md, "Known divergences").
        tc(
            "distinctAttribute: every device of a request differs from all others",
            Scenario.of(
                    slice(
                            "s",
                            "node-a",
                            gpu("g0", "A100", "40Gi", "pci0"),
                            gpu("g1", "A100", "40Gi", "pci1"),
                            gpu("g2", "A100", "40Gi", "pci0"))
                        .build())
                .withClasses(deviceClass("gpu", ANY_GPU)),
            NODE_A,
            List.of(
                claim("c", request("r", "gpu").withCount(3).build()).withDistinct(PCIE).build()),
            "!constraint distinctAttribute resource.kubernetes.io/pcieRoot (all requests) cannot "
                + "be satisfied; on node node-a"),
        // Extended seed 4709: with upstream's per-request distinctAttribute, All of the first
        // subrequest gets past g2 (compared with g1 only) to the tainted g3 and falls back to the
        // next subrequest; with pairwise distinct values g2 conflicts first, and a conflict among
        // the devices All must take is an error for the claim, as in upstream's allocateDevice.
        tc(
            "distinctAttribute: a conflict within All of a subrequest fails the claim",
            Scenario.of(
                    slice(
                            "s",
                            "node-a",
                            gpu("g0", "A100", "40Gi", "pci0"),
                            gpu("g1", "A100", "40Gi", "pci1"),
                            gpu("g2", "A100", "40Gi", "pci0"),
                            device("g3")
                                .withString("model", "A100")
                                .withString(PCIE, "pci1")
                                .withTaint("degraded", null, "NoExecute")
                                .build())
                        .build())
                .withClasses(deviceClass("gpu", ANY_GPU)),
            NODE_A,
            List.of(
                claim("c", firstAvailable("r", allOf(sub("s0", "gpu", 1)), sub("s1", "gpu", 1)))
                    .withDistinct(PCIE)
                    .build()),
            "!request \"r/s0\": cannot add device gpu.example.com/node-a/g2 because a claim "
                + "constraint would not be satisfied: distinctAttribute "
                + "resource.kubernetes.io/pcieRoot"),
        tc(
            "firstAvailable skips a subrequest over the 32-device limit",
            gpus("gpu-0"),
            NODE_A,
            List.of(
                claim("c", firstAvailable("r", sub("many", "gpu", 33), sub("one", "gpu", 1)))
                    .build()),
            "r/one=gpu.example.com/node-a/gpu-0"),
        tc(
            "constraints apply within a claim, not across claims",
            Scenario.of(
                    slice(
                            "s",
                            "node-a",
                            gpu("g0", "A100", "40Gi", "pci0"),
                            gpu("g1", "A100", "40Gi", "pci1"))
                        .build())
                .withClasses(deviceClass("gpu", ANY_GPU)),
            NODE_A,
            List.of(
                claim("c1", request("r", "gpu").build()).withConstraint(PCIE).build(),
                claim("c2", request("r", "gpu").build()).withConstraint(PCIE).build()),
            "r=gpu.example.com/node-a/g0",
            "r=gpu.example.com/node-a/g1"));
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
