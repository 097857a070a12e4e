package io.kdra.kubectl;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * The claim-controller's answer for each pod of the test cluster: the message is the one its
 * PodScheduled condition carries for the same state (node filter summary, then the allocator's
 * explanation per claim; missing claims as kube-scheduler words them).
 */
class PodWhyTest {

  private final ClusterState cluster = Fixture.cluster();

  static Stream<Arguments> pods() {
    return Stream.of(
        Arguments.of("trainer", PodWhy.State.BOUND, "node-b", ""),
        Arguments.of(
            "too-big",
            PodWhy.State.UNSCHEDULABLE,
            null,
            "2/3 nodes are available: 1 node(s) were not ready. claim too-big-gpu-x1: request "
                + "\"gpu\": 0 devices in class \"gpu-80gi\", 0 free"),
        Arguments.of(
            "wants-tpu",
            PodWhy.State.UNSCHEDULABLE,
            null,
            "2/3 nodes are available: 1 node(s) were not ready. claim no-class: request "
                + "\"tpu\": device class tpu not found"),
        Arguments.of(
            "names-absent-claim",
            PodWhy.State.UNSCHEDULABLE,
            null,
            "pod claim entry gpu: ResourceClaim absent does not exist"));
  }

  @ParameterizedTest(name = "{0}")
  @MethodSource("pods")
  void answersAsTheClaimControllerDoes(
      String pod, PodWhy.State state, String node, String message) {
    PodWhy.Answer a = explain(pod);
    assertThat(a.state()).isEqualTo(state);
    assertThat(a.node()).isEqualTo(node);
    assertThat(a.message()).isEqualTo(message);
  }

  @Test
  void perNodeTriedTheFilterOrTheAllocatorOnThatNode() {
    assertThat(explain("too-big").nodes())
        .containsExactly(
            new PodWhy.NodeRow(
                "node-a",
                "claim too-big-gpu-x1: request \"gpu\": 0 devices in class "
                    + "\"gpu-80gi\", 0 free; on node node-a"),
            new PodWhy.NodeRow(
                "node-b",
                "claim too-big-gpu-x1: request \"gpu\": 0 devices in class "
                    + "\"gpu-80gi\", 0 free; on node node-b"),
            new PodWhy.NodeRow("node-c", "node(s) were not ready"));
  }

  @Test
  void perRequestTheAllocatorsCounts() {
    assertThat(explain("too-big").requests())
        .singleElement()
        .satisfies(
            r -> {
              assertThat(r.claim()).isEqualTo("too-big-gpu-x1");
              assertThat(r.report().request()).isEqualTo("gpu");
              assertThat(r.report().deviceClass()).isEqualTo("gpu-80gi");
              assertThat(r.report().inClass()).isZero();
              assertThat(r.report().free()).isZero();
            });
  }

  @Test
  void aPodThatFitsNowSaysWhereWithTheDevices() {
    ClusterState withSpare =
        cluster.withPod(
            new io.fabric8.kubernetes.api.model.PodBuilder()
                .withNewMetadata()
                .withNamespace("ml")
                .withName("uses-spare")
                .withUid("u")
                .endMetadata()
                .withNewSpec()
                .addNewResourceClaim()
                .withName("gpu")
                .withResourceClaimName("spare")
                .endResourceClaim()
                .endSpec()
                .build());
    PodWhy.Answer a =
        PodWhy.explain(withSpare.pod("ml", "uses-spare").orElseThrow(), withSpare, Main.options());
    assertThat(a.state()).isEqualTo(PodWhy.State.FITS);
    assertThat(a.node()).isEqualTo("node-a");
    assertThat(a.allocations()).containsOnlyKeys("uid-spare");
    assertThat(a.nodes())
        .extracting(PodWhy.NodeRow::result)
        .containsExactly(
            "fits: claim spare: gpu: gpu.example.com/node-a/gpu-0",
            "claim spare: request \"gpu\": 1 device in class \"gpu\", 0 free (1 allocated to other "
                + "claims); on node node-b",
            "node(s) were not ready");
  }

  @Test
  void aLargeClusterShowsTheFirstNodesByNameAndCountsTheRest() {
    ClusterState big = cluster;
    java.util.List<io.fabric8.kubernetes.api.model.Node> nodes =
        new java.util.ArrayList<>(cluster.nodes());
    for (int i = 0; i < PodWhy.NODES_SHOWN; i++) {
      nodes.add(
          new io.fabric8.kubernetes.api.model.NodeBuilder()
              .withNewMetadata()
              .withName(String.format("node-x%02d", i))
              .endMetadata()
              .build());
    }
    big =
        new ClusterState(
            nodes,
            cluster.pods(),
            cluster.claims(),
            cluster.templates(),
            cluster.slices(),
            cluster.deviceClasses());
    PodWhy.Answer a = PodWhy.explain(big.pod("ml", "too-big").orElseThrow(), big, Main.options());
    assertThat(a.nodes()).hasSize(PodWhy.NODES_SHOWN + 1);
    assertThat(a.nodes().get(PodWhy.NODES_SHOWN))
        .isEqualTo(new PodWhy.NodeRow("...", "3 more nodes, not shown"));
    assertThat(a.message()).startsWith("2/53 nodes are available: 51 node(s) were not ready.");
  }

  private PodWhy.Answer explain(String pod) {
    return PodWhy.explain(cluster.pod("ml", pod).orElseThrow(), cluster, Main.options());
  }
}
