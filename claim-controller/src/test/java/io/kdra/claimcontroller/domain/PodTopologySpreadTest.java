package io.kdra.claimcontroller.domain;

import static io.kdra.claimcontroller.domain.PodTopologySpread.REASON;
import static io.kdra.claimcontroller.domain.PodTopologySpread.REASON_MISSING_LABEL;
import static org.assertj.core.api.Assertions.assertThat;

import io.fabric8.kubernetes.api.model.LabelSelector;
import io.fabric8.kubernetes.api.model.LabelSelectorBuilder;
import io.fabric8.kubernetes.api.model.Node;
import io.fabric8.kubernetes.api.model.NodeBuilder;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.PodBuilder;
import io.fabric8.kubernetes.api.model.TopologySpreadConstraint;
import io.fabric8.kubernetes.api.model.TopologySpreadConstraintBuilder;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.function.UnaryOperator;
import org.junit.jupiter.api.Test;

/**
 * Cases after upstream's {@code podtopologyspread/filtering_test.go} ({@code TestSingleConstraint},
 * {@code TestMultipleConstraints}), named as there where they are its own. Nodes: node-a and node-b
 * in zone1, node-x and node-y in zone2, each labelled {@code node}.
 */
class PodTopologySpreadTest {

  static final LabelSelector FOO =
      new LabelSelectorBuilder()
          .addNewMatchExpression()
          .withKey("foo")
          .withOperator("Exists")
          .endMatchExpression()
          .build();

  static Node node(String name, String zone) {
    NodeBuilder b =
        new NodeBuilder(K.readyNode(name))
            .editMetadata()
            .withLabels(new LinkedHashMap<>())
            .addToLabels("node", name)
            .endMetadata();
    if (zone != null) {
      b.editMetadata().addToLabels("zone", zone).endMetadata();
    }
    return b.build();
  }

  static final List<Node> NODES =
      List.of(
          node("node-a", "zone1"),
          node("node-b", "zone1"),
          node("node-x", "zone2"),
          node("node-y", "zone2"));

  static TopologySpreadConstraint hard(int maxSkew, String key, LabelSelector s) {
    return new TopologySpreadConstraintBuilder()
        .withMaxSkew(maxSkew)
        .withTopologyKey(key)
        .withWhenUnsatisfiable("DoNotSchedule")
        .withLabelSelector(s)
        .build();
  }

  static Pod incoming(Map<String, String> labels, TopologySpreadConstraint... cs) {
    return new PodBuilder(K.pod("p").build())
        .editMetadata()
        .withLabels(labels)
        .endMetadata()
        .editSpec()
        .withTopologySpreadConstraints(cs)
        .endSpec()
        .build();
  }

  /** {@code n} pods labelled {@code labels} on each node, given as node, n, node, n... */
  static List<Pod> placed(Map<String, String> labels, Object... nodeAndCount) {
    List<Pod> pods = new ArrayList<>();
    for (int i = 0; i < nodeAndCount.length; i += 2) {
      for (int j = 0; j < (Integer) nodeAndCount[i + 1]; j++) {
        String name = nodeAndCount[i] + "-" + j + "-" + labels.hashCode();
        pods.add(
            new PodBuilder(K.pod(name).build())
                .editMetadata()
                .withLabels(labels)
                .endMetadata()
                .editSpec()
                .withNodeName((String) nodeAndCount[i])
                .endSpec()
                .build());
      }
    }
    return pods;
  }

  /** The nodes that pass, by name. */
  static List<String> fits(Pod pod, List<Node> nodes, List<Pod> existing) {
    PodTopologySpread s = PodTopologySpread.prefilter(pod, nodes, existing);
    return nodes.stream()
        .filter(n -> s.reject(n).isEmpty())
        .map(n -> n.getMetadata().getName())
        .toList();
  }

  static final Map<String, String> FOO_LABELS = Map.of("foo", "");

  @Test
  void noExistingPods() {
    assertThat(fits(incoming(FOO_LABELS, hard(1, "zone", FOO)), NODES, List.of()))
        .containsExactly("node-a", "node-b", "node-x", "node-y");
  }

  @Test
  void podsSpreadAcrossNodesAs2_1_0_3OnlyNodeXFits() {
    List<Pod> existing = placed(FOO_LABELS, "node-a", 2, "node-b", 1, "node-y", 3);
    assertThat(fits(incoming(FOO_LABELS, hard(1, "node", FOO)), NODES, existing))
        .containsExactly("node-x");
    // "pods spread across nodes as 2/1/0/3, maxSkew is 2, node-b and node-x fit"
    assertThat(fits(incoming(FOO_LABELS, hard(2, "node", FOO)), NODES, existing))
        .containsExactly("node-b", "node-x");
  }

  @Test
  void podsSpreadAcrossZonesAs3_3AllNodesFit() {
    List<Pod> existing = placed(FOO_LABELS, "node-a", 2, "node-b", 1, "node-x", 1, "node-y", 2);
    assertThat(fits(incoming(FOO_LABELS, hard(1, "zone", FOO)), NODES, existing))
        .containsExactly("node-a", "node-b", "node-x", "node-y");
  }

  @Test
  void podsSpreadAcrossZonesAs1_2DueToAbsenceOfLabelZoneOnNodeB() {
    List<Node> nodes =
        List.of(
            node("node-a", "zone1"),
            node("node-b", null),
            node("node-x", "zone2"),
            node("node-y", "zone2"));
    List<Pod> existing = placed(FOO_LABELS, "node-a", 1, "node-b", 1, "node-x", 1, "node-y", 1);
    PodTopologySpread s =
        PodTopologySpread.prefilter(incoming(FOO_LABELS, hard(1, "zone", FOO)), nodes, existing);
    assertThat(s.reject(nodes.get(0))).isEmpty();
    assertThat(s.reject(nodes.get(1))).contains(REASON_MISSING_LABEL);
    assertThat(s.reject(nodes.get(2))).contains(REASON);
  }

  @Test
  void podCannotBeScheduledAsAllNodesDontHaveLabelRack() {
    assertThat(fits(incoming(FOO_LABELS, hard(1, "rack", FOO)), NODES, List.of())).isEmpty();
    assertThat(
            PodTopologySpread.prefilter(
                    incoming(FOO_LABELS, hard(1, "rack", FOO)), NODES, List.of())
                .reject(NODES.get(0)))
        .contains(REASON_MISSING_LABEL);
  }

  @Test
  void incomingPodDoesNotMatchItself() {
    // "no existing pods, incoming pod doesn't match itself"; and then it adds no skew
    List<Pod> existing = placed(FOO_LABELS, "node-a", 1);
    assertThat(fits(incoming(Map.of("bar", ""), hard(1, "zone", FOO)), NODES, existing))
        .containsExactly("node-a", "node-b", "node-x", "node-y");
  }

  @Test
  void existingPodsInADifferentNamespaceDoNotCount() {
    List<Pod> existing = placed(FOO_LABELS, "node-a", 3);
    existing.forEach(p -> p.getMetadata().setNamespace("ns2"));
    assertThat(fits(incoming(FOO_LABELS, hard(1, "zone", FOO)), NODES, existing))
        .containsExactly("node-a", "node-b", "node-x", "node-y");
  }

  @Test
  void terminatingPodsDoNotCount() {
    List<Pod> existing = placed(FOO_LABELS, "node-a", 3);
    existing.forEach(p -> p.getMetadata().setDeletionTimestamp("2026-01-01T00:00:00Z"));
    assertThat(fits(incoming(FOO_LABELS, hard(1, "zone", FOO)), NODES, existing))
        .containsExactly("node-a", "node-b", "node-x", "node-y");
  }

  /** Upstream's {@code countPodsMatchSelector}: an empty selector counts nothing. */
  @Test
  void anEmptySelectorCountsNoPod() {
    List<Pod> existing = placed(FOO_LABELS, "node-a", 3);
    assertThat(fits(incoming(FOO_LABELS, hard(1, "zone", new LabelSelector())), NODES, existing))
        .containsExactly("node-a", "node-b", "node-x", "node-y");
  }

  @Test
  void minDomainsTreatsTheGlobalMinimumAsZeroWhileTooFewDomainsExist() {
    // 1 in zone1, 1 in zone2: with 2 domains and minDomains 3, the minimum is 0
    List<Pod> existing = placed(FOO_LABELS, "node-a", 1, "node-x", 1);
    TopologySpreadConstraint c =
        new TopologySpreadConstraintBuilder(hard(1, "zone", FOO)).withMinDomains(3).build();
    assertThat(fits(incoming(FOO_LABELS, c), NODES, existing)).isEmpty();
    TopologySpreadConstraint two =
        new TopologySpreadConstraintBuilder(hard(1, "zone", FOO)).withMinDomains(2).build();
    assertThat(fits(incoming(FOO_LABELS, two), NODES, existing)).hasSize(4);
  }

  @Test
  void nodeAffinityPolicyHonorCountsOnlyNodesThePodMayUse() {
    // the pod may only use node-a and node-x (nodeSelector); node-y's pods then do not count
    List<Node> nodes = new ArrayList<>();
    for (Node n : NODES) {
      boolean usable = List.of("node-a", "node-x").contains(n.getMetadata().getName());
      nodes.add(
          usable
              ? new NodeBuilder(n).editMetadata().addToLabels("ok", "1").endMetadata().build()
              : n);
    }
    List<Pod> existing = placed(FOO_LABELS, "node-a", 1, "node-y", 5);
    UnaryOperator<Pod> selecting =
        p -> new PodBuilder(p).editSpec().addToNodeSelector("ok", "1").endSpec().build();
    // Honor (default): zone2 counts 0 on node-x, zone1 1: zone2 fits, zone1 (1 + 1 - 0 > 1) not
    // (node-y passes this filter by its zone; NodeAffinity rejects it before)
    assertThat(fits(selecting.apply(incoming(FOO_LABELS, hard(1, "zone", FOO))), nodes, existing))
        .containsExactly("node-x", "node-y");
    // Ignore: zone2 counts node-y's 5, so zone1 (1 + 1 - 1) fits and zone2 does not
    TopologySpreadConstraint ignore =
        new TopologySpreadConstraintBuilder(hard(1, "zone", FOO))
            .withNodeAffinityPolicy("Ignore")
            .build();
    assertThat(fits(selecting.apply(incoming(FOO_LABELS, ignore)), nodes, existing))
        .containsExactly("node-a", "node-b");
  }

  @Test
  void nodeTaintsPolicyHonorSkipsUntoleratedNodes() {
    Node tainted =
        new NodeBuilder(node("node-x", "zone2"))
            .editSpec()
            .addNewTaint()
            .withKey("k")
            .withEffect("NoSchedule")
            .endTaint()
            .endSpec()
            .build();
    List<Node> nodes = List.of(node("node-a", "zone1"), tainted);
    List<Pod> existing = placed(FOO_LABELS, "node-a", 1);
    // Ignore (default): zone2 is a domain with 0 pods, so zone1 (1 + 1 - 0) does not fit
    assertThat(fits(incoming(FOO_LABELS, hard(1, "zone", FOO)), nodes, existing))
        .containsExactly("node-x");
    TopologySpreadConstraint honor =
        new TopologySpreadConstraintBuilder(hard(1, "zone", FOO))
            .withNodeTaintsPolicy("Honor")
            .build();
    // Honor: zone2 is no domain; zone1 is the minimum
    assertThat(fits(incoming(FOO_LABELS, honor), nodes, existing))
        .containsExactly("node-a", "node-x");
  }

  @Test
  void matchLabelKeysNarrowTheSelectorToThePodsValues() {
    List<Pod> oldRevision = placed(Map.of("foo", "", "rev", "1"), "node-a", 2);
    TopologySpreadConstraint c =
        new TopologySpreadConstraintBuilder(hard(1, "zone", FOO)).withMatchLabelKeys("rev").build();
    assertThat(fits(incoming(Map.of("foo", "", "rev", "2"), c), NODES, oldRevision)).hasSize(4);
    assertThat(fits(incoming(Map.of("foo", "", "rev", "1"), c), NODES, oldRevision))
        .containsExactly("node-x", "node-y");
  }

  /**
   * {@code TestMultipleConstraints}: "two Constraints on zone and node, spreads = [3/3, 2/1/0/3]".
   */
  @Test
  void twoConstraintsOnZoneAndNode() {
    List<Pod> existing = placed(FOO_LABELS, "node-a", 2, "node-b", 1, "node-y", 3);
    // zone: 3/3 → any; node: 2/1/0/3 → only node-x
    assertThat(
            fits(incoming(FOO_LABELS, hard(1, "zone", FOO), hard(1, "node", FOO)), NODES, existing))
        .containsExactly("node-x");
  }

  @Test
  void scheduleAnywayNeverFilters() {
    TopologySpreadConstraint soft =
        new TopologySpreadConstraintBuilder(hard(1, "node", FOO))
            .withWhenUnsatisfiable("ScheduleAnyway")
            .build();
    assertThat(
            PodTopologySpread.prefilter(
                incoming(FOO_LABELS, soft), NODES, placed(FOO_LABELS, "node-a", 9)))
        .isSameAs(PodTopologySpread.NONE);
  }
}
