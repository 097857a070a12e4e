package io.kdra.claimcontroller.domain;

import static io.kdra.claimcontroller.domain.ScoreFixtures.input;
import static io.kdra.claimcontroller.domain.ScoreFixtures.named;
import static io.kdra.claimcontroller.domain.ScoreFixtures.on;
import static io.kdra.claimcontroller.domain.ScoreFixtures.pod;
import static io.kdra.claimcontroller.domain.ScoreFixtures.req;
import static org.assertj.core.api.Assertions.assertThat;

import io.fabric8.kubernetes.api.model.Container;
import io.fabric8.kubernetes.api.model.ContainerBuilder;
import io.fabric8.kubernetes.api.model.Node;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.PodBuilder;
import io.fabric8.kubernetes.api.model.Quantity;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.stream.Stream;
import org.junit.jupiter.api.Named;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * Pods with pod-level requests ({@code spec.resources}, PodLevelResources, on by default since
 * 1.34), scored as kube-scheduler 1.37.2 scores them. The rows are the score differential's four
 * scenarios of seed 41 whose totals differed ({@code SchedulingDifferentialIT}), cut down to their
 * feasible nodes and the pods bound there; the expected numbers are upstream's, as its harness
 * printed them per plugin, and recomputed by hand in each row's comment.
 *
 * <p>The cause, in {@code pkg/scheduler/framework/plugins/noderesources/fit.go}: {@code NewFit}
 * sets {@code enablePodLevelResources} on the {@code Fit} plugin but not on the {@code
 * resourceAllocationScorer} it embeds (built by {@code nodeResourceStrategyTypeMap}), and {@code
 * resource_allocation.go}'s {@code calculatePodResourceRequest} reads the scorer's flag: so
 * NodeResourcesFit's LeastAllocated score counts the pod's containers (missing requests as 100m and
 * 200Mi, plus overhead) and not its pod-level requests. {@code balanced_allocation.go}'s {@code
 * NewBalancedAllocation} does set the flag, so BalancedAllocation counts the pod-level requests.
 * The pods already on a node are counted with their pod-level requests by both ({@code
 * framework/types.go}, {@code PodInfo.CalculateResource}).
 */
class PodLevelScoresTest {

  private static final String GI = "Gi";

  static Stream<Arguments> differentialScenarios() {
    return Stream.of(
        row(
            // node-0 (2 cpu, 8Gi, empty): cpu (2000-1500)*100/2000 = 25, memory 7/8 -> 87: 56;
            // node-3 (3500m, 8Gi): 2000*100/3500 = 57, 87: 72; node-4 (3500m, 16Gi, 1500m/3Gi
            // bound): 500*100/3500 = 14, 12/16 -> 75: 44. BalancedAllocation with pod-level 2/6Gi:
            // node-0 fractions 1 and .75, std .125 -> 87, 50 + (50 + 87 - 100) / 2 = 68
            "seed41-96",
            newPod("2", "6" + GI, container("main", "1500m", "1" + GI)),
            List.of(
                node("node-0", "2", "8" + GI),
                node("node-3", "3500m", "8" + GI),
                node("node-4", "3500m", "16" + GI)),
            List.of(on(placed("placed-2", "1500m", "3" + GI), "node-4")),
            scores("node-0", 56, "node-3", 72, "node-4", 44),
            scores("node-0", 68, "node-3", 70, "node-4", 70)),
        row(
            // containers 1250m/500M on empty 8-core 8Gi nodes: cpu 84, memory
            // (8589934592-500000000)*100/8589934592 = 94: 89. BalancedAllocation with 5/6Gi:
            // fractions .625 and .75, std .0625 -> 93, 50 + (50 + 93 - 100) / 2 = 71
            "seed41-1059",
            newPod("5", "6" + GI, container("main", "1.25", "500M")),
            List.of(node("node-1", "8", "8" + GI), node("node-3", "8", "8" + GI)),
            List.of(),
            scores("node-1", 89, "node-3", 89),
            scores("node-1", 71, "node-3", 71)),
        row(
            // containers 250m/3Gi, init 1.25/3Gi, init 250m/1.5Gi, sidecar 500m/3Gi: max(750m/6Gi,
            // 1250m/3Gi) = 1250m/6Gi. node-0 (8, 16Gi, 1.25/500M bound): cpu 5500*100/8000 = 68,
            // memory (16Gi - 6Gi - 500M)*100/16Gi = 59: 63; node-1 (empty): 84 and 62: 73
            "seed41-1207",
            newPod(
                    "5",
                    "6" + GI,
                    container("main", "250m", "3" + GI),
                    container("init-0", "1.25", "3" + GI),
                    container("init-1", "250m", "1.5" + GI),
                    sidecar(container("init-2", "0.5", "3" + GI)))
                .build(),
            List.of(node("node-0", "8", "16" + GI), node("node-1", "8", "16" + GI)),
            List.of(on(placed("placed-0", "1.25", "500M"), "node-0")),
            scores("node-0", 63, "node-1", 73),
            scores("node-0", 69, "node-1", 68)),
        row(
            // containers 100m/256Mi and 100m/1.5Gi, sidecar 100m/500M: 300m and 2379048192 bytes.
            // node-0 (2, 16Gi, empty): cpu 85, memory 86: 85; node-3 (4, 16Gi, 250m/256Mi bound):
            // cpu 3450*100/4000 = 86, memory 84: 85
            "seed41-2187",
            newPod(
                "2",
                "6" + GI,
                container("main", "100m", "256Mi"),
                container("helper", "100m", "1.5" + GI),
                sidecar(container("init-0", "100m", "500M"))),
            List.of(node("node-0", "2", "16" + GI), node("node-3", "4", "16" + GI)),
            List.of(on(placed("placed-0", "250m", "256Mi"), "node-3")),
            scores("node-0", 85, "node-3", 85),
            scores("node-0", 59, "node-3", 72)));
  }

  @ParameterizedTest(name = "{0}")
  @MethodSource("differentialScenarios")
  void scoresAsKubeScheduler(
      Pod pod,
      List<Node> nodes,
      List<Pod> bound,
      Map<String, Long> leastAllocated,
      Map<String, Long> balancedAllocation) {
    NodeScoring.Input in = input(pod, nodes, bound);
    assertThat(
            named(nodes, ResourceScores.leastAllocated(pod, nodes, in.usage(), in.allocatable())))
        .as("NodeResourcesFit")
        .isEqualTo(leastAllocated);
    assertThat(
            named(
                nodes, ResourceScores.balancedAllocation(pod, nodes, in.usage(), in.allocatable())))
        .as("NodeResourcesBalancedAllocation")
        .isEqualTo(balancedAllocation);
  }

  /**
   * The CPU and memory a bound pod adds to its node's non-zero requests ({@code
   * framework/types.go}, {@code PodInfo.CalculateResource} and {@code
   * getNonMissingContainerRequests}): with pod-level requests set, a container's missing request
   * counts 100m or 200Mi only for a resource that nothing in the pod names (no container, the pod
   * level, nor the overhead).
   */
  static Stream<Arguments> boundPods() {
    return Stream.of(
        Arguments.of(
            Named.of("no pod-level requests: each container's missing ones count", twoContainers()),
            200L,
            200L * MI + 1_000_000L),
        Arguments.of(
            Named.of(
                "pod-level memory, one container names cpu: no cpu default",
                withPodMemory(twoContainers("500m"))),
            500L,
            GIB),
        Arguments.of(
            Named.of(
                "pod-level memory, no container names cpu: the cpu default per container",
                withPodMemory(twoContainers())),
            200L,
            GIB),
        Arguments.of(
            Named.of(
                "pod-level memory, cpu named by the overhead only: no cpu default",
                withPodMemory(twoContainers())
                    .editSpec()
                    .addToOverhead("cpu", new Quantity("250m"))
                    .endSpec()),
            250L,
            GIB));
  }

  @ParameterizedTest(name = "{0}")
  @MethodSource("boundPods")
  void boundPodsCountAsPodInfoDoes(PodBuilder pod, long milliCpu, long memoryBytes) {
    PodRequests nonZero = NodeFilter.NodeUsage.of(pod.build()).nonZero();
    assertThat(List.of(nonZero.milliCpu(), nonZero.memoryBytes()))
        .isEqualTo(List.of(milliCpu, memoryBytes));
  }

  private static final long MI = 1L << 20;
  private static final long GIB = 1L << 30;

  /** Two containers: the first requests {@code cpu} if given, the second 1M of memory only. */
  private static PodBuilder twoContainers(String... cpu) {
    PodBuilder b = pod("bound");
    b = cpu.length == 0 ? req(b) : req(b, "cpu", cpu[0]);
    return req(b, "memory", "1M");
  }

  private static PodBuilder withPodMemory(PodBuilder b) {
    return b.editSpec()
        .withNewResources()
        .addToRequests("memory", new Quantity("1Gi"))
        .endResources()
        .endSpec();
  }

  private static Arguments row(
      String name,
      Object pod,
      List<Node> nodes,
      List<Pod> bound,
      Map<String, Long> leastAllocated,
      Map<String, Long> balancedAllocation) {
    Pod p = pod instanceof PodBuilder b ? b.build() : (Pod) pod;
    return Arguments.of(Named.of(name, p), nodes, bound, leastAllocated, balancedAllocation);
  }

  /** A pending pod with pod-level requests; containers named {@code init-*} are init containers. */
  private static PodBuilder newPod(String cpu, String memory, Container... containers) {
    PodBuilder b = pod("new-pod");
    for (Container c : containers) {
      if (c.getName().startsWith("init-")) {
        b.editSpec().addToInitContainers(c).endSpec();
      } else {
        b.editSpec().addToContainers(c).endSpec();
      }
    }
    return b.editSpec()
        .withNewResources()
        .addToRequests("cpu", new Quantity(cpu))
        .addToRequests("memory", new Quantity(memory))
        .endResources()
        .endSpec();
  }

  private static PodBuilder placed(String name, String cpu, String memory) {
    return req(pod(name), "cpu", cpu, "memory", memory);
  }

  private static Container container(String name, String cpu, String memory) {
    return new ContainerBuilder()
        .withName(name)
        .withNewResources()
        .addToRequests("cpu", new Quantity(cpu))
        .addToRequests("memory", new Quantity(memory))
        .endResources()
        .build();
  }

  private static Container sidecar(Container c) {
    c.setRestartPolicy("Always");
    return c;
  }

  private static Node node(String name, String cpu, String memory) {
    return ScoreFixtures.node(name)
        .editStatus()
        .withAllocatable(Map.of("cpu", new Quantity(cpu), "memory", new Quantity(memory)))
        .endStatus()
        .build();
  }

  private static Map<String, Long> scores(Object... nodeAndScore) {
    Map<String, Long> m = new LinkedHashMap<>();
    for (int i = 0; i + 1 < nodeAndScore.length; i += 2) {
      m.put((String) nodeAndScore[i], ((Number) nodeAndScore[i + 1]).longValue());
    }
    return m;
  }
}
