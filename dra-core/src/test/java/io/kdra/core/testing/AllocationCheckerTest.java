package io.kdra.core.testing;

import static io.kdra.core.testing.AllocFixtures.claim;
import static io.kdra.core.testing.AllocFixtures.firstAvailable;
import static io.kdra.core.testing.AllocFixtures.node;
import static io.kdra.core.testing.AllocFixtures.request;
import static io.kdra.core.testing.AllocFixtures.sub;
import static io.kdra.core.testing.CheckerFixtures.CHECKER;
import static io.kdra.core.testing.CheckerFixtures.GPU;
import static io.kdra.core.testing.CheckerFixtures.MODEL;
import static io.kdra.core.testing.CheckerFixtures.allocated;
import static io.kdra.core.testing.CheckerFixtures.one;
import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.params.provider.Arguments.arguments;

import io.fabric8.kubernetes.api.model.Quantity;
import io.fabric8.kubernetes.api.model.resource.v1.DeviceRequestAllocationResult;
import io.fabric8.kubernetes.api.model.resource.v1.ResourceClaim;
import java.util.List;
import java.util.Map;
import java.util.stream.Stream;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * The validity checker, one named case per rule: a valid allocation passes, and each kind of
 * invalid allocation is reported with the rule it breaks. Pods and their placement are {@link
 * PodPlacementCheckTest}'s.
 */
class AllocationCheckerTest {

  static ResourceClaim share(String name, String memory) {
    ResourceClaim c = one(name, "node-a", "r=node-a/vgpu");
    DeviceRequestAllocationResult r =
        c.getStatus().getAllocation().getDevices().getResults().get(0);
    r.setShareID("share-" + name);
    r.setConsumedCapacity(Map.of("memory", new Quantity(memory)));
    return c;
  }

  /** An adminAccess claim (or not) on the node with these results, adminAccess set as given. */
  static ResourceClaim admin(
      String name, boolean asks, boolean result, String node, String... results) {
    var req = request("r", "gpu");
    if (asks) {
      req.withAdminAccess();
    }
    ResourceClaim c = allocated(claim(name, req.build()).build(), node, results);
    if (result) {
      c.getStatus().getAllocation().getDevices().getResults().forEach(r -> r.setAdminAccess(true));
    }
    return c;
  }

  /** A claim for one device with its binding conditions copied, or not, into the result. */
  static ResourceClaim bound(String name, String node, boolean copy, String result) {
    ResourceClaim c = one(name, node, result);
    if (copy) {
      DeviceRequestAllocationResult r =
          c.getStatus().getAllocation().getDevices().getResults().get(0);
      r.setBindingConditions(List.of("attached"));
      r.setBindingFailureConditions(List.of("failed"));
    }
    if (node == null) {
      c.getStatus().getAllocation().setNodeSelector(null);
    }
    return c;
  }

  /** All devices with a {@code kind} attribute, on no node name, under this node selector. */
  static ResourceClaim allLinks(
      io.fabric8.kubernetes.api.model.NodeSelector selector, String... results) {
    ResourceClaim c =
        allocated(
            claim(
                    "c",
                    request("r", "gpu")
                        .withAll()
                        .withSelectors("\"kind\" in device.attributes[\"" + GPU + "\"]")
                        .build())
                .build(),
            "node-a",
            results);
    c.getStatus().getAllocation().setNodeSelector(selector);
    return c;
  }

  static ResourceClaim adminShare(String name, String memory) {
    ResourceClaim c = admin(name, true, true, "node-a", "r=node-a/vgpu");
    DeviceRequestAllocationResult r =
        c.getStatus().getAllocation().getDevices().getResults().get(0);
    r.setShareID("share-" + name);
    r.setConsumedCapacity(Map.of("memory", new Quantity(memory)));
    return c;
  }

  static Arguments tc(String name, List<ResourceClaim> claims, String... expected) {
    return arguments(name, claims, List.of(expected));
  }

  static Stream<Arguments> cases() {
    return Stream.of(
        tc("valid: one free matching device", List.of(one("c", "node-a", "r=node-a/gpu-0"))),
        tc(
            "valid: two claims, two devices, counters within capacity",
            List.of(one("c1", "node-a", "r=node-a/part-1"), one("c2", "node-a", "r=node-a/gpu-0"))),
        tc(
            "valid: shares of a device within its capacity",
            List.of(share("s1", "12Gi"), share("s2", "12Gi"))),
        tc(
            "device does not exist",
            List.of(one("c", "node-a", "r=node-a/gpu-9")),
            "default/c: request r: device gpu.example.com/node-a/gpu-9 does not exist",
            "default/c: request r got no devices"),
        tc(
            "device of an older pool generation",
            List.of(one("c", "node-b", "r=node-b/gpu-old")),
            "does not exist in the newest",
            "request r got no devices"),
        tc(
            "device of an incomplete pool",
            List.of(one("c", "node-c", "r=node-c/gpu-0")),
            "is in an incomplete pool"),
        tc(
            "device allocated before the run",
            List.of(one("c", "node-a", "r=node-a/gpu-1")),
            "is already allocated to default/old (allocated before)"),
        tc(
            "device taken twice in the run",
            List.of(one("c1", "node-a", "r=node-a/gpu-0"), one("c2", "node-a", "r=node-a/gpu-0")),
            "default/c2: request r: device gpu.example.com/node-a/gpu-0 is already allocated to "
                + "default/c1"),
        tc(
            "device local to another node",
            List.of(one("c", "node-b", "r=node-a/gpu-0")),
            "is local to node node-a, the claim is for node node-b"),
        tc(
            "class selector not matched",
            List.of(
                allocated(
                    claim("c", request("r", "a100").build()).build(), "node-a", "r=node-a/part-0")),
            "does not match selector " + MODEL + " == \"A100\""),
        tc(
            "request selector not matched",
            List.of(
                allocated(
                    claim("c", request("r", "gpu").withSelectors(MODEL + " == \"L4\"").build())
                        .build(),
                    "node-a",
                    "r=node-a/gpu-0")),
            "does not match selector " + MODEL + " == \"L4\""),
        tc(
            "selector fails to evaluate (missing attribute)",
            List.of(
                allocated(
                    claim("c", request("r", "mig").build()).build(), "node-a", "r=node-a/gpu-0")),
            "fails selector"),
        tc(
            "untolerated taint",
            List.of(one("c", "node-a", "r=node-a/gpu-2")),
            "has taint maint=true:NoSchedule"),
        tc(
            "too few devices for the count",
            List.of(
                allocated(
                    claim("c", request("r", "gpu").withCount(2).build()).build(),
                    "node-a",
                    "r=node-a/gpu-0")),
            "request r got 1 devices, wants 2"),
        tc(
            "All without every matching device",
            List.of(
                allocated(
                    claim(
                            "c",
                            request("r", "gpu")
                                .withAll()
                                .withSelectors(MODEL + " == \"H100\"")
                                .build())
                        .build(),
                    "node-a",
                    "r=node-a/part-0")),
            "(All) got [gpu.example.com/node-a/part-0] but [gpu.example.com/node-a/part-0, "
                + "gpu.example.com/node-a/part-1] match"),
        tc(
            "a request without devices",
            List.of(
                allocated(
                    claim("c", request("r", "gpu").build(), request("q", "gpu").build()).build(),
                    "node-a",
                    "r=node-a/gpu-0")),
            "request q got no devices"),
        tc(
            "devices for two subrequests of one firstAvailable request",
            List.of(
                allocated(
                    claim("c", firstAvailable("r", sub("x", "gpu", 1), sub("y", "gpu", 1))).build(),
                    "node-a",
                    "r/x=node-a/gpu-0",
                    "r/y=node-a/part-1")),
            "got devices for several subrequests"),
        tc(
            "result for a request the claim does not have",
            List.of(one("c", "node-a", "zz=node-a/gpu-0")),
            "the claim has no such request",
            "request r got no devices"),
        tc(
            "matchAttribute violated",
            List.of(
                allocated(
                    claim("c", request("r", "gpu").withCount(2).build())
                        .withConstraint(ScenarioGenerator.PCIE)
                        .build(),
                    "node-a",
                    "r=node-a/gpu-0",
                    "r=node-a/part-1")),
            "lacks the attribute"),
        tc(
            "matchAttribute with different values",
            List.of(
                allocated(
                    claim("c", request("r", "gpu").withCount(2).build())
                        .withConstraint(GPU + "/model")
                        .build(),
                    "node-a",
                    "r=node-a/gpu-0",
                    "r=node-a/part-1")),
            "matchAttribute gpu.example.com/model violated"),
        tc(
            "distinctAttribute violated",
            List.of(
                allocated(
                    claim("c", request("r", "gpu").withCount(2).build())
                        .withDistinct(GPU + "/model")
                        .build(),
                    "node-a",
                    "r=node-a/part-0",
                    "r=node-a/part-1")),
            "distinctAttribute gpu.example.com/model violated",
            "counter gpu.example.com/node-a/mem/memory exceeded: 100Gi consumed of 80Gi"),
        tc(
            "shared counter exceeded",
            List.of(one("c1", "node-a", "r=node-a/part-0"), one("c2", "node-a", "r=node-a/part-1")),
            "counter gpu.example.com/node-a/mem/memory exceeded"),
        tc(
            "valid: adminAccess takes a device in use, which stays free for others",
            List.of(
                admin("c1", true, true, "node-a", "r=node-a/gpu-1"),
                admin("c2", true, true, "node-a", "r=node-a/gpu-0"),
                one("c3", "node-a", "r=node-a/gpu-0"))),
        tc(
            "adminAccess missing from the result of a request that asks for it",
            List.of(admin("c", true, false, "node-a", "r=node-a/gpu-0")),
            "lacks adminAccess, which the request asks for"),
        tc(
            "adminAccess in the result of a request that does not ask for it",
            List.of(admin("c", false, true, "node-a", "r=node-a/gpu-1")),
            "has adminAccess, which the request does not ask for"),
        tc(
            "valid: binding conditions copied, the allocation bound to the node",
            List.of(bound("c", "node-b", true, "r=net/link-bc"))),
        tc(
            "binding conditions not copied into the result",
            List.of(bound("c", "node-b", false, "r=net/link-bc")),
            "has binding conditions [attached] / failure conditions [failed], the result [] / []"),
        tc(
            "a device that binds to a node, in an allocation without a node",
            List.of(bound("c", null, true, "r=net/link-bc")),
            "binds to a node, but the allocation names no node"),
        tc(
            "valid: a network device without binding conditions needs no node",
            List.of(bound("c", null, false, "r=net/link-plain"))),
        tc(
            "per-device node name of another node",
            List.of(one("c", "node-b", "r=pd/pd-a")),
            "is local to node node-a, the claim is for node node-b"),
        tc(
            "per-device node selector that the node does not match",
            List.of(one("c", "node-b", "r=pd/pd-sel")),
            "is not reachable from node node-b"),
        tc(
            "per-device node selector, but the allocation has no node selector",
            List.of(bound("c", null, false, "r=pd/pd-sel")),
            "is reachable from some nodes only, but the allocation has no node selector"),
        tc(
            "valid: per-device node selection, matching node and allNodes",
            List.of(
                one("c1", "node-a", "r=pd/pd-a"),
                one("c2", "node-a", "r=pd/pd-sel"),
                one("c3", "node-b", "r=pd/pd-all"))),
        tc(
            "valid: an admin's share does not count against the device's capacity",
            List.of(share("s1", "16Gi"), adminShare("s2", "16Gi"))),
        tc(
            "valid: All over per-device node selection, no node name, from a node that sees "
                + "only the allNodes device",
            List.of(allLinks(null, "r=pd/pd-all"))),
        tc(
            "All over per-device node selection that leaves out a device of the selected node",
            List.of(
                allLinks(AllocFixtures.labelSelector("zone", "a"), "r=pd/pd-all", "r=pd/pd-sel")),
            "(All) got [gpu.example.com/pd/pd-all, gpu.example.com/pd/pd-sel] but "
                + "[gpu.example.com/pd/pd-a, gpu.example.com/pd/pd-all, gpu.example.com/pd/pd-sel]"
                + " match"),
        tc(
            "consumable capacity exceeded",
            List.of(share("s1", "16Gi"), share("s2", "16Gi")),
            "device gpu.example.com/node-a/vgpu: capacity memory exceeded"));
  }

  @ParameterizedTest(name = "{0}")
  @MethodSource("cases")
  void reports(String name, List<ResourceClaim> claims, List<String> expected) {
    List<String> violations = CHECKER.check(claims, List.of());
    if (expected.isEmpty()) {
      assertThat(violations).isEmpty();
    } else {
      assertThat(violations).hasSize(expected.size());
      for (int i = 0; i < expected.size(); i++) {
        assertThat(violations.get(i)).contains(expected.get(i));
      }
    }
  }
}
