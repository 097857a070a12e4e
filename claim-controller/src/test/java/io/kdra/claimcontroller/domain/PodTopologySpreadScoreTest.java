package io.kdra.claimcontroller.domain;

import static io.kdra.claimcontroller.domain.ScoreFixtures.input;
import static io.kdra.claimcontroller.domain.ScoreFixtures.named;
import static io.kdra.claimcontroller.domain.ScoreFixtures.node;
import static io.kdra.claimcontroller.domain.ScoreFixtures.pairs;
import static io.kdra.claimcontroller.domain.ScoreFixtures.pod;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;

import io.fabric8.kubernetes.api.model.LabelSelector;
import io.fabric8.kubernetes.api.model.LabelSelectorRequirement;
import io.fabric8.kubernetes.api.model.Node;
import io.fabric8.kubernetes.api.model.OwnerReferenceBuilder;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.PodBuilder;
import io.fabric8.kubernetes.api.model.TopologySpreadConstraint;
import io.fabric8.kubernetes.api.model.TopologySpreadConstraintBuilder;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.stream.Stream;
import org.junit.jupiter.api.Named;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

/** Upstream's {@code TestPodTopologySpreadScore}: its cases and expected scores. */
class PodTopologySpreadScoreTest {

  static final String HOST = "kubernetes.io/hostname";

  static LabelSelector exists(String key) {
    return new LabelSelector(List.of(new LabelSelectorRequirement(key, "Exists", List.of())), null);
  }

  static TopologySpreadConstraint soft(int maxSkew, String key, LabelSelector selector) {
    return new TopologySpreadConstraintBuilder()
        .withMaxSkew(maxSkew)
        .withTopologyKey(key)
        .withWhenUnsatisfiable("ScheduleAnyway")
        .withLabelSelector(selector)
        .build();
  }

  static Pod incoming(List<String> labels, TopologySpreadConstraint... cs) {
    List<String> kv = new ArrayList<>();
    labels.forEach(
        l -> {
          kv.add(l);
          kv.add("");
        });
    return pod("p", kv.toArray(String[]::new))
        .editSpec()
        .withTopologySpreadConstraints(cs)
        .endSpec()
        .build();
  }

  /** {@code st.MakePod().Name(name).Node(node).Label(l, "")...}. */
  static Pod existing(String name, String node, String... labels) {
    List<String> kv = new ArrayList<>();
    for (String l : labels) {
      kv.add(l);
      kv.add("");
    }
    return pod(name, kv.toArray(String[]::new)).editSpec().withNodeName(node).endSpec().build();
  }

  /** {@code count} pods named {@code p-<x><i>} with label foo on node-x. */
  static List<Pod> foo(String node, int count) {
    List<Pod> out = new ArrayList<>();
    for (int i = 1; i <= count; i++) {
      out.add(existing("p-" + node.substring(5) + i, node, "foo"));
    }
    return out;
  }

  static List<Pod> all(List<List<Pod>> parts) {
    List<Pod> out = new ArrayList<>();
    parts.forEach(out::addAll);
    return out;
  }

  static Node host(String name, String... more) {
    List<String> kv = new ArrayList<>(List.of(more));
    kv.add(HOST);
    kv.add(name);
    return node(name, kv.toArray(String[]::new)).build();
  }

  static Arguments c(
      String name,
      Pod pod,
      List<Pod> existing,
      List<Node> nodes,
      List<Node> failed,
      String... expected) {
    return Arguments.of(Named.of(name, pod), existing, nodes, failed, pairs(expected));
  }

  static Stream<Arguments> cases() {
    List<String> fooLabel = List.of("foo");
    List<Node> abcd = List.of(host("node-a"), host("node-b"), host("node-c"), host("node-d"));
    return Stream.of(
        c(
            "one constraint on node, no existing pods",
            incoming(fooLabel, soft(1, HOST, exists("foo"))),
            List.of(),
            List.of(host("node-a"), host("node-b")),
            List.of(),
            "node-a",
            "100",
            "node-b",
            "100"),
        c(
            "one constraint on node, all nodes have the same number of matching pods",
            incoming(fooLabel, soft(1, HOST, exists("foo"))),
            all(List.of(foo("node-a", 1), foo("node-b", 1))),
            List.of(host("node-a"), host("node-b")),
            List.of(),
            "node-a",
            "100",
            "node-b",
            "100"),
        c(
            "one constraint on node, all 4 nodes are candidates",
            incoming(fooLabel, soft(1, HOST, exists("foo"))),
            all(List.of(foo("node-a", 2), foo("node-b", 1), foo("node-d", 3))),
            abcd,
            List.of(),
            "node-a",
            "20",
            "node-b",
            "60",
            "node-c",
            "100",
            "node-d",
            "0"),
        c(
            "one constraint on node, null selector",
            incoming(fooLabel, soft(1, HOST, null)),
            all(List.of(foo("node-a", 2), foo("node-b", 1), foo("node-d", 3))),
            abcd,
            List.of(),
            "node-a",
            "100",
            "node-b",
            "100",
            "node-c",
            "100",
            "node-d",
            "100"),
        c(
            "one constraint on node, all 4 nodes are candidates, maxSkew=2",
            incoming(fooLabel, soft(2, HOST, exists("foo"))),
            all(List.of(foo("node-a", 2), foo("node-b", 1), foo("node-d", 3))),
            abcd,
            List.of(),
            "node-a",
            "33",
            "node-b",
            "66",
            "node-c",
            "100",
            "node-d",
            "16"),
        c(
            "one constraint on node, all 4 nodes are candidates, maxSkew=3",
            incoming(fooLabel, soft(3, HOST, exists("foo"))),
            all(List.of(foo("node-a", 4), foo("node-b", 3), foo("node-c", 2), foo("node-d", 1))),
            abcd,
            List.of(),
            "node-a",
            "44",
            "node-b",
            "66",
            "node-c",
            "77",
            "node-d",
            "100"),
        c(
            "one constraint on node, 3 out of 4 nodes are candidates",
            incoming(fooLabel, soft(1, HOST, exists("foo"))),
            all(List.of(foo("node-a", 4), foo("node-b", 2), foo("node-x", 1), foo("node-y", 3))),
            List.of(host("node-a"), host("node-b"), host("node-x")),
            List.of(host("node-y")),
            "node-a",
            "33",
            "node-b",
            "83",
            "node-x",
            "100"),
        c(
            "one constraint on node, 3 out of 4 nodes are candidates, one node doesn't match"
                + " topology key",
            incoming(fooLabel, soft(1, HOST, exists("foo"))),
            all(List.of(foo("node-a", 4), foo("node-b", 2), foo("node-x", 1), foo("node-y", 3))),
            List.of(host("node-a"), node("node-b", "n", "node-b").build(), host("node-x")),
            List.of(host("node-y")),
            "node-a",
            "16",
            "node-b",
            "0",
            "node-x",
            "100"),
        c(
            "one constraint on zone, 3 out of 4 nodes are candidates",
            incoming(fooLabel, soft(1, "zone", exists("foo"))),
            all(List.of(foo("node-a", 4), foo("node-b", 2), foo("node-x", 1), foo("node-y", 3))),
            List.of(
                host("node-a", "zone", "zone1"),
                host("node-b", "zone", "zone1"),
                host("node-x", "zone", "zone2")),
            List.of(host("node-y", "zone", "zone2")),
            "node-a",
            "75",
            "node-b",
            "75",
            "node-x",
            "100"),
        c(
            "two Constraints on zone and node, 2 out of 4 nodes are candidates",
            incoming(fooLabel, soft(1, "zone", exists("foo")), soft(1, HOST, exists("foo"))),
            all(List.of(foo("node-a", 2), foo("node-b", 1), foo("node-x", 2), foo("node-y", 4))),
            List.of(host("node-a", "zone", "zone1"), host("node-x", "zone", "zone2")),
            List.of(host("node-b", "zone", "zone1"), host("node-y", "zone", "zone2")),
            "node-a",
            "100",
            "node-x",
            "63"),
        c(
            "two Constraints on zone and node, with different labelSelectors",
            incoming(
                List.of("foo", "bar"),
                soft(1, "zone", exists("foo")),
                soft(1, HOST, exists("bar"))),
            List.of(
                existing("p-a1", "node-a", "foo"),
                existing("p-b1", "node-b", "foo", "bar"),
                existing("p-y1", "node-y", "foo"),
                existing("p-y2", "node-y", "bar")),
            List.of(
                host("node-a", "zone", "zone1"),
                host("node-b", "zone", "zone1"),
                host("node-x", "zone", "zone2"),
                host("node-y", "zone", "zone2")),
            List.of(),
            "node-a",
            "60",
            "node-b",
            "20",
            "node-x",
            "100",
            "node-y",
            "60"));
  }

  @ParameterizedTest(name = "{0}")
  @MethodSource("cases")
  void testPodTopologySpreadScore(
      Pod pod, List<Pod> existing, List<Node> nodes, List<Node> failed, Map<String, String> want) {
    List<Node> allNodes = new ArrayList<>(nodes);
    allNodes.addAll(failed);
    Map<String, String> got = new LinkedHashMap<>();
    named(nodes, PodTopologySpreadScore.score(input(pod, nodes, allNodes, existing, Map.of())))
        .forEach((k, v) -> got.put(k, "" + v));
    assertEquals(want, got);
  }

  static PodBuilder ownedBy(PodBuilder p, String kind, String uid) {
    return p.editMetadata()
        .withOwnerReferences(
            new OwnerReferenceBuilder()
                .withApiVersion("apps/v1")
                .withKind(kind)
                .withName(uid)
                .withUid(uid)
                .withController(true)
                .build())
        .endMetadata();
  }

  /**
   * Upstream's "system defaulting, nodes don't have zone, pods match service", with the pods
   * matched by their ReplicaSet instead (Services are not known here): the same scores as one
   * hostname constraint with maxSkew 3.
   */
  @Test
  void systemDefaultingNodesDontHaveZonePodsOfOneReplicaSet() {
    Pod pod = ownedBy(pod("p", "foo", ""), "ReplicaSet", "rs1").build();
    List<Pod> existing = new ArrayList<>();
    int[] spread = {4, 3, 2, 1};
    String[] names = {"node-a", "node-b", "node-c", "node-d"};
    for (int n = 0; n < 4; n++) {
      for (int i = 0; i < spread[n]; i++) {
        existing.add(
            ownedBy(pod("p-" + n + i, "foo", ""), "ReplicaSet", "rs1")
                .editSpec()
                .withNodeName(names[n])
                .endSpec()
                .build());
      }
    }
    // a pod of another ReplicaSet with the same labels does not count
    existing.add(
        ownedBy(pod("other", "foo", ""), "ReplicaSet", "rs2")
            .editSpec()
            .withNodeName("node-d")
            .endSpec()
            .build());
    List<Node> nodes = List.of(host("node-a"), host("node-b"), host("node-c"), host("node-d"));
    Map<String, String> got = new LinkedHashMap<>();
    named(nodes, PodTopologySpreadScore.score(input(pod, nodes, existing)))
        .forEach((k, v) -> got.put(k, "" + v));
    assertEquals(pairs("node-a", "44", "node-b", "66", "node-c", "77", "node-d", "100"), got);
  }

  /** A pod without constraints and without a controller of those kinds is not scored. */
  @Test
  void noConstraintsAndNoControllerIsNotScored() {
    List<Node> nodes = List.of(host("node-a"), host("node-b"));
    assertNull(PodTopologySpreadScore.score(input(pod("p").build(), nodes, List.of())));
    Pod ofJob = ownedBy(pod("p"), "Job", "job1").build();
    assertNull(PodTopologySpreadScore.score(input(ofJob, nodes, List.of())));
  }
}
