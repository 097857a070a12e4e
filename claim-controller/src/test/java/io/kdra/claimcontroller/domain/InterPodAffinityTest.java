package io.kdra.claimcontroller.domain;

import static io.kdra.claimcontroller.domain.InterPodAffinity.REASON_AFFINITY;
import static io.kdra.claimcontroller.domain.InterPodAffinity.REASON_ANTI_AFFINITY;
import static io.kdra.claimcontroller.domain.InterPodAffinity.REASON_EXISTING_ANTI_AFFINITY;
import static org.assertj.core.api.Assertions.assertThat;

import io.fabric8.kubernetes.api.model.LabelSelector;
import io.fabric8.kubernetes.api.model.LabelSelectorBuilder;
import io.fabric8.kubernetes.api.model.Node;
import io.fabric8.kubernetes.api.model.NodeBuilder;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.PodAffinityTerm;
import io.fabric8.kubernetes.api.model.PodAffinityTermBuilder;
import io.fabric8.kubernetes.api.model.PodBuilder;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * Cases from upstream's {@code interpodaffinity/filtering_test.go} ({@code
 * TestRequiredAffinitySingleNode}, {@code TestRequiredAffinityMultipleNodes}), named as there.
 */
class InterPodAffinityTest {

  static final Map<String, Map<String, String>> NAMESPACES =
      Map.of(
          "ns", Map.of("team", "team0"),
          "subteam", Map.of("team", "team1"),
          "other", Map.of());

  static LabelSelector sel(String key, String op, String... values) {
    return new LabelSelectorBuilder()
        .addNewMatchExpression()
        .withKey(key)
        .withOperator(op)
        .withValues(values)
        .endMatchExpression()
        .build();
  }

  static PodAffinityTerm term(String topologyKey, LabelSelector selector) {
    return new PodAffinityTermBuilder()
        .withTopologyKey(topologyKey)
        .withLabelSelector(selector)
        .build();
  }

  static PodAffinityTerm inNamespaces(PodAffinityTerm t, String... namespaces) {
    return new PodAffinityTermBuilder(t).withNamespaces(namespaces).build();
  }

  static PodAffinityTerm nsSelector(PodAffinityTerm t, LabelSelector s) {
    return new PodAffinityTermBuilder(t).withNamespaceSelector(s).build();
  }

  /** A pod in {@code ns} with {@code labels}, bound to {@code node} (null: pending). */
  static Pod pod(
      String name,
      String ns,
      String node,
      Map<String, String> labels,
      List<PodAffinityTerm> affinity,
      List<PodAffinityTerm> anti) {
    PodBuilder b =
        new PodBuilder(K.pod(name).build())
            .editMetadata()
            .withNamespace(ns)
            .withLabels(labels)
            .endMetadata()
            .editSpec()
            .withNodeName(node)
            .endSpec();
    if (!affinity.isEmpty() || !anti.isEmpty()) {
      b.editSpec()
          .withNewAffinity()
          .withNewPodAffinity()
          .withRequiredDuringSchedulingIgnoredDuringExecution(affinity)
          .endPodAffinity()
          .withNewPodAntiAffinity()
          .withRequiredDuringSchedulingIgnoredDuringExecution(anti)
          .endPodAntiAffinity()
          .endAffinity()
          .endSpec();
    }
    return b.build();
  }

  static Node node(String name, String... labels) {
    Map<String, String> m = new HashMap<>();
    for (int i = 0; i < labels.length; i += 2) {
      m.put(labels[i], labels[i + 1]);
    }
    return new NodeBuilder(K.readyNode(name)).editMetadata().withLabels(m).endMetadata().build();
  }

  static final Map<String, String> SECURITY = Map.of("service", "securityscan");
  static final Node NODE1 = node("node1", "region", "r1", "zone", "z11", "hostname", "node1");

  static Optional<String> filter(Pod pod, List<Pod> existing, List<Node> nodes, Node node) {
    Map<String, Node> byName = new HashMap<>();
    nodes.forEach(n -> byName.put(n.getMetadata().getName(), n));
    return InterPodAffinity.prefilter(
            pod,
            byName,
            existing,
            existing.stream().filter(InterPodAffinity::hasRequiredAntiAffinity).toList(),
            NAMESPACES)
        .reject(node);
  }

  static Stream<Arguments> singleNode() {
    Pod securityOn1 = pod("x", "ns", "node1", SECURITY, List.of(), List.of());
    PodAffinityTerm securityInRegion =
        term("region", sel("service", "In", "securityscan", "value2"));
    return Stream.of(
        Arguments.of(
            "A pod that has no required pod affinity scheduling rules can schedule onto a node"
                + " with no existing pods",
            pod("p", "ns", null, Map.of(), List.of(), List.of()),
            List.of(),
            null),
        Arguments.of(
            "satisfies with requiredDuringSchedulingIgnoredDuringExecution in PodAffinity using In"
                + " operator that matches the existing pod",
            pod("p", "ns", null, Map.of(), List.of(securityInRegion), List.of()),
            List.of(securityOn1),
            null),
        Arguments.of(
            "satisfies the pod with requiredDuringSchedulingIgnoredDuringExecution in PodAffinity"
                + " using not in operator in labelSelector that matches the existing pod",
            pod(
                "p",
                "ns",
                null,
                Map.of(),
                List.of(term("region", sel("service", "NotIn", "securityscan3", "value3"))),
                List.of()),
            List.of(securityOn1),
            null),
        Arguments.of(
            "Does not satisfy the PodAffinity with labelSelector because of diff Namespace",
            pod(
                "p",
                "ns",
                null,
                Map.of(),
                List.of(inNamespaces(securityInRegion, "DiffNameSpace")),
                List.of()),
            List.of(securityOn1),
            REASON_AFFINITY),
        Arguments.of(
            "Doesn't satisfy the PodAffinity because of unmatching labelSelector with the existing"
                + " pod",
            pod(
                "p",
                "ns",
                null,
                Map.of(),
                List.of(term("region", sel("service", "In", "antivirusscan", "value2"))),
                List.of()),
            List.of(securityOn1),
            REASON_AFFINITY),
        Arguments.of(
            "satisfies the PodAffinity and PodAntiAffinity with the existing pod",
            pod(
                "p",
                "ns",
                null,
                Map.of(),
                List.of(securityInRegion),
                List.of(term("node", sel("service", "In", "antivirusscan", "value2")))),
            List.of(securityOn1),
            null),
        Arguments.of(
            "satisfies the PodAntiAffinity with existing pod but doesn't satisfy PodAntiAffinity"
                + " symmetry with incoming pod",
            pod(
                "p",
                "ns",
                null,
                SECURITY,
                List.of(securityInRegion),
                List.of(term("zone", sel("service", "In", "antivirusscan", "value2")))),
            List.of(
                pod(
                    "x",
                    "ns",
                    "node1",
                    SECURITY,
                    List.of(),
                    List.of(term("zone", sel("service", "In", "securityscan", "value2"))))),
            REASON_EXISTING_ANTI_AFFINITY),
        Arguments.of(
            "PodAntiAffinity symmetry check a1: incoming pod and existing pod partially match each"
                + " other on AffinityTerms",
            pod(
                "p",
                "ns",
                null,
                Map.of("foo", "", "bar", ""),
                List.of(),
                List.of(term("zone", sel("foo", "Exists")))),
            List.of(
                pod(
                    "x",
                    "ns",
                    "node1",
                    Map.of("foo", ""),
                    List.of(),
                    List.of(term("zone", sel("bar", "Exists"))))),
            REASON_ANTI_AFFINITY),
        Arguments.of(
            "verify that PodAntiAffinity from existing pod is respected when pod has no"
                + " AntiAffinity constraints. doesn't satisfy PodAntiAffinity symmetry with the"
                + " existing pod",
            pod("p", "ns", null, SECURITY, List.of(), List.of()),
            List.of(
                pod(
                    "x",
                    "ns",
                    "node1",
                    SECURITY,
                    List.of(),
                    List.of(term("zone", sel("service", "In", "securityscan", "value2"))))),
            REASON_EXISTING_ANTI_AFFINITY),
        Arguments.of(
            "verify that PodAntiAffinity from existing pod is respected when pod has no"
                + " AntiAffinity constraints. satisfy PodAntiAffinity symmetry with the existing"
                + " pod",
            pod("p", "ns", null, SECURITY, List.of(), List.of()),
            List.of(
                pod(
                    "x",
                    "ns",
                    "node1",
                    SECURITY,
                    List.of(),
                    List.of(term("zone", sel("service", "NotIn", "securityscan", "value2"))))),
            null),
        Arguments.of(
            "affinity with matching namespaceSelector",
            pod(
                "p",
                "ns",
                null,
                Map.of(),
                List.of(nsSelector(securityInRegion, sel("team", "In", "team1"))),
                List.of()),
            List.of(pod("x", "subteam", "node1", SECURITY, List.of(), List.of())),
            null),
        Arguments.of(
            "affinity with non-matching namespaceSelector",
            pod(
                "p",
                "ns",
                null,
                Map.of(),
                List.of(nsSelector(securityInRegion, sel("team", "In", "team2"))),
                List.of()),
            List.of(pod("x", "subteam", "node1", SECURITY, List.of(), List.of())),
            REASON_AFFINITY),
        Arguments.of(
            "anti-affinity with matching namespaceSelector",
            pod(
                "p",
                "ns",
                null,
                Map.of(),
                List.of(),
                List.of(nsSelector(term("zone", SECURITY_SELECTOR), sel("team", "In", "team1")))),
            List.of(pod("x", "subteam", "node1", SECURITY, List.of(), List.of())),
            REASON_ANTI_AFFINITY),
        Arguments.of(
            "anti-affinity with matching all namespaces",
            pod(
                "p",
                "ns",
                null,
                Map.of(),
                List.of(),
                List.of(nsSelector(term("zone", SECURITY_SELECTOR), new LabelSelector()))),
            List.of(pod("x", "subteam", "node1", SECURITY, List.of(), List.of())),
            REASON_ANTI_AFFINITY),
        Arguments.of(
            "affinity with matching all namespaces",
            pod(
                "p",
                "ns",
                null,
                Map.of(),
                List.of(nsSelector(securityInRegion, new LabelSelector())),
                List.of()),
            List.of(pod("x", "subteam", "node1", SECURITY, List.of(), List.of())),
            null),
        // not upstream's: an existing pod's namespace selector is matched against the incoming
        // pod's namespace labels
        Arguments.of(
            "existing pod's anti-affinity selects the incoming pod's namespace by its labels",
            pod("p", "subteam", null, SECURITY, List.of(), List.of()),
            List.of(
                pod(
                    "x",
                    "other",
                    "node1",
                    Map.of(),
                    List.of(),
                    List.of(
                        nsSelector(term("zone", SECURITY_SELECTOR), sel("team", "In", "team1"))))),
            REASON_EXISTING_ANTI_AFFINITY));
  }

  static final LabelSelector SECURITY_SELECTOR = sel("service", "In", "securityscan");

  @ParameterizedTest(name = "{0}")
  @MethodSource("singleNode")
  void requiredAffinitySingleNode(String name, Pod pod, List<Pod> existing, String reason) {
    assertThat(filter(pod, existing, List.of(NODE1), NODE1)).isEqualTo(Optional.ofNullable(reason));
  }

  /**
   * "The affinity rule is to schedule all of the pods of this collection to the same zone. The
   * first pod of the collection should not be blocked from being scheduled onto any node, even
   * there's no existing pod that matches the rule anywhere."
   */
  @Test
  void theFirstPodOfACollectionWithAffinityToItselfMayGoAnywhere() {
    Pod first =
        pod(
            "p",
            "ns",
            null,
            Map.of("foo", "bar"),
            List.of(term("zone", sel("foo", "In", "bar"))),
            List.of());
    Node withZone = node("a", "zone", "z1");
    Node without = node("b", "region", "r1");
    List<Node> nodes = List.of(withZone, without);
    assertThat(filter(first, List.of(), nodes, withZone)).isEmpty();
    // "All topology labels must exist on the node"
    assertThat(filter(first, List.of(), nodes, without)).contains(REASON_AFFINITY);
    // once one matching pod is placed, only its zone is allowed
    Pod placed = pod("x", "ns", "a", Map.of("foo", "bar"), List.of(), List.of());
    Node otherZone = node("c", "zone", "z2");
    List<Node> three = List.of(withZone, without, otherZone);
    assertThat(filter(first, List.of(placed), three, withZone)).isEmpty();
    assertThat(filter(first, List.of(placed), three, otherZone)).contains(REASON_AFFINITY);
  }

  /** The user's case: two replicas with anti-affinity on the hostname. */
  @Test
  void antiAffinityOnTheHostnameSpreadsReplicas() {
    List<PodAffinityTerm> anti = List.of(term("kubernetes.io/hostname", sel("app", "In", "web")));
    Node a = node("a", "kubernetes.io/hostname", "a");
    Node b = node("b", "kubernetes.io/hostname", "b");
    Pod first = pod("web-1", "ns", "a", Map.of("app", "web"), List.of(), anti);
    Pod second = pod("web-2", "ns", null, Map.of("app", "web"), List.of(), anti);
    assertThat(filter(second, List.of(first), List.of(a, b), a)).contains(REASON_ANTI_AFFINITY);
    assertThat(filter(second, List.of(first), List.of(a, b), b)).isEmpty();
  }

  @Test
  void nothingToCheckWhenNoPodHasTerms() {
    Pod plain = pod("p", "ns", null, Map.of(), List.of(), List.of());
    Pod other = pod("x", "ns", "node1", Map.of(), List.of(), List.of());
    assertThat(
            InterPodAffinity.prefilter(
                plain, Map.of("node1", NODE1), List.of(other), List.of(), NAMESPACES))
        .isSameAs(InterPodAffinity.NONE);
  }
}
