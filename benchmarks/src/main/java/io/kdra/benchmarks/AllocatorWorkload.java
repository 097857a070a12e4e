package io.kdra.benchmarks;

import io.fabric8.kubernetes.api.model.Node;
import io.fabric8.kubernetes.api.model.NodeBuilder;
import io.fabric8.kubernetes.api.model.Quantity;
import io.fabric8.kubernetes.api.model.resource.v1.Device;
import io.fabric8.kubernetes.api.model.resource.v1.DeviceAttribute;
import io.fabric8.kubernetes.api.model.resource.v1.DeviceCapacity;
import io.fabric8.kubernetes.api.model.resource.v1.DeviceClass;
import io.fabric8.kubernetes.api.model.resource.v1.DeviceClassBuilder;
import io.fabric8.kubernetes.api.model.resource.v1.DeviceRequest;
import io.fabric8.kubernetes.api.model.resource.v1.DeviceRequestBuilder;
import io.fabric8.kubernetes.api.model.resource.v1.ResourceClaim;
import io.fabric8.kubernetes.api.model.resource.v1.ResourceClaimBuilder;
import io.fabric8.kubernetes.api.model.resource.v1.ResourceSlice;
import io.fabric8.kubernetes.api.model.resource.v1.ResourceSliceBuilder;
import io.fabric8.kubernetes.api.model.resource.v1.ResourceSliceSpecBuilder;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;

/**
 * The allocator benchmark's cluster and claims, shared by {@link AllocatorBenchmark} (JMH, ours
 * only) and {@link UpstreamComparison} (ours against upstream's allocator, same objects):
 *
 * <ul>
 *   <li>{@code single-gpu}: nodes x 8 GPUs, claims of one GPU with a CEL memory selector ({@code >=
 *       40Gi}); nodes x 8 claims fill the cluster.
 *   <li>{@code pcie-4gpu}: 8-GPU nodes with two PCIe roots (4 GPUs each); claims of 4 GPUs with
 *       {@code matchAttribute} on {@code resource.kubernetes.io/pcieRoot} (GPUs alternate roots, so
 *       the search has to backtrack); nodes x 2 claims fill it.
 *   <li>{@code first-available}: {@code firstAvailable} of one A100 or else two L4s; every node has
 *       8 L4s and one A100 that an existing claim already holds, so the first choice fails on every
 *       node; nodes x 4 claims fill it.
 * </ul>
 *
 * @param nodes the nodes, in name order ({@code node-0000}, ...)
 * @param slices one slice (one pool) per node
 * @param deviceClass the one class, {@code gpu}: every device of the driver
 * @param existing claims already allocated before the first benchmark claim
 * @param claims the benchmark's claims, in the order they are placed, enough to fill the cluster
 */
record AllocatorWorkload(
    List<Node> nodes,
    List<ResourceSlice> slices,
    DeviceClass deviceClass,
    List<ResourceClaim> existing,
    List<ResourceClaim> claims) {

  static final String DRIVER = "gpu.example.com";
  static final String MEM_40 =
      "device.capacity[\"" + DRIVER + "\"].memory.compareTo(quantity(\"40Gi\")) >= 0";
  static final List<String> SCENARIOS = List.of("single-gpu", "pcie-4gpu", "first-available");

  static AllocatorWorkload of(String scenario, int nodeCount) {
    if (!SCENARIOS.contains(scenario)) {
      throw new IllegalArgumentException(
          "unknown scenario " + scenario + ", not one of " + SCENARIOS);
    }
    List<ResourceSlice> slices = new ArrayList<>();
    List<Node> nodes = new ArrayList<>();
    List<ResourceClaim> existing = new ArrayList<>();
    boolean firstAvailable = scenario.equals("first-available");
    for (int n = 0; n < nodeCount; n++) {
      String name = String.format("node-%04d", n);
      nodes.add(new NodeBuilder().withNewMetadata().withName(name).endMetadata().build());
      List<Device> devices = new ArrayList<>();
      for (int g = 0; g < 8; g++) {
        // 8 A100s per node, except in first-available, where the 8 are L4s
        devices.add(gpu("gpu-" + g, firstAvailable ? "L4" : "A100", "pci" + (g % 2)));
      }
      if (firstAvailable) {
        devices.add(gpu("a100", "A100", "pci0"));
        existing.add(allocated("pre-" + name, name, List.of("a100")));
      }
      slices.add(
          new ResourceSliceBuilder()
              .withNewMetadata()
              .withName(name + "-gpu")
              .endMetadata()
              .withSpec(
                  new ResourceSliceSpecBuilder()
                      .withDriver(DRIVER)
                      .withNodeName(name)
                      .withNewPool()
                      .withName(name)
                      .withGeneration(1L)
                      .withResourceSliceCount(1L)
                      .endPool()
                      .withDevices(devices)
                      .build())
              .build());
    }
    DeviceClass cls =
        new DeviceClassBuilder()
            .withNewMetadata()
            .withName("gpu")
            .endMetadata()
            .withNewSpec()
            .addNewSelector()
            .withNewCel()
            .withExpression("device.driver == \"" + DRIVER + "\"")
            .endCel()
            .endSelector()
            .endSpec()
            .build();
    int count =
        switch (scenario) {
          case "single-gpu" -> nodeCount * 8;
          case "pcie-4gpu" -> nodeCount * 2;
          default -> nodeCount * 4;
        };
    List<ResourceClaim> claims = new ArrayList<>();
    for (int i = 0; i < count; i++) {
      claims.add(claim(scenario, "c" + i));
    }
    return new AllocatorWorkload(nodes, slices, cls, existing, claims);
  }

  /** Claims per node that fill a node: 8 single GPUs, 2 of 4 GPUs, 4 pairs of L4s. */
  static int claimsPerNode(String scenario) {
    return switch (scenario) {
      case "single-gpu" -> 8;
      case "pcie-4gpu" -> 2;
      default -> 4;
    };
  }

  private static ResourceClaim claim(String scenario, String name) {
    ResourceClaimBuilder b =
        new ResourceClaimBuilder()
            .withNewMetadata()
            .withName(name)
            .withNamespace("bench")
            .endMetadata();
    return switch (scenario) {
      case "single-gpu" ->
          b.withNewSpec()
              .withNewDevices()
              .withRequests(
                  new DeviceRequestBuilder()
                      .withName("gpu")
                      .withNewExactly()
                      .withDeviceClassName("gpu")
                      .addNewSelector()
                      .withNewCel()
                      .withExpression(MEM_40)
                      .endCel()
                      .endSelector()
                      .endExactly()
                      .build())
              .endDevices()
              .endSpec()
              .build();
      case "pcie-4gpu" ->
          b.withNewSpec()
              .withNewDevices()
              .withRequests(
                  new DeviceRequestBuilder()
                      .withName("gpu")
                      .withNewExactly()
                      .withDeviceClassName("gpu")
                      .withAllocationMode("ExactCount")
                      .withCount(4L)
                      .endExactly()
                      .build())
              .addNewConstraint()
              .withMatchAttribute("resource.kubernetes.io/pcieRoot")
              .endConstraint()
              .endDevices()
              .endSpec()
              .build();
      default ->
          b.withNewSpec()
              .withNewDevices()
              .withRequests(firstAvailable())
              .endDevices()
              .endSpec()
              .build();
    };
  }

  private static DeviceRequest firstAvailable() {
    return new DeviceRequestBuilder()
        .withName("gpu")
        .addNewFirstAvailable()
        .withName("a100")
        .withDeviceClassName("gpu")
        .addNewSelector()
        .withNewCel()
        .withExpression("device.attributes[\"" + DRIVER + "\"].model == \"A100\"")
        .endCel()
        .endSelector()
        .endFirstAvailable()
        .addNewFirstAvailable()
        .withName("two-l4")
        .withDeviceClassName("gpu")
        .withAllocationMode("ExactCount")
        .withCount(2L)
        .addNewSelector()
        .withNewCel()
        .withExpression("device.attributes[\"" + DRIVER + "\"].model == \"L4\"")
        .endCel()
        .endSelector()
        .endFirstAvailable()
        .build();
  }

  private static Device gpu(String name, String model, String root) {
    DeviceAttribute m = new DeviceAttribute();
    m.setString(model);
    DeviceAttribute r = new DeviceAttribute();
    r.setString(root);
    DeviceCapacity mem = new DeviceCapacity();
    mem.setValue(new Quantity("40Gi"));
    Device d = new Device();
    d.setName(name);
    d.setAttributes(Map.of("model", m, "resource.kubernetes.io/pcieRoot", r));
    d.setCapacity(Map.of("memory", mem));
    return d;
  }

  /** An already-allocated claim holding these devices of the node's pool. */
  static ResourceClaim allocated(String name, String pool, List<String> devices) {
    ResourceClaimBuilder b =
        new ResourceClaimBuilder()
            .withNewMetadata()
            .withName(name)
            .withNamespace("bench")
            .endMetadata()
            .withNewSpec()
            .withNewDevices()
            .withRequests(
                new DeviceRequestBuilder()
                    .withName("gpu")
                    .withNewExactly()
                    .withDeviceClassName("gpu")
                    .withAllocationMode("ExactCount")
                    .withCount((long) devices.size())
                    .endExactly()
                    .build())
            .endDevices()
            .endSpec();
    var alloc = b.withNewStatus().withNewAllocation().withNewDevices();
    for (String d : devices) {
      alloc =
          alloc
              .addNewResult()
              .withRequest("gpu")
              .withDriver(DRIVER)
              .withPool(pool)
              .withDevice(d)
              .endResult();
    }
    return alloc.endDevices().endAllocation().endStatus().build();
  }
}
