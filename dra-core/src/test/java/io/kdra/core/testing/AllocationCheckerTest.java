package io.kdra.core.testing;

import static io.kdra.core.testing.AllocFixtures.claim;
import static io.kdra.core.testing.AllocFixtures.device;
import static io.kdra.core.testing.AllocFixtures.deviceClass;
import static io.kdra.core.testing.AllocFixtures.firstAvailable;
import static io.kdra.core.testing.AllocFixtures.node;
import static io.kdra.core.testing.AllocFixtures.request;
import static io.kdra.core.testing.AllocFixtures.slice;
import static io.kdra.core.testing.AllocFixtures.sub;
import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.params.provider.Arguments.arguments;

import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.PodBuilder;
import io.fabric8.kubernetes.api.model.Quantity;
import io.fabric8.kubernetes.api.model.resource.v1.CapacityRequestPolicy;
import io.fabric8.kubernetes.api.model.resource.v1.DeviceRequestAllocationResult;
import io.fabric8.kubernetes.api.model.resource.v1.ResourceClaim;
import io.fabric8.kubernetes.api.model.resource.v1.ResourceSlice;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * The validity checker, one named case per rule: a valid allocation passes, and each kind of
 * invalid allocation is reported with the rule it breaks.
 */
class AllocationCheckerTest {

  static final String GPU = AllocFixtures.DRIVER;
  static final String MODEL = "device.attributes[\"" + GPU + "\"].model";

  static final List<ResourceSlice> SLICES = List.of(
      slice("a", "node-a",
          device("gpu-0").withString("model", "A100").withString(ScenarioGenerator.PCIE, "p0")
              .build(),
          device("gpu-1").withString("model", "L4").withString(ScenarioGenerator.PCIE, "p1")
              .build(),
          device("gpu-2").withString("model", "A100").withString(ScenarioGenerator.PCIE, "p0")
              .withTaint("maint", "true", "NoSchedule").build(),
          device("part-0").withString("model", "H100").withConsumes("mem", "memory", "60Gi")
              .build(),
          device("part-1").withString("model", "H100").withConsumes("mem", "memory", "40Gi")
              .build(),
          device("vgpu").withString("model", "L4").withMultipleAllocations()
              .withCapacity("memory", "24Gi", new CapacityRequestPolicy()).build())
          .withPool("node-a", 1, 1).withCounterSet("mem", "memory", "80Gi").build(),
      slice("b", "node-b", device("gpu-0").withString("model", "A100").build())
          .withPool("node-b", 2, 1).build(),
      slice("b-old", "node-b", device("gpu-old").withString("model", "A100").build())
          .withPool("node-b", 1, 1).build(),
      slice("c", "node-c", device("gpu-0").withString("model", "A100").build())
          .withPool("node-c", 1, 2).build());

  static final AllocationChecker CHECKER = new AllocationChecker(
      List.of(deviceClass("gpu", "device.driver == \"" + GPU + "\""),
          deviceClass("a100", MODEL + " == \"A100\""),
          deviceClass("mig", "device.attributes[\"" + GPU + "\"].mig")),
      SLICES, List.of(node("node-a"), node("node-b"), node("node-c")),
      List.of(allocated(claim("old", request("req", "gpu").build()).build(), "node-a",
          "req=node-a/gpu-1")));

  /** The claim as allocated on the node with {@code request=pool/device} results. */
  static ResourceClaim allocated(ResourceClaim c, String node, String... results) {
    AllocFixtures.ClaimWrapper w = new AllocFixtures.ClaimWrapper(c);
    List<String> ids = new ArrayList<>();
    for (String r : results) {
      ids.add(GPU + "/" + r.substring(r.indexOf('=') + 1));
    }
    w.withAllocated(ids.toArray(new String[0]));
    List<DeviceRequestAllocationResult> list = c.getStatus().getAllocation().getDevices()
        .getResults();
    for (int i = 0; i < results.length; i++) {
      list.get(i).setRequest(results[i].substring(0, results[i].indexOf('=')));
    }
    c.getStatus().getAllocation().setNodeSelector(ScenarioGenerator.nodeName(node));
    return c;
  }

  static ResourceClaim one(String name, String node, String... results) {
    return allocated(claim(name, request("r", "gpu").build()).build(), node, results);
  }

  static ResourceClaim share(String name, String memory) {
    ResourceClaim c = one(name, "node-a", "r=node-a/vgpu");
    DeviceRequestAllocationResult r = c.getStatus().getAllocation().getDevices().getResults()
        .get(0);
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
        tc("valid: two claims, two devices, counters within capacity",
            List.of(one("c1", "node-a", "r=node-a/part-1"),
                one("c2", "node-a", "r=node-a/gpu-0"))),
        tc("valid: shares of a device within its capacity",
            List.of(share("s1", "12Gi"), share("s2", "12Gi"))),
        tc("device does not exist", List.of(one("c", "node-a", "r=node-a/gpu-9")),
            "default/c: request r: device gpu.example.com/node-a/gpu-9 does not exist",
            "default/c: request r got no devices"),
        tc("device of an older pool generation",
            List.of(one("c", "node-b", "r=node-b/gpu-old")), "does not exist in the newest",
            "request r got no devices"),
        tc("device of an incomplete pool", List.of(one("c", "node-c", "r=node-c/gpu-0")),
            "is in an incomplete pool"),
        tc("device allocated before the run", List.of(one("c", "node-a", "r=node-a/gpu-1")),
            "is already allocated to default/old (allocated before)"),
        tc("device taken twice in the run",
            List.of(one("c1", "node-a", "r=node-a/gpu-0"), one("c2", "node-a", "r=node-a/gpu-0")),
            "default/c2: request r: device gpu.example.com/node-a/gpu-0 is already allocated to "
                + "default/c1"),
        tc("device local to another node", List.of(one("c", "node-b", "r=node-a/gpu-0")),
            "is local to node node-a, the claim is for node node-b"),
        tc("class selector not matched",
            List.of(allocated(claim("c", request("r", "a100").build()).build(), "node-a",
                "r=node-a/part-0")),
            "does not match selector " + MODEL + " == \"A100\""),
        tc("request selector not matched",
            List.of(allocated(claim("c", request("r", "gpu")
                .withSelectors(MODEL + " == \"L4\"").build()).build(), "node-a",
                "r=node-a/gpu-0")),
            "does not match selector " + MODEL + " == \"L4\""),
        tc("selector fails to evaluate (missing attribute)",
            List.of(allocated(claim("c", request("r", "mig").build()).build(), "node-a",
                "r=node-a/gpu-0")),
            "fails selector"),
        tc("untolerated taint", List.of(one("c", "node-a", "r=node-a/gpu-2")),
            "has taint maint=true:NoSchedule"),
        tc("too few devices for the count",
            List.of(allocated(claim("c", request("r", "gpu").withCount(2).build()).build(),
                "node-a", "r=node-a/gpu-0")),
            "request r got 1 devices, wants 2"),
        tc("All without every matching device",
            List.of(allocated(claim("c", request("r", "gpu").withAll()
                .withSelectors(MODEL + " == \"H100\"").build()).build(),
                "node-a", "r=node-a/part-0")),
            "(All) got [gpu.example.com/node-a/part-0] but [gpu.example.com/node-a/part-0, "
                + "gpu.example.com/node-a/part-1] match"),
        tc("a request without devices",
            List.of(allocated(claim("c", request("r", "gpu").build(),
                request("q", "gpu").build()).build(), "node-a", "r=node-a/gpu-0")),
            "request q got no devices"),
        tc("devices for two subrequests of one firstAvailable request",
            List.of(allocated(claim("c", firstAvailable("r", sub("x", "gpu", 1),
                sub("y", "gpu", 1))).build(), "node-a", "r/x=node-a/gpu-0", "r/y=node-a/part-1")),
            "got devices for several subrequests"),
        tc("result for a request the claim does not have",
            List.of(one("c", "node-a", "zz=node-a/gpu-0")), "the claim has no such request",
            "request r got no devices"),
        tc("matchAttribute violated",
            List.of(allocated(claim("c", request("r", "gpu").withCount(2).build())
                .withConstraint(ScenarioGenerator.PCIE).build(), "node-a",
                "r=node-a/gpu-0", "r=node-a/part-1")),
            "lacks the attribute"),
        tc("matchAttribute with different values",
            List.of(allocated(claim("c", request("r", "gpu").withCount(2).build())
                .withConstraint(GPU + "/model").build(), "node-a",
                "r=node-a/gpu-0", "r=node-a/part-1")),
            "matchAttribute gpu.example.com/model violated"),
        tc("distinctAttribute violated",
            List.of(allocated(claim("c", request("r", "gpu").withCount(2).build())
                .withDistinct(GPU + "/model").build(), "node-a",
                "r=node-a/part-0", "r=node-a/part-1")),
            "distinctAttribute gpu.example.com/model violated",
            "counter gpu.example.com/node-a/mem/memory exceeded: 100Gi consumed of 80Gi"),
        tc("shared counter exceeded",
            List.of(one("c1", "node-a", "r=node-a/part-0"), one("c2", "node-a", "r=node-a/part-1")),
            "counter gpu.example.com/node-a/mem/memory exceeded"),
        tc("consumable capacity exceeded", List.of(share("s1", "16Gi"), share("s2", "16Gi")),
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

  @Test
  void claimsOfOnePodOnDifferentNodes() {
    Pod pod = new PodBuilder().withNewMetadata().withName("p").withNamespace("default")
        .endMetadata().withNewSpec()
        .addNewResourceClaim().withName("x").withResourceClaimName("c1").endResourceClaim()
        .addNewResourceClaim().withName("y").withResourceClaimName("c2").endResourceClaim()
        .endSpec().build();
    assertThat(CHECKER.check(List.of(one("c1", "node-a", "r=node-a/gpu-0"),
        one("c2", "node-b", "r=node-b/gpu-0")), List.of(pod)))
        .containsExactly("pod p: claims on different nodes [node-a, node-b]");
  }
}
