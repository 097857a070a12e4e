package io.kdra.core.testing;

import static io.kdra.core.testing.CheckerFixtures.CHECKER;
import static io.kdra.core.testing.CheckerFixtures.one;
import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.params.provider.Arguments.arguments;

import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.PodBuilder;
import io.fabric8.kubernetes.api.model.resource.v1.ResourceClaim;
import java.util.List;
import java.util.Map;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * The checker's pod rules: a pod bound where its node name, node selector and affinity allow, the
 * claims of one pod on one node, and claims allocated before the run restricting the pods that use
 * them. The claim rules are {@link AllocationCheckerTest}'s.
 */
class PodPlacementCheckTest {

  static Pod pod(java.util.function.Consumer<io.fabric8.kubernetes.api.model.PodSpec> spec) {
    Pod pod =
        new PodBuilder()
            .withNewMetadata()
            .withName("p")
            .withNamespace("default")
            .endMetadata()
            .withNewSpec()
            .addNewResourceClaim()
            .withName("x")
            .withResourceClaimName("c")
            .endResourceClaim()
            .endSpec()
            .build();
    spec.accept(pod.getSpec());
    return pod;
  }

  static io.fabric8.kubernetes.api.model.Affinity hostAffinity(String operator, String host) {
    return new io.fabric8.kubernetes.api.model.AffinityBuilder()
        .withNewNodeAffinity()
        .withNewRequiredDuringSchedulingIgnoredDuringExecution()
        .addNewNodeSelectorTerm()
        .addNewMatchExpression()
        .withKey("zone")
        .withOperator(operator)
        .withValues(host)
        .endMatchExpression()
        .endNodeSelectorTerm()
        .endRequiredDuringSchedulingIgnoredDuringExecution()
        .endNodeAffinity()
        .build();
  }

  static Stream<Arguments> placements() {
    return Stream.of(
        arguments("valid: no constraint", pod(s -> {}), null),
        arguments("valid: node name", pod(s -> s.setNodeName("node-a")), null),
        arguments(
            "valid: node selector and affinity",
            pod(
                s -> {
                  s.setNodeSelector(Map.of("zone", "a"));
                  s.setAffinity(hostAffinity("NotIn", "b"));
                }),
            null),
        arguments(
            "another node name",
            pod(s -> s.setNodeName("node-b")),
            "pod p: node node-a is not the pod's node name node-b"),
        arguments(
            "node selector not matched",
            pod(s -> s.setNodeSelector(Map.of("zone", "b"))),
            "pod p: node node-a does not match the pod's node selector zone=b"),
        arguments(
            "required affinity not matched",
            pod(s -> s.setAffinity(hostAffinity("In", "b"))),
            "pod p: node node-a does not match the pod's required " + "node affinity"));
  }

  @ParameterizedTest(name = "{0}")
  @MethodSource("placements")
  void podPlacement(String name, Pod pod, String expected) {
    List<String> violations =
        CHECKER.check(List.of(one("c", "node-a", "r=node-a/gpu-0")), List.of(pod));
    if (expected == null) {
      assertThat(violations).isEmpty();
    } else {
      assertThat(violations).containsExactly(expected);
    }
  }

  @Test
  void claimsOfOnePodOnDifferentNodes() {
    Pod pod =
        new PodBuilder()
            .withNewMetadata()
            .withName("p")
            .withNamespace("default")
            .endMetadata()
            .withNewSpec()
            .addNewResourceClaim()
            .withName("x")
            .withResourceClaimName("c1")
            .endResourceClaim()
            .addNewResourceClaim()
            .withName("y")
            .withResourceClaimName("c2")
            .endResourceClaim()
            .endSpec()
            .build();
    assertThat(
            CHECKER.check(
                List.of(
                    one("c1", "node-a", "r=node-a/gpu-0"), one("c2", "node-b", "r=node-b/gpu-0")),
                List.of(pod)))
        .containsExactly("pod p: claims on different nodes [node-a, node-b]");
  }

  static Pod podWith(
      String name,
      java.util.function.Consumer<io.fabric8.kubernetes.api.model.PodSpec> spec,
      String... claims) {
    PodBuilder b =
        new PodBuilder()
            .withNewMetadata()
            .withName(name)
            .withNamespace("default")
            .endMetadata()
            .withNewSpec()
            .endSpec();
    for (String c : claims) {
      b.editSpec()
          .addNewResourceClaim()
          .withName("e-" + c)
          .withResourceClaimName(c)
          .endResourceClaim()
          .endSpec();
    }
    Pod pod = b.build();
    spec.accept(pod.getSpec());
    return pod;
  }

  /** Claims allocated before the run ("old", on node-a) or for another pod restrict a pod. */
  static Stream<Arguments> allocatedClaimsOfPods() {
    return Stream.of(
        arguments(
            "valid: a new claim beside one allocated before, on its node",
            List.of(one("c", "node-a", "r=node-a/gpu-0")),
            List.of(podWith("p", s -> {}, "old", "c")),
            List.of()),
        arguments(
            "a new claim on another node than one allocated before",
            List.of(one("c", "node-b", "r=node-b/gpu-0")),
            List.of(podWith("p", s -> {}, "old", "c")),
            List.of("pod p: claims on different nodes [node-a, node-b]")),
        arguments(
            "a claim allocated before pins the pod outside its node name",
            List.of(one("c", "node-a", "r=node-a/gpu-0")),
            List.of(podWith("p", s -> s.setNodeName("node-b"), "old", "c")),
            List.of("pod p: node node-a is not the pod's node name node-b")),
        arguments(
            "valid: a shared claim, allocated with the first pod; the second pod's own "
                + "claim is not allocated",
            List.of(one("c", "node-a", "r=node-a/gpu-0")),
            List.of(podWith("p1", s -> {}, "c"), podWith("p2", s -> {}, "c", "d")),
            List.of()),
        arguments(
            "a shared claim on node-a, the second pod's own claim on node-b",
            List.of(one("c", "node-a", "r=node-a/gpu-0"), one("d", "node-b", "r=node-b/gpu-0")),
            List.of(podWith("p1", s -> {}, "c"), podWith("p2", s -> {}, "c", "d")),
            List.of("pod p2: claims on different nodes [node-a, node-b]")),
        arguments(
            "valid: a shared claim allocated for the second pod, which can run there",
            List.of(one("c", "node-a", "r=node-a/gpu-0")),
            List.of(podWith("p1", s -> s.setNodeName("node-b"), "c"), podWith("p2", s -> {}, "c")),
            List.of()),
        arguments(
            "one claim of a pod allocated, the other not",
            List.of(one("c", "node-a", "r=node-a/gpu-0")),
            List.of(podWith("p", s -> {}, "c", "d")),
            List.of("pod p: claim default/d is not allocated, but others of the pod were")),
        arguments(
            "a claim allocated before is allocated again",
            List.of(one("old", "node-a", "r=node-a/gpu-0")),
            List.of(),
            List.of("default/old: allocated before the run, but its allocation changed")));
  }

  @ParameterizedTest(name = "{0}")
  @MethodSource("allocatedClaimsOfPods")
  void allocatedClaimsRestrictPods(
      String name, List<ResourceClaim> claims, List<Pod> pods, List<String> expected) {
    assertThat(CHECKER.check(claims, pods)).containsExactlyElementsOf(expected);
  }
}
