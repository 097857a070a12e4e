package io.kdra.core.alloc;

import static io.kdra.core.alloc.AllocatorCases.ANY_GPU;
import static io.kdra.core.testing.AllocFixtures.claim;
import static io.kdra.core.testing.AllocFixtures.device;
import static io.kdra.core.testing.AllocFixtures.deviceClass;
import static io.kdra.core.testing.AllocFixtures.node;
import static io.kdra.core.testing.AllocFixtures.request;
import static io.kdra.core.testing.AllocFixtures.slice;
import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Named.named;
import static org.junit.jupiter.params.provider.Arguments.arguments;

import io.fabric8.kubernetes.api.model.Node;
import io.fabric8.kubernetes.api.model.resource.v1.Device;
import io.fabric8.kubernetes.api.model.resource.v1.DeviceRequestAllocationResult;
import io.fabric8.kubernetes.api.model.resource.v1.ResourceClaim;
import io.fabric8.kubernetes.api.model.resource.v1.ResourceSlice;
import io.kdra.core.model.NewerFields;
import io.kdra.core.testing.Scenario;
import java.util.ArrayList;
import java.util.List;
import java.util.stream.Stream;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * A slice's {@code skipNodeOperations} (DRAOptionalNodeOperations, alpha in 1.37), decided as
 * upstream 1.37.2 decides it: the experimental allocator's {@code allocateDevice} refuses such a
 * device unless the gate is on and the node declares {@code DRAOptionalNodeOperations} in {@code
 * status.declaredFeatures}, and copies the slice's list into the device's result; the incubating
 * allocator (every alpha gate off) does not read the field. The first rows are the cases of
 * upstream's allocator_testing.go ("optional-node-operations*").
 */
class OptionalNodeOperationsTest {

  static final AllocatorFeatures ON = AllocatorFeatures.defaults().withOptionalNodeOperations(true);
  static final AllocatorFeatures OTHER_ALPHA_ON =
      AllocatorFeatures.defaults().withDerivedAttributes(true);
  static final AllocatorFeatures DEFAULTS = AllocatorFeatures.defaults();

  static Node declaring() {
    Node n = node("node-a");
    NewerFields.setDeclaredFeatures(n, List.of("DRAOptionalNodeOperations"));
    return n;
  }

  static Node plain() {
    return node("node-a");
  }

  /** A slice "skipping" of node-a's pool with devices, and its operations to skip. */
  static ResourceSlice skipping(List<String> operations, String... devices) {
    Device[] d = new Device[devices.length];
    for (int i = 0; i < devices.length; i++) {
      d[i] = device(devices[i]).build();
    }
    ResourceSlice s = slice("skipping", "node-a", d).build();
    NewerFields.setSkipNodeOperations(s.getSpec(), operations);
    return s;
  }

  static ResourceSlice inPoolOfTwo(ResourceSlice s) {
    s.getSpec().getPool().setResourceSliceCount(2L);
    return s;
  }

  static ResourceClaim one() {
    return claim("c", request("r0", "gpu").build()).build();
  }

  static ResourceClaim all() {
    return claim("c", request("r0", "gpu").withAll().build()).build();
  }

  /**
   * Columns: features, node, slices, claim, expected ({@code r=driver/pool/device[skip...]} per
   * result, {@code !} when not allocated).
   */
  static Stream<Arguments> cases() {
    List<String> every = List.of("*");
    List<String> both = List.of("NodePrepareResources", "NodeUnprepareResources");
    return Stream.of(
        arguments(
            named("gate on, node declares it: allocated, the list copied", ON),
            declaring(),
            List.of(skipping(every, "gpu-0")),
            one(),
            "r0=gpu.example.com/node-a/gpu-0[*]"),
        arguments(
            named("gate on, node does not declare it: not allocated", ON),
            plain(),
            List.of(skipping(every, "gpu-0")),
            one(),
            "!"),
        arguments(
            named("gate on, the list copied as the slice has it", ON),
            declaring(),
            List.of(skipping(both, "gpu-0")),
            one(),
            "r0=gpu.example.com/node-a/gpu-0[NodePrepareResources, NodeUnprepareResources]"),
        arguments(
            named("gate on, a slice without the field: no list, on any node", ON),
            plain(),
            List.of(slice("plain", "node-a", device("gpu-0").build()).build()),
            one(),
            "r0=gpu.example.com/node-a/gpu-0"),
        arguments(
            named("gate off, another alpha gate on (experimental): not allocated", OTHER_ALPHA_ON),
            declaring(),
            List.of(skipping(every, "gpu-0")),
            one(),
            "!"),
        arguments(
            named("gate off, no alpha gate (incubating): allocated, the list not copied", DEFAULTS),
            plain(),
            List.of(skipping(every, "gpu-0")),
            one(),
            "r0=gpu.example.com/node-a/gpu-0"),
        arguments(
            named("refused devices are passed over for others", ON),
            plain(),
            List.of(
                inPoolOfTwo(skipping(every, "gpu-0")),
                slice("z-plain", "node-a", device("gpu-1").build())
                    .withPool("node-a", 0, 2)
                    .build()),
            one(),
            "r0=gpu.example.com/node-a/gpu-1"),
        arguments(
            named("All: a refused device fails the request, it is not left out", ON),
            plain(),
            List.of(
                inPoolOfTwo(skipping(every, "gpu-0")),
                slice("plain", "node-a", device("gpu-1").build()).withPool("node-a", 0, 2).build()),
            all(),
            "!"));
  }

  @ParameterizedTest(name = "{0}")
  @MethodSource("cases")
  void decidesAsUpstream(
      AllocatorFeatures features,
      Node node,
      List<ResourceSlice> slices,
      ResourceClaim claim,
      String expected) {
    Scenario s =
        Scenario.of(slices.toArray(new ResourceSlice[0]))
            .withClasses(deviceClass("gpu", ANY_GPU))
            .withFeatures(features);
    ClaimOutcome outcome = s.allocate(node, claim).get(0);
    assertThat(brief(outcome)).isEqualTo(expected);
  }

  /** Columns: features, node, the reason the explanation gives. */
  static Stream<Arguments> refusals() {
    return Stream.of(
        arguments(
            named("gate on", ON),
            plain(),
            "1 skip node operations, which node node-a does not declare"),
        arguments(
            named("gate off", OTHER_ALPHA_ON),
            declaring(),
            "1 skip node operations, which needs DRAOptionalNodeOperations on"));
  }

  @ParameterizedTest(name = "{0}")
  @MethodSource("refusals")
  void theExplanationSaysWhyADeviceWasRefused(
      AllocatorFeatures features, Node node, String reason) {
    Scenario s =
        Scenario.of(skipping(List.of("*"), "gpu-0"))
            .withClasses(deviceClass("gpu", ANY_GPU))
            .withFeatures(features);
    ClaimOutcome outcome = s.allocate(node, one()).get(0);
    assertThat(((ClaimOutcome.NotAllocated) outcome).explanation().summary())
        .isEqualTo(
            "request \"r0\": 1 device in class \"gpu\", 0 free (" + reason + "); on node node-a");
  }

  static String brief(ClaimOutcome o) {
    if (!(o instanceof ClaimOutcome.Allocated a)) {
      return "!";
    }
    List<String> out = new ArrayList<>();
    for (DeviceRequestAllocationResult r : a.result().getDevices().getResults()) {
      List<String> skip = NewerFields.skipNodeOperations(r);
      out.add(
          r.getRequest()
              + "="
              + r.getDriver()
              + "/"
              + r.getPool()
              + "/"
              + r.getDevice()
              + (skip.isEmpty() ? "" : skip.toString()));
    }
    return String.join(", ", out);
  }
}
