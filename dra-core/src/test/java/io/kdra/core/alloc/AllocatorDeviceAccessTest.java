package io.kdra.core.alloc;

import static io.kdra.core.alloc.AllocatorCases.ANY_GPU;
import static io.kdra.core.alloc.AllocatorCases.NODE_A;
import static io.kdra.core.alloc.AllocatorCases.gpus;
import static io.kdra.core.alloc.AllocatorCases.tc;
import static io.kdra.core.testing.AllocFixtures.claim;
import static io.kdra.core.testing.AllocFixtures.device;
import static io.kdra.core.testing.AllocFixtures.deviceClass;
import static io.kdra.core.testing.AllocFixtures.gpu;
import static io.kdra.core.testing.AllocFixtures.node;
import static io.kdra.core.testing.AllocFixtures.request;
import static io.kdra.core.testing.AllocFixtures.slice;
import static io.kdra.core.testing.AllocFixtures.taintEverything;
import static io.kdra.core.testing.AllocFixtures.taintRule;
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
 * Which devices a claim may get at all: admin access, device taints and tolerations, binding
 * conditions, and devices of slices selected by node selector or per device. Cases as in {@link
 * AllocatorTest}.
 */
class AllocatorDeviceAccessTest {

  static Stream<Arguments> cases() {
    return Stream.of(
        tc(
            "adminAccess may use a device another claim holds",
            gpus("gpu-0")
                .withExisting(
                    claim("old", request("r", "gpu").build())
                        .withAllocated("gpu.example.com/node-a/gpu-0")
                        .build()),
            NODE_A,
            List.of(claim("c", request("r", "gpu").withAdminAccess().build()).build()),
            "r=gpu.example.com/node-a/gpu-0"),
        tc(
            "adminAccess with the feature off is an error",
            gpus("gpu-0").withFeatures(AllocatorFeatures.defaults().withAdminAccess(false)),
            NODE_A,
            List.of(claim("c", request("r", "gpu").withAdminAccess().build()).build()),
            "!request \"r\": admin access is requested, but the feature is disabled"),
        tc(
            "NoSchedule taint blocks a device",
            Scenario.of(
                    slice(
                            "s",
                            "node-a",
                            device("t").withTaint("maint", "yes", "NoSchedule").build(),
                            device("u").build())
                        .build())
                .withClasses(deviceClass("gpu", ANY_GPU)),
            NODE_A,
            List.of(claim("c", request("r", "gpu").build()).build()),
            "r=gpu.example.com/node-a/u"),
        tc(
            "NoExecute taint tolerated by Exists",
            Scenario.of(
                    slice("s", "node-a", device("t").withTaint("maint", "yes", "NoExecute").build())
                        .build())
                .withClasses(deviceClass("gpu", ANY_GPU)),
            NODE_A,
            List.of(
                claim(
                        "c",
                        request("r", "gpu").withToleration("maint", "Exists", null, null).build())
                    .build()),
            "r=gpu.example.com/node-a/t"),
        tc(
            "taint with effect None is informational",
            Scenario.of(
                    slice("s", "node-a", device("t").withTaint("note", "x", "None").build())
                        .build())
                .withClasses(deviceClass("gpu", ANY_GPU)),
            NODE_A,
            List.of(claim("c", request("r", "gpu").build()).build()),
            "r=gpu.example.com/node-a/t"),
        tc(
            "taints ignored with DRADeviceTaints off",
            Scenario.of(
                    slice(
                            "s",
                            "node-a",
                            device("t").withTaint("maint", "yes", "NoSchedule").build())
                        .build())
                .withClasses(deviceClass("gpu", ANY_GPU))
                .withFeatures(AllocatorFeatures.defaults().withDeviceTaints(false)),
            NODE_A,
            List.of(claim("c", request("r", "gpu").build()).build()),
            "r=gpu.example.com/node-a/t"),
        tc(
            "untolerated taint is explained",
            Scenario.of(
                    slice(
                            "s",
                            "node-a",
                            device("t").withTaint("maint", "yes", "NoSchedule").build())
                        .build())
                .withClasses(deviceClass("gpu", ANY_GPU)),
            NODE_A,
            List.of(
                claim("c", request("r", "gpu").withToleration("maint", "Equal", "no", null).build())
                    .build()),
            "!request \"r\": 1 device in class \"gpu\", 0 free "
                + "(1 tainted, e.g. maint=yes:NoSchedule, which the request does not "
                + "tolerate); "
                + "on node node-a"),
        tc(
            "a device tainted NoSchedule by a DeviceTaintRule is not allocated",
            gpus("gpu-0", "gpu-1")
                .withTaintRules(
                    taintRule(
                        "maintenance",
                        "gpu.example.com",
                        "node-a",
                        "gpu-0",
                        "maint",
                        "yes",
                        "NoSchedule")),
            NODE_A,
            List.of(claim("c", request("r", "gpu").build()).build()),
            "r=gpu.example.com/node-a/gpu-1"),
        tc(
            "a rule's NoExecute taint blocks like a slice's",
            gpus("gpu-0")
                .withTaintRules(
                    taintRule("drain", null, "node-a", null, "drain", null, "NoExecute")),
            NODE_A,
            List.of(claim("c", request("r", "gpu").build()).build()),
            "!request \"r\": 1 device in class \"gpu\", 0 free "
                + "(1 tainted, e.g. drain:NoExecute (DeviceTaintRule drain), which the request"
                + " does not tolerate); on node node-a"),
        tc(
            "a rule's taint is tolerated like a slice's",
            gpus("gpu-0").withTaintRules(taintEverything("all", "maint", "NoSchedule")),
            NODE_A,
            List.of(
                claim(
                        "c",
                        request("r", "gpu").withToleration("maint", "Exists", null, null).build())
                    .build()),
            "r=gpu.example.com/node-a/gpu-0"),
        tc(
            "a rule without a selector taints nothing",
            gpus("gpu-0")
                .withTaintRules(taintRule("none", null, null, null, "m", null, "NoSchedule")),
            NODE_A,
            List.of(claim("c", request("r", "gpu").build()).build()),
            "r=gpu.example.com/node-a/gpu-0"),
        tc(
            "a rule for another driver, pool or device taints nothing",
            gpus("gpu-0")
                .withTaintRules(
                    taintRule("d", "other.example.com", null, null, "m", null, "NoSchedule"),
                    taintRule("p", "gpu.example.com", "node-b", null, "m", null, "NoSchedule"),
                    taintRule("v", "gpu.example.com", "node-a", "gpu-9", "m", null, "NoSchedule")),
            NODE_A,
            List.of(claim("c", request("r", "gpu").build()).build()),
            "r=gpu.example.com/node-a/gpu-0"),
        tc(
            "a rule with effect None is informational",
            gpus("gpu-0").withTaintRules(taintEverything("note", "note", "None")),
            NODE_A,
            List.of(claim("c", request("r", "gpu").build()).build()),
            "r=gpu.example.com/node-a/gpu-0"),
        tc(
            "network-attached slice visible through its node selector",
            Scenario.of(
                    slice("s", "x", gpu("n0", "A100", "40Gi", "p"))
                        .withPool("fabric", 0, 1)
                        .withNodeSelector("rack", "r1")
                        .build())
                .withClasses(deviceClass("gpu", ANY_GPU)),
            node("node-a", "rack", "r1"),
            List.of(claim("c", request("r", "gpu").build()).build()),
            "r=gpu.example.com/fabric/n0"),
        tc(
            "network-attached slice invisible to other nodes",
            Scenario.of(
                    slice("s", "x", gpu("n0", "A100", "40Gi", "p"))
                        .withPool("fabric", 0, 1)
                        .withNodeSelector("rack", "r1")
                        .build())
                .withClasses(deviceClass("gpu", ANY_GPU)),
            node("node-a", "rack", "r2"),
            List.of(claim("c", request("r", "gpu").build()).build()),
            "!request \"r\": 0 devices in class \"gpu\", 0 free; " + "on node node-a"),
        tc(
            "per-device node selection picks only this node's devices",
            Scenario.of(
                    slice(
                            "s",
                            "x",
                            device("other").withNodeName("node-b").build(),
                            device("mine").withNodeName("node-a").build())
                        .withPool("p", 0, 1)
                        .withPerDeviceNodeSelection()
                        .build())
                .withClasses(deviceClass("gpu", ANY_GPU)),
            NODE_A,
            List.of(claim("c", request("r", "gpu").build()).build()),
            "r=gpu.example.com/p/mine"),
        tc(
            "binding-condition pools are tried last",
            Scenario.of(
                    slice("s1", "x", device("bound").withBindingConditions("ready").build())
                        .withPool("a-bound", 0, 1)
                        .withAllNodes()
                        .build(),
                    slice("s2", "x", device("plain").build())
                        .withPool("b-plain", 0, 1)
                        .withAllNodes()
                        .build())
                .withClasses(deviceClass("gpu", ANY_GPU)),
            NODE_A,
            List.of(claim("c", request("r", "gpu").build()).build()),
            "r=gpu.example.com/b-plain/plain"),
        tc(
            "binding-condition devices invisible with the feature off",
            Scenario.of(
                    slice("s1", "x", device("bound").withBindingConditions("ready").build())
                        .withPool("a-bound", 0, 1)
                        .withAllNodes()
                        .build())
                .withClasses(deviceClass("gpu", ANY_GPU))
                .withFeatures(AllocatorFeatures.defaults().withBindingConditions(false)),
            NODE_A,
            List.of(claim("c", request("r", "gpu").build()).build()),
            "!request \"r\": 0 devices in class \"gpu\", 0 free; " + "on node node-a"),
        tc(
            "adminAccess never gives one claim the same device twice",
            gpus("gpu-0", "gpu-1"),
            NODE_A,
            List.of(claim("c", request("r", "gpu").withAdminAccess().withCount(2).build()).build()),
            "r=gpu.example.com/node-a/gpu-0, r=gpu.example.com/node-a/gpu-1"));
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
