package io.kdra.core.testing;

import static io.kdra.core.testing.AllocFixtures.claim;
import static io.kdra.core.testing.AllocFixtures.device;
import static io.kdra.core.testing.AllocFixtures.deviceClass;
import static io.kdra.core.testing.AllocFixtures.node;
import static io.kdra.core.testing.AllocFixtures.request;
import static io.kdra.core.testing.AllocFixtures.slice;

import io.fabric8.kubernetes.api.model.resource.v1.CapacityRequestPolicy;
import io.fabric8.kubernetes.api.model.resource.v1.Device;
import io.fabric8.kubernetes.api.model.resource.v1.DeviceRequestAllocationResult;
import io.fabric8.kubernetes.api.model.resource.v1.ResourceClaim;
import io.fabric8.kubernetes.api.model.resource.v1.ResourceSlice;
import java.util.ArrayList;
import java.util.List;

/**
 * The cluster the checker tests check against: classes, slices, nodes, one claim allocated before.
 */
final class CheckerFixtures {

  private CheckerFixtures() {}

  static final String GPU = AllocFixtures.DRIVER;
  static final String MODEL = "device.attributes[\"" + GPU + "\"].model";

  static final List<ResourceSlice> SLICES =
      List.of(
          slice(
                  "a",
                  "node-a",
                  device("gpu-0")
                      .withString("model", "A100")
                      .withString(ScenarioGenerator.PCIE, "p0")
                      .build(),
                  device("gpu-1")
                      .withString("model", "L4")
                      .withString(ScenarioGenerator.PCIE, "p1")
                      .build(),
                  device("gpu-2")
                      .withString("model", "A100")
                      .withString(ScenarioGenerator.PCIE, "p0")
                      .withTaint("maint", "true", "NoSchedule")
                      .build(),
                  device("part-0")
                      .withString("model", "H100")
                      .withConsumes("mem", "memory", "60Gi")
                      .build(),
                  device("part-1")
                      .withString("model", "H100")
                      .withConsumes("mem", "memory", "40Gi")
                      .build(),
                  device("vgpu")
                      .withString("model", "L4")
                      .withMultipleAllocations()
                      .withCapacity("memory", "24Gi", new CapacityRequestPolicy())
                      .build())
              .withPool("node-a", 1, 1)
              .withCounterSet("mem", "memory", "80Gi")
              .build(),
          slice("b", "node-b", device("gpu-0").withString("model", "A100").build())
              .withPool("node-b", 2, 1)
              .build(),
          slice("b-old", "node-b", device("gpu-old").withString("model", "A100").build())
              .withPool("node-b", 1, 1)
              .build(),
          slice("c", "node-c", device("gpu-0").withString("model", "A100").build())
              .withPool("node-c", 1, 2)
              .build(),
          slice(
                  "net",
                  null,
                  device("link-bc").withBindingConditions("attached").withBindsToNode().build(),
                  device("link-plain").build())
              .withPool("net", 1, 1)
              .withAllNodes()
              .build(),
          slice(
                  "pd",
                  null,
                  device("pd-a").withString("kind", "link").withNodeName("node-a").build(),
                  pdSelector(device("pd-sel").withString("kind", "link").build()),
                  device("pd-all").withString("kind", "link").withAllNodes().build())
              .withPool("pd", 1, 1)
              .withPerDeviceNodeSelection()
              .build());

  static Device pdSelector(Device d) {
    d.setNodeSelector(AllocFixtures.labelSelector("zone", "a"));
    return d;
  }

  static final AllocationChecker CHECKER =
      new AllocationChecker(
          List.of(
              deviceClass("gpu", "device.driver == \"" + GPU + "\""),
              deviceClass("a100", MODEL + " == \"A100\""),
              deviceClass("mig", "device.attributes[\"" + GPU + "\"].mig")),
          SLICES,
          List.of(node("node-a", "zone", "a"), node("node-b", "zone", "b"), node("node-c")),
          List.of(
              allocated(
                  claim("old", request("req", "gpu").build()).build(),
                  "node-a",
                  "req=node-a/gpu-1")));

  /** The claim as allocated on the node with {@code request=pool/device} results. */
  static ResourceClaim allocated(ResourceClaim c, String node, String... results) {
    AllocFixtures.ClaimWrapper w = new AllocFixtures.ClaimWrapper(c);
    List<String> ids = new ArrayList<>();
    for (String r : results) {
      ids.add(GPU + "/" + r.substring(r.indexOf('=') + 1));
    }
    w.withAllocated(ids.toArray(new String[0]));
    List<DeviceRequestAllocationResult> list =
        c.getStatus().getAllocation().getDevices().getResults();
    for (int i = 0; i < results.length; i++) {
      list.get(i).setRequest(results[i].substring(0, results[i].indexOf('=')));
    }
    c.getStatus().getAllocation().setNodeSelector(ScenarioGenerator.nodeName(node));
    return c;
  }

  static ResourceClaim one(String name, String node, String... results) {
    return allocated(claim(name, request("r", "gpu").build()).build(), node, results);
  }
}
