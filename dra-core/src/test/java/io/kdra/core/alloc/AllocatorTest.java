package io.kdra.core.alloc;

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
import static org.junit.jupiter.api.Named.named;
import static org.junit.jupiter.params.provider.Arguments.arguments;

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
 * (1.36). Each case lists, per claim, {@code request=driver/pool/device} of the allocated devices
 * or {@code !} and the start of the explanation's summary.
 */
class AllocatorTest {

  static final String ANY_GPU = "device.driver == \"" + DRIVER + "\"";
  static final String MEM_40 =
      "device.capacity[\"" + DRIVER + "\"].memory.compareTo(quantity(\"40Gi\")) >= 0";
  static final String PCIE = "resource.kubernetes.io/pcieRoot";
  static final Node NODE_A = node("node-a");

  static io.fabric8.kubernetes.api.model.resource.v1.DeviceSubRequest allOf(
      io.fabric8.kubernetes.api.model.resource.v1.DeviceSubRequest sub) {
    sub.setAllocationMode("All");
    sub.setCount(null);
    return sub;
  }

  static Arguments tc(
      String name, Scenario s, Node node, List<ResourceClaim> claims, String... expected) {
    return arguments(named(name, s), node, claims, List.of(expected));
  }

  static Scenario gpus(String... devices) {
    var list = Stream.of(devices).map(d -> gpu(d, "A100", "40Gi", "pci0")).toList();
    return Scenario.of(
            slice(
                    "s",
                    "node-a",
                    list.toArray(new io.fabric8.kubernetes.api.model.resource.v1.Device[0]))
                .build())
        .withClasses(deviceClass("gpu", ANY_GPU));
  }

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
            "incomplete pool of another node with shared counters is an error for All",
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
            "!request \"r\": asks for all devices, but resource pool gpu.example.com/node-b is "
                + "currently being updated (2 of 3 slices)"),
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
        // distinct, as the API documents (docs/OPERATIONS.md, "Known divergences").
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
            "r=gpu.example.com/node-a/gpu-0, r=gpu.example.com/node-a/gpu-1"),
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
            "r=gpu.example.com/node-a/g1"),
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
