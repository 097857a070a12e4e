package io.kdra.claimcontroller.domain;

import static io.kdra.claimcontroller.domain.ScoreFixtures.input;
import static io.kdra.claimcontroller.domain.ScoreFixtures.named;
import static io.kdra.claimcontroller.domain.ScoreFixtures.node;
import static io.kdra.claimcontroller.domain.ScoreFixtures.on;
import static io.kdra.claimcontroller.domain.ScoreFixtures.pairs;
import static io.kdra.claimcontroller.domain.ScoreFixtures.pod;
import static io.kdra.claimcontroller.domain.ScoreFixtures.req;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;

import io.fabric8.kubernetes.api.model.Node;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.PodBuilder;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.stream.Stream;
import org.junit.jupiter.api.Named;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * Upstream's {@code TestLeastAllocatedScoringStrategy} and {@code
 * TestNodeResourcesBalancedAllocation}: their cases (CPU and memory) and expected scores.
 */
class ResourceScoresTest {

  /** {@code st.MakeNode().Capacity({"cpu": cores, "memory": bytes})}. */
  static Node capacity(String name, String cpu, String memory) {
    return node(name)
        .editStatus()
        .withAllocatable(
            Map.of(
                "cpu", new io.fabric8.kubernetes.api.model.Quantity(cpu),
                "memory", new io.fabric8.kubernetes.api.model.Quantity(memory)))
        .endStatus()
        .build();
  }

  static PodBuilder p(String... containerRequests) {
    PodBuilder b = pod("p" + containerRequests.length + System.identityHashCode(containerRequests));
    for (String r : containerRequests) {
      req(b, r.isEmpty() ? new String[0] : r.split("[=,]"));
    }
    return b;
  }

  static Arguments c(
      String name, Pod pod, List<Node> nodes, List<Pod> existing, String... expected) {
    return Arguments.of(Named.of(name, pod), nodes, existing, pairs(expected));
  }

  static Stream<Arguments> leastAllocated() {
    Pod twoContainers = p("cpu=1000,memory=2000", "cpu=2000,memory=3000").build();
    List<Node> n4 = List.of(capacity("node1", "4000", "10000"), capacity("node2", "4000", "10000"));
    List<Node> n10 =
        List.of(capacity("node1", "10000", "20000"), capacity("node2", "10000", "20000"));
    return Stream.of(
        c(
            "nothing scheduled, nothing requested",
            p().build(),
            n4,
            List.of(),
            "node1",
            "100",
            "node2",
            "100"),
        c(
            "nothing scheduled, resources requested, differently sized nodes",
            twoContainers,
            List.of(capacity("node1", "4000", "10000"), capacity("node2", "6000", "10000")),
            List.of(),
            "node1",
            "37",
            "node2",
            "50"),
        c(
            "no resources requested, pods scheduled",
            p().build(),
            n4,
            List.of(on(p(), "node1"), on(p(), "node1"), on(p(), "node2"), on(p(), "node2")),
            "node1",
            "100",
            "node2",
            "100"),
        c(
            "no resources requested, pods scheduled with resources",
            p().build(),
            n10,
            List.of(
                on(p("cpu=3000,memory=0"), "node1"),
                on(p("cpu=3000,memory=0"), "node1"),
                on(p("cpu=3000,memory=0"), "node2"),
                on(p("cpu=3000,memory=5000"), "node2")),
            "node1",
            "70",
            "node2",
            "57"),
        c(
            "resources requested, pods scheduled with resources",
            twoContainers,
            n10,
            List.of(on(p("cpu=3000,memory=0"), "node1"), on(p("cpu=3000,memory=5000"), "node2")),
            "node1",
            "57",
            "node2",
            "45"),
        c(
            "resources requested, pods scheduled with resources, differently sized nodes",
            twoContainers,
            List.of(capacity("node1", "10000", "20000"), capacity("node2", "10000", "50000")),
            List.of(on(p("cpu=3000,memory=0"), "node1"), on(p("cpu=3000,memory=5000"), "node2")),
            "node1",
            "57",
            "node2",
            "60"),
        c(
            "requested resources exceed node capacity",
            p("cpu=3000,memory=0").build(),
            n4,
            List.of(on(p("cpu=3000,memory=0"), "node1"), on(p("cpu=3000,memory=5000"), "node2")),
            "node1",
            "50",
            "node2",
            "25"),
        c(
            "zero node resources, pods scheduled with resources",
            p().build(),
            List.of(node("node1").build(), node("node2").build()),
            List.of(on(p("cpu=3000,memory=0"), "node1"), on(p("cpu=3000,memory=5000"), "node2")),
            "node1",
            "0",
            "node2",
            "0"));
  }

  @ParameterizedTest(name = "{0}")
  @MethodSource("leastAllocated")
  void testLeastAllocatedScoringStrategy(
      Pod pod, List<Node> nodes, List<Pod> existing, Map<String, String> expected) {
    NodeScoring.Input in = input(pod, nodes, existing);
    assertEquals(
        expected,
        strings(nodes, ResourceScores.leastAllocated(pod, nodes, in.usage(), in.allocatable())));
  }

  /** Upstream's {@code makeNode(name, milliCPU, memory)}. */
  static Node made(String name, long milliCpu, long memory) {
    return ScoreFixtures.node(name, milliCpu, memory);
  }

  static Stream<Arguments> balanced() {
    Pod twoContainers = p("cpu=1000m,memory=2000", "cpu=2000m,memory=3000").build();
    return Stream.of(
        c(
            "nothing scheduled, resources requested, differently sized nodes",
            twoContainers,
            List.of(made("node1", 4000, 10000), made("node2", 6000, 10000)),
            List.of(),
            "node1",
            "68",
            "node2",
            "75"),
        c(
            "resources requested, pods scheduled with resources",
            twoContainers,
            List.of(made("node1", 10000, 20000), made("node2", 10000, 20000)),
            List.of(
                on(p("cpu=1000m", "cpu=2000m"), "node1"),
                on(p("cpu=1000m,memory=2000", "cpu=2000m,memory=3000"), "node2")),
            "node1",
            "73",
            "node2",
            "74"),
        c(
            "resources requested, pods scheduled with resources, differently sized nodes",
            twoContainers,
            List.of(made("node1", 10000, 20000), made("node2", 10000, 50000)),
            List.of(
                on(p("cpu=1000m", "cpu=2000m"), "node1"),
                on(p("cpu=1000m,memory=2000", "cpu=2000m,memory=3000"), "node2")),
            "node1",
            "73",
            "node2",
            "70"),
        c(
            "resources requested, pods scheduled with resources, nodes to reach min/max score",
            p("memory=2000", "memory=3000").build(),
            List.of(made("node1", 3000, 5000), made("node2", 3000, 5000)),
            List.of(on(p("cpu=1000m", "cpu=2000m"), "node1")),
            "node1",
            "100",
            "node2",
            "50"),
        c(
            "requested resources at node capacity",
            p("cpu=1000m", "cpu=2000m").build(),
            List.of(made("node1", 6000, 10000), made("node2", 6000, 10000)),
            List.of(
                on(p("cpu=1000m", "cpu=2000m"), "node1"),
                on(p("cpu=1000m,memory=2000", "cpu=2000m,memory=3000"), "node2")),
            "node1",
            "62",
            "node2",
            "62"));
  }

  @ParameterizedTest(name = "{0}")
  @MethodSource("balanced")
  void testNodeResourcesBalancedAllocation(
      Pod pod, List<Node> nodes, List<Pod> existing, Map<String, String> expected) {
    NodeScoring.Input in = input(pod, nodes, existing);
    assertEquals(
        expected,
        strings(
            nodes, ResourceScores.balancedAllocation(pod, nodes, in.usage(), in.allocatable())));
  }

  /** "nothing scheduled, nothing requested, skip in PreScore". */
  @Test
  void balancedAllocationSkipsBestEffortPods() {
    List<Node> nodes = List.of(made("node1", 4000, 10000), made("node2", 4000, 10000));
    NodeScoring.Input in = input(p().build(), nodes, List.of());
    assertNull(ResourceScores.balancedAllocation(in.pod(), nodes, in.usage(), in.allocatable()));
  }

  /** Containers without requests count 100m CPU and 200Mi memory for LeastAllocated. */
  @Test
  void leastAllocatedCountsDefaultRequestsOfContainersWithout() {
    List<Node> nodes = List.of(capacity("node1", "1", "1000Mi"), capacity("node2", "1", "1000Mi"));
    Pod empty = p("").build(); // one container, no requests
    NodeScoring.Input in = input(empty, nodes, List.of(on(p(""), "node1")));
    // node1: cpu (1000-200)*100/1000 = 80, memory (1000-400)*100/1000 = 60 -> 70;
    // node2: cpu 90, memory 80 -> 85
    assertEquals(
        pairs("node1", "70", "node2", "85"),
        strings(nodes, ResourceScores.leastAllocated(empty, nodes, in.usage(), in.allocatable())));
  }

  static Map<String, String> strings(List<Node> nodes, long[] scores) {
    Map<String, String> got = new LinkedHashMap<>();
    named(nodes, scores).forEach((k, v) -> got.put(k, "" + v));
    return got;
  }
}
