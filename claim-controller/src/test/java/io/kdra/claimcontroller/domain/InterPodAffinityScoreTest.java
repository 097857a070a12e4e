package io.kdra.claimcontroller.domain;

import static io.kdra.claimcontroller.domain.ScoreFixtures.input;
import static io.kdra.claimcontroller.domain.ScoreFixtures.named;
import static io.kdra.claimcontroller.domain.ScoreFixtures.node;
import static io.kdra.claimcontroller.domain.ScoreFixtures.pairs;
import static io.kdra.claimcontroller.domain.ScoreFixtures.pod;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;

import io.fabric8.kubernetes.api.model.Affinity;
import io.fabric8.kubernetes.api.model.LabelSelector;
import io.fabric8.kubernetes.api.model.LabelSelectorRequirement;
import io.fabric8.kubernetes.api.model.Node;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.PodAffinity;
import io.fabric8.kubernetes.api.model.PodAffinityTerm;
import io.fabric8.kubernetes.api.model.PodAntiAffinity;
import io.fabric8.kubernetes.api.model.WeightedPodAffinityTerm;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.stream.Stream;
import org.junit.jupiter.api.Named;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

/** Upstream's {@code TestPreferredAffinity}: its cases and expected scores. */
class InterPodAffinityScoreTest {

  static final String[] CHINA = {"region", "China"};
  static final String[] INDIA = {"region", "India"};
  static final String[] AZ1 = {"az", "az1"};
  static final String[] AZ2 = {"az", "az2"};
  static final String[] CHINA_AZ1 = {"region", "China", "az", "az1"};
  static final String[] S1 = {"security", "S1"};
  static final String[] S2 = {"security", "S2"};

  static LabelSelectorRequirement in(String key, String... values) {
    return new LabelSelectorRequirement(key, "In", List.of(values));
  }

  static PodAffinityTerm term(String topologyKey, LabelSelectorRequirement... reqs) {
    PodAffinityTerm t = new PodAffinityTerm();
    t.setLabelSelector(new LabelSelector(List.of(reqs), null));
    t.setTopologyKey(topologyKey);
    return t;
  }

  static WeightedPodAffinityTerm weighted(int w, PodAffinityTerm t) {
    return new WeightedPodAffinityTerm(t, w);
  }

  static Affinity preferred(
      List<WeightedPodAffinityTerm> affinity, List<WeightedPodAffinityTerm> anti) {
    Affinity a = new Affinity();
    if (!affinity.isEmpty()) {
      PodAffinity pa = new PodAffinity();
      pa.setPreferredDuringSchedulingIgnoredDuringExecution(affinity);
      a.setPodAffinity(pa);
    }
    if (!anti.isEmpty()) {
      PodAntiAffinity pa = new PodAntiAffinity();
      pa.setPreferredDuringSchedulingIgnoredDuringExecution(anti);
      a.setPodAntiAffinity(pa);
    }
    return a;
  }

  static final Affinity STAY_WITH_S1_IN_REGION =
      preferred(List.of(weighted(5, term("region", in("security", "S1")))), List.of());
  static final Affinity STAY_WITH_S2_IN_REGION =
      preferred(List.of(weighted(6, term("region", in("security", "S2")))), List.of());
  static final Affinity AFFINITY3 =
      preferred(
          List.of(
              weighted(
                  8,
                  term(
                      "region",
                      new LabelSelectorRequirement("security", "NotIn", List.of("S1")),
                      in("security", "S2"))),
              weighted(
                  2,
                  term(
                      "region",
                      new LabelSelectorRequirement("security", "Exists", List.of()),
                      new LabelSelectorRequirement("wrongkey", "DoesNotExist", List.of())))),
          List.of());
  static final Affinity HARD_AFFINITY = hardAffinity();
  static final Affinity AWAY_FROM_S1_IN_AZ =
      preferred(List.of(), List.of(weighted(5, term("az", in("security", "S1")))));
  static final Affinity AWAY_FROM_S2_IN_AZ =
      preferred(List.of(), List.of(weighted(5, term("az", in("security", "S2")))));
  static final Affinity STAY_WITH_S1_IN_REGION_AWAY_FROM_S2_IN_AZ =
      preferred(
          List.of(weighted(8, term("region", in("security", "S1")))),
          List.of(weighted(5, term("az", in("security", "S2")))));

  static Affinity hardAffinity() {
    PodAffinity pa = new PodAffinity();
    pa.setRequiredDuringSchedulingIgnoredDuringExecution(
        List.of(
            term("region", in("security", "S1", "value2")),
            term("region", new LabelSelectorRequirement("security", "Exists", List.of()))));
    Affinity a = new Affinity();
    a.setPodAffinity(pa);
    return a;
  }

  static final AtomicInteger N = new AtomicInteger();

  static Pod p(String node, Affinity a, String... labels) {
    return pod("p" + N.incrementAndGet(), labels)
        .editSpec()
        .withNodeName(node)
        .withAffinity(a)
        .endSpec()
        .build();
  }

  static Node n(String name, String[] labels) {
    return node(name, labels).build();
  }

  static Arguments c(String name, Pod pod, List<Pod> pods, List<Node> nodes, String... expected) {
    return Arguments.of(Named.of(name, pod), pods, nodes, pairs(expected));
  }

  static Stream<Arguments> cases() {
    return Stream.of(
        c(
            "Affinity: pod that matches topology key & pods in nodes will get high score comparing"
                + " to otherswhich doesn't match either pods in nodes or in topology key",
            p("", STAY_WITH_S1_IN_REGION, S1),
            List.of(p("node1", null, S1), p("node2", null, S2), p("node3", null, S1)),
            List.of(n("node1", CHINA), n("node2", INDIA), n("node3", AZ1)),
            "node1",
            "100",
            "node2",
            "0",
            "node3",
            "0"),
        c(
            "All the nodes that have the same topology key & label value with one of them has an"
                + " existing pod that match the affinity rules, have the same score",
            p("", STAY_WITH_S1_IN_REGION),
            List.of(p("node1", null, S1)),
            List.of(n("node1", CHINA), n("node2", CHINA_AZ1), n("node3", INDIA)),
            "node1",
            "100",
            "node2",
            "100",
            "node3",
            "0"),
        c(
            "Affinity: nodes in one region has more matching pods comparing to other region, so the"
                + " region which has more matches will get high score",
            p("", STAY_WITH_S2_IN_REGION, S1),
            List.of(
                p("node1", null, S2),
                p("node1", null, S2),
                p("node2", null, S2),
                p("node3", null, S2),
                p("node4", null, S2),
                p("node5", null, S2)),
            List.of(
                n("node1", CHINA),
                n("node2", INDIA),
                n("node3", CHINA),
                n("node4", CHINA),
                n("node5", INDIA)),
            "node1",
            "100",
            "node2",
            "0",
            "node3",
            "100",
            "node4",
            "100",
            "node5",
            "0"),
        c(
            "Affinity: different Label operators and values for pod affinity scheduling"
                + " preference, including some match failures ",
            p("", AFFINITY3, S1),
            List.of(p("node1", null, S1), p("node2", null, S2), p("node3", null, S1)),
            List.of(n("node1", CHINA), n("node2", INDIA), n("node3", AZ1)),
            "node1",
            "20",
            "node2",
            "100",
            "node3",
            "0"),
        c(
            "Affinity symmetry: considered only the preferredDuringSchedulingIgnoredDuringExecution"
                + " in pod affinity symmetry",
            p("", null, S2),
            List.of(p("node1", STAY_WITH_S1_IN_REGION, S1), p("node2", STAY_WITH_S2_IN_REGION, S2)),
            List.of(n("node1", CHINA), n("node2", INDIA), n("node3", AZ1)),
            "node1",
            "0",
            "node2",
            "100",
            "node3",
            "0"),
        c(
            "Affinity symmetry: considered RequiredDuringSchedulingIgnoredDuringExecution in pod"
                + " affinity symmetry",
            p("", null, S1),
            List.of(p("node1", HARD_AFFINITY, S1), p("node2", HARD_AFFINITY, S2)),
            List.of(n("node1", CHINA), n("node2", INDIA), n("node3", AZ1)),
            "node1",
            "100",
            "node2",
            "100",
            "node3",
            "0"),
        c(
            "Anti Affinity: pod that does not match existing pods in node will get high score ",
            p("", AWAY_FROM_S1_IN_AZ, S1),
            List.of(p("node1", null, S1), p("node2", null, S2)),
            List.of(n("node1", AZ1), n("node2", CHINA)),
            "node1",
            "0",
            "node2",
            "100"),
        c(
            "Anti Affinity: pod that does not match topology key & match the pods in nodes will get"
                + " higher score comparing to others ",
            p("", AWAY_FROM_S1_IN_AZ, S1),
            List.of(p("node1", null, S1), p("node2", null, S1)),
            List.of(n("node1", AZ1), n("node2", CHINA)),
            "node1",
            "0",
            "node2",
            "100"),
        c(
            "Anti Affinity: one node has more matching pods comparing to other node, so the node"
                + " which has more unmatches will get high score",
            p("", AWAY_FROM_S1_IN_AZ, S1),
            List.of(p("node1", null, S1), p("node1", null, S1), p("node2", null, S2)),
            List.of(n("node1", AZ1), n("node2", INDIA)),
            "node1",
            "0",
            "node2",
            "100"),
        c(
            "Anti Affinity symmetry: the existing pods in node which has anti affinity match will"
                + " get high score",
            p("", null, S2),
            List.of(p("node1", AWAY_FROM_S2_IN_AZ, S1), p("node2", AWAY_FROM_S1_IN_AZ, S2)),
            List.of(n("node1", AZ1), n("node2", AZ2)),
            "node1",
            "0",
            "node2",
            "100"),
        c(
            "Affinity and Anti Affinity: considered only preferredDuringSchedulingIgnoredDuringExecution"
                + " in both pod affinity & anti affinity",
            p("", STAY_WITH_S1_IN_REGION_AWAY_FROM_S2_IN_AZ, S1),
            List.of(p("node1", null, S1), p("node2", null, S1)),
            List.of(n("node1", CHINA), n("node2", AZ1)),
            "node1",
            "100",
            "node2",
            "0"),
        c(
            "Affinity and Anti Affinity and symmetry: considered only"
                + " preferredDuringSchedulingIgnoredDuringExecution in both pod affinity & anti"
                + " affinity & symmetry",
            p("", STAY_WITH_S1_IN_REGION_AWAY_FROM_S2_IN_AZ, S1),
            List.of(
                p("node1", null, S1),
                p("node2", null, S2),
                p("node3", STAY_WITH_S1_IN_REGION_AWAY_FROM_S2_IN_AZ),
                p("node4", AWAY_FROM_S1_IN_AZ)),
            List.of(n("node1", CHINA), n("node2", AZ1), n("node3", INDIA), n("node4", AZ2)),
            "node1",
            "100",
            "node2",
            "0",
            "node3",
            "100",
            "node4",
            "0"));
  }

  @ParameterizedTest(name = "{0}")
  @MethodSource("cases")
  void testPreferredAffinity(
      Pod pod, List<Pod> pods, List<Node> nodes, Map<String, String> expected) {
    Map<String, String> got = new LinkedHashMap<>();
    named(nodes, InterPodAffinityScore.score(input(pod, nodes, pods)))
        .forEach((k, v) -> got.put(k, "" + v));
    assertEquals(expected, got);
  }

  /** "all nodes are same priority as Affinity is nil": PreScore Skip, nothing scores. */
  @Test
  void allNodesAreSamePriorityAsAffinityIsNil() {
    List<Node> nodes = List.of(n("node1", CHINA), n("node2", INDIA), n("node3", AZ1));
    assertNull(InterPodAffinityScore.score(input(p("", null, S1), nodes, List.of())));
  }

  /** Without own terms only placed pods with affinity are read: the others are not needed. */
  @Test
  void withoutOwnTermsPlacedPodsAreNotRead() {
    List<Node> nodes = List.of(n("node1", CHINA), n("node2", INDIA));
    NodeScoring.Input in = input(p("", null, S1), nodes, List.of(p("node1", null, S1)));
    NodeScoring.Input strict =
        new NodeScoring.Input(
            in.pod(),
            in.feasible(),
            in.allNodes(),
            in.usage(),
            in.allocatable(),
            () -> {
              throw new AssertionError("read the placed pods");
            },
            in.placedWithAffinity(),
            in.namespaceLabels());
    assertNull(InterPodAffinityScore.score(strict));
  }
}
