package io.kdra.it.bench;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Named.named;

import io.fabric8.kubernetes.api.model.OwnerReferenceBuilder;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.resource.v1.AllocationResultBuilder;
import io.fabric8.kubernetes.api.model.resource.v1.ResourceClaim;
import io.fabric8.kubernetes.api.model.resource.v1.ResourceClaimBuilder;
import io.kdra.it.services.Dra;
import java.util.List;
import java.util.stream.Stream;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * When the warm burst is over: its pods and their claims gone, no device allocated; and which
 * claims the benchmark deletes itself (upstream's side runs no garbage collector).
 */
class WarmBurstTest {

  private static Pod pod(String name) {
    return Dra.podWithTemplate(BenchWorkload.NAMESPACE, name, "gpu");
  }

  private static ResourceClaim claim(String name, String ownerPod, boolean allocated) {
    ResourceClaimBuilder b =
        new ResourceClaimBuilder()
            .withNewMetadata()
            .withName(name)
            .withNamespace(BenchWorkload.NAMESPACE)
            .endMetadata();
    if (ownerPod != null) {
      b.editMetadata()
          .withOwnerReferences(
              new OwnerReferenceBuilder()
                  .withApiVersion("v1")
                  .withKind("Pod")
                  .withName(ownerPod)
                  .withUid(ownerPod + "-uid")
                  .withController(true)
                  .build())
          .endMetadata();
    }
    if (allocated) {
      b.withNewStatus().withAllocation(new AllocationResultBuilder().build()).endStatus();
    }
    return b.build();
  }

  static Stream<Arguments> states() {
    return Stream.of(
        Arguments.of(named("nothing left", List.of()), List.of(), null),
        Arguments.of(
            named("shared claims deallocated, the adversary's never allocated", List.of()),
            List.of(claim("shared-0", null, false), claim("adversary", null, false)),
            null),
        Arguments.of(
            named("a warm pod not gone yet", List.of(pod("warm-pod-00003"))),
            List.of(),
            "1 pods of the warm burst, 0 of their claims and 0 allocated claims left"),
        Arguments.of(
            named("its claim deallocated but not deleted (no garbage collector)", List.of()),
            List.of(claim("warm-pod-00001-gpu-x7k2p", "warm-pod-00001", false)),
            "0 pods of the warm burst, 1 of their claims and 0 allocated claims left"),
        Arguments.of(
            named("a shared claim still allocated", List.of()),
            List.of(claim("shared-0", null, true)),
            "0 pods of the warm burst, 0 of their claims and 1 allocated claims left"),
        Arguments.of(
            named("another pod's claim allocated: a device is not free", List.of(pod("pod-00000"))),
            List.of(claim("pod-00000-gpu-abcde", "pod-00000", true)),
            "0 pods of the warm burst, 0 of their claims and 1 allocated claims left"));
  }

  @ParameterizedTest(name = "{0}")
  @MethodSource("states")
  void settledOnceItsPodsAndClaimsAreGoneAndNoDeviceIsAllocated(
      List<Pod> pods, List<ResourceClaim> claims, String expected) {
    assertThat(WarmBurst.unsettled(pods, claims)).isEqualTo(expected);
  }

  @org.junit.jupiter.api.Test
  void theBenchmarkDeletesTheClaimsOfTheWarmPodsOnly() {
    List<ResourceClaim> claims =
        List.of(
            claim("warm-pod-00001-gpu-x7k2p", "warm-pod-00001", false),
            claim("warm-pod-00002-gpu-q9z8w", "warm-pod-00002", true),
            claim("pod-00001-gpu-abcde", "pod-00001", true),
            claim("shared-0", null, false));

    assertThat(WarmBurst.claimsOfWarmPods(claims))
        .containsExactly("warm-pod-00001-gpu-x7k2p", "warm-pod-00002-gpu-q9z8w");
  }
}
