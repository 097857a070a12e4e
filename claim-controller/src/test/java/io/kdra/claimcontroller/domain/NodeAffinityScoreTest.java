package io.kdra.claimcontroller.domain;

import static io.kdra.claimcontroller.domain.ScoreFixtures.named;
import static io.kdra.claimcontroller.domain.ScoreFixtures.node;
import static io.kdra.claimcontroller.domain.ScoreFixtures.pairs;
import static io.kdra.claimcontroller.domain.ScoreFixtures.pod;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;

import io.fabric8.kubernetes.api.model.Affinity;
import io.fabric8.kubernetes.api.model.AffinityBuilder;
import io.fabric8.kubernetes.api.model.Node;
import io.fabric8.kubernetes.api.model.NodeSelectorRequirement;
import io.fabric8.kubernetes.api.model.NodeSelectorTerm;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.PreferredSchedulingTerm;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.stream.Stream;
import org.junit.jupiter.api.Named;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

/** Upstream's {@code TestNodeAffinityPriority}, its cases and expected scores. */
class NodeAffinityScoreTest {

  static final String[] LABEL1 = {"foo", "bar"};
  static final String[] LABEL2 = {"key", "value"};
  static final String[] LABEL3 = {"az", "az1"};
  static final String[] LABEL4 = {"abc", "az11", "def", "az22"};
  static final String[] LABEL5 = {"foo", "bar", "key", "value", "az", "az1"};

  static PreferredSchedulingTerm term(int weight, String... keyValues) {
    List<NodeSelectorRequirement> reqs =
        pairs(keyValues).entrySet().stream()
            .map(e -> new NodeSelectorRequirement(e.getKey(), "In", List.of(e.getValue())))
            .toList();
    return new PreferredSchedulingTerm(new NodeSelectorTerm(reqs, null), weight);
  }

  static final Affinity AFFINITY1 =
      new AffinityBuilder()
          .withNewNodeAffinity()
          .withPreferredDuringSchedulingIgnoredDuringExecution(term(2, "foo", "bar"))
          .endNodeAffinity()
          .build();

  static final Affinity AFFINITY2 =
      new AffinityBuilder()
          .withNewNodeAffinity()
          .withPreferredDuringSchedulingIgnoredDuringExecution(
              term(2, "foo", "bar"),
              term(4, "key", "value"),
              term(5, "foo", "bar", "key", "value", "az", "az1"))
          .endNodeAffinity()
          .build();

  static Pod withAffinity(Affinity a) {
    return pod("p").editSpec().withAffinity(a).endSpec().build();
  }

  static Arguments c(String name, Affinity a, List<Node> nodes, String... expected) {
    return Arguments.of(Named.of(name, withAffinity(a)), nodes, pairs(expected));
  }

  static Stream<Arguments> cases() {
    return Stream.of(
        c(
            "no node matches preferred scheduling requirements in NodeAffinity of pod so all"
                + " nodes' priority is zero",
            AFFINITY1,
            List.of(
                node("node1", LABEL4).build(),
                node("node2", LABEL2).build(),
                node("node3", LABEL3).build()),
            "node1",
            "0",
            "node2",
            "0",
            "node3",
            "0"),
        c(
            "only node1 matches the preferred scheduling requirements of pod",
            AFFINITY1,
            List.of(
                node("node1", LABEL1).build(),
                node("node2", LABEL2).build(),
                node("node3", LABEL3).build()),
            "node1",
            "100",
            "node2",
            "0",
            "node3",
            "0"),
        c(
            "all nodes matches the preferred scheduling requirements of pod but with different"
                + " priorities ",
            AFFINITY2,
            List.of(
                node("node1", LABEL1).build(),
                node("node5", LABEL5).build(),
                node("node2", LABEL2).build()),
            "node1",
            "18",
            "node5",
            "100",
            "node2",
            "36"));
  }

  @ParameterizedTest(name = "{0}")
  @MethodSource("cases")
  void scores(Pod pod, List<Node> nodes, Map<String, String> expected) {
    Map<String, String> got = new LinkedHashMap<>();
    named(nodes, NodeAffinityScore.score(pod, nodes)).forEach((k, v) -> got.put(k, "" + v));
    assertEquals(expected, got);
  }

  /** "Skip is returned in PreScore when NodeAffinity is nil": the plugin does not score. */
  @Test
  void skipIsReturnedInPreScoreWhenNodeAffinityIsNil() {
    assertNull(NodeAffinityScore.score(pod("p").build(), List.of(node("node1", LABEL1).build())));
  }
}
