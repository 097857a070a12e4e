package io.kdra.computeclassbridge.mapping;

import static io.kdra.computeclassbridge.TestData.a100OrTwoL4;
import static io.kdra.computeclassbridge.TestData.defaultCatalog;
import static io.kdra.computeclassbridge.TestData.device;
import static io.kdra.computeclassbridge.TestData.shippedCatalog;
import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Named.named;

import io.fabric8.kubernetes.api.model.Node;
import io.fabric8.kubernetes.api.model.NodeBuilder;
import io.fabric8.kubernetes.api.model.resource.v1.AllocationResult;
import io.fabric8.kubernetes.api.model.resource.v1.AllocationResultBuilder;
import io.fabric8.kubernetes.api.model.resource.v1.Device;
import io.fabric8.kubernetes.api.model.resource.v1.DeviceRequestAllocationResult;
import io.fabric8.kubernetes.api.model.resource.v1.ResourceClaim;
import io.fabric8.kubernetes.api.model.resource.v1.ResourceClaimBuilder;
import io.fabric8.kubernetes.api.model.resource.v1.ResourceClaimTemplate;
import io.fabric8.kubernetes.api.model.resource.v1.ResourceSlice;
import io.fabric8.kubernetes.api.model.resource.v1.ResourceSliceBuilder;
import io.kdra.computeclassbridge.catalog.AcceleratorCatalog;
import io.kdra.core.alloc.AllocatedState;
import io.kdra.core.alloc.AllocationSnapshot;
import io.kdra.core.alloc.Allocator;
import io.kdra.core.alloc.AllocatorFeatures;
import io.kdra.core.alloc.AllocatorOptions;
import io.kdra.core.alloc.ClaimOutcome;
import io.kdra.core.alloc.Explanation;
import io.kdra.core.alloc.InMemoryDeviceClassLister;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * The seed's example end to end through dra-core: ComputeClass [A100-40GB x1, L4 x2] -> the
 * bridge's DeviceClasses and template -> a claim made from the template -> dra-core's allocator on
 * nodes with different GPUs, published as our device-driver publishes them.
 */
class SeedExampleThroughDraCoreTest {

  private static final String A100 = "NVIDIA A100-SXM4-40GB";
  private static final String L4 = "NVIDIA L4";
  private static final String T4 = "Tesla T4";

  private static final Mapping MAPPING =
      new ComputeClassMapper(MapperSettings.DEFAULTS)
          .map(a100OrTwoL4("a100-or-l4"), defaultCatalog(), List.of("team-a"));

  static Stream<Arguments> nodes() {
    return Stream.of(
        Arguments.of(
            named("a node with a free A100", node("node-a100", A100)),
            AllocatedState.empty(),
            "accelerator/nvidia-tesla-a100-x1",
            List.of("gpu-0")),
        Arguments.of(
            named(
                "a node with an A100 and two L4s prefers the A100",
                node("node-mixed", A100, L4, L4)),
            AllocatedState.empty(),
            "accelerator/nvidia-tesla-a100-x1",
            List.of("gpu-0")),
        Arguments.of(
            named("a node with only L4s gives two L4s", node("node-l4", L4, L4, L4)),
            AllocatedState.empty(),
            "accelerator/nvidia-l4-x2",
            List.of("gpu-0", "gpu-1")),
        Arguments.of(
            named(
                "a node whose A100 is taken falls back to two L4s",
                node("node-mixed", A100, L4, L4)),
            AllocatedState.empty().plus(holding("node-mixed", "gpu-0")),
            "accelerator/nvidia-l4-x2",
            List.of("gpu-1", "gpu-2")));
  }

  @ParameterizedTest(name = "{0}")
  @MethodSource("nodes")
  void theClaimGetsTheFirstAlternativeTheNodeHas(
      NodeWithSlice node,
      AllocatedState allocated,
      String expectedRequest,
      List<String> expectedDevices) {
    ClaimOutcome outcome = allocate(defaultCatalog(), node, allocated);
    assertThat(outcome).isInstanceOf(ClaimOutcome.Allocated.class);
    List<DeviceRequestAllocationResult> results =
        ((ClaimOutcome.Allocated) outcome).result().getDevices().getResults();
    assertThat(results)
        .extracting(DeviceRequestAllocationResult::getRequest)
        .containsOnly(expectedRequest);
    assertThat(results)
        .extracting(DeviceRequestAllocationResult::getDriver)
        .containsOnly("gpu.kdra.io");
    assertThat(results)
        .extracting(DeviceRequestAllocationResult::getDevice)
        .containsExactlyElementsOf(expectedDevices);
  }

  @Test
  void withNeitherTheClaimIsUnallocatableAndTheExplanationNamesBothAlternatives() {
    ClaimOutcome outcome =
        allocate(defaultCatalog(), node("node-t4", T4, T4, L4), AllocatedState.empty());
    assertThat(outcome).isInstanceOf(ClaimOutcome.NotAllocated.class);
    Explanation why = ((ClaimOutcome.NotAllocated) outcome).explanation();
    assertThat(why.kind()).isEqualTo(Explanation.Kind.UNSATISFIABLE);
    assertThat(why.summary())
        .contains(
            "request \"accelerator/nvidia-tesla-a100-x1\": 0 devices in class "
                + "\"nvidia-tesla-a100.computeclass.kdra.io\"")
        .contains(
            "request \"accelerator/nvidia-l4-x2\": 1 device in class "
                + "\"nvidia-l4.computeclass.kdra.io\"")
        .contains("2 needed")
        .contains("on node node-t4");
  }

  @Test
  void gkesNvidiaDriverIsMatchedOnlyWhenItsProfileIsEnabled() {
    NodeWithSlice gke = driverNode("node-gke", "gpu.nvidia.com", A100);
    assertThat(allocate(defaultCatalog(), gke, AllocatedState.empty()))
        .isInstanceOf(ClaimOutcome.NotAllocated.class);
    AcceleratorCatalog withGke = shippedCatalog().using(List.of("kdra-gpu", "gke-gpu"), Map.of());
    assertThat(allocate(withGke, gke, AllocatedState.empty()))
        .isInstanceOf(ClaimOutcome.Allocated.class);
  }

  // --- fixtures ---

  record NodeWithSlice(Node node, ResourceSlice slice) {
    @Override
    public String toString() {
      return node.getMetadata().getName();
    }
  }

  private static ClaimOutcome allocate(
      AcceleratorCatalog catalog, NodeWithSlice node, AllocatedState allocated) {
    Mapping mapping =
        new ComputeClassMapper(MapperSettings.DEFAULTS)
            .map(a100OrTwoL4("a100-or-l4"), catalog, List.of("team-a"));
    ResourceClaimTemplate template = mapping.templates().get(0);
    ResourceClaim claim =
        new ResourceClaimBuilder()
            .withNewMetadata()
            .withNamespace("team-a")
            .withName("pod-0-gpus-x7k2q")
            .withLabels(template.getSpec().getMetadata().getLabels())
            .endMetadata()
            .withSpec(template.getSpec().getSpec())
            .build();
    AllocationSnapshot snapshot =
        AllocationSnapshot.of(
            List.of(node.slice()),
            new InMemoryDeviceClassLister(mapping.deviceClasses()),
            allocated);
    AllocatorOptions options =
        AllocatorOptions.defaults(
            AllocatorFeatures.defaults(), () -> "00000000-0000-4000-8000-000000000000");
    List<ClaimOutcome> outcomes =
        new Allocator(snapshot, options).allocate(node.node(), List.of(claim));
    assertThat(outcomes).hasSize(1);
    return outcomes.get(0);
  }

  private static NodeWithSlice node(String name, String... productNames) {
    return driverNode(name, "gpu.kdra.io", productNames);
  }

  /** A node and the slice the device-driver would publish for its GPUs. */
  private static NodeWithSlice driverNode(String name, String driver, String... productNames) {
    List<Device> devices = new ArrayList<>();
    for (int i = 0; i < productNames.length; i++) {
      devices.add(
          device(
              "gpu-" + i, Map.of("productName", productNames[i], "uuid", "GPU-" + name + "-" + i)));
    }
    ResourceSlice slice =
        new ResourceSliceBuilder()
            .withNewMetadata()
            .withName(name + "-" + driver)
            .endMetadata()
            .withNewSpec()
            .withDriver(driver)
            .withNodeName(name)
            .withNewPool()
            .withName(name)
            .withGeneration(1L)
            .withResourceSliceCount(1L)
            .endPool()
            .withDevices(devices)
            .endSpec()
            .build();
    Node node =
        new NodeBuilder()
            .withNewMetadata()
            .withName(name)
            .addToLabels("kubernetes.io/hostname", name)
            .endMetadata()
            .build();
    return new NodeWithSlice(node, slice);
  }

  /** An allocation held by another claim. */
  private static AllocationResult holding(String node, String device) {
    return new AllocationResultBuilder()
        .withNewDevices()
        .addNewResult()
        .withRequest("other")
        .withDriver("gpu.kdra.io")
        .withPool(node)
        .withDevice(device)
        .endResult()
        .endDevices()
        .build();
  }
}
