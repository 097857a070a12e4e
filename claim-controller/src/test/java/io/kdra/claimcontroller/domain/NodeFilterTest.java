package io.kdra.claimcontroller.domain;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.entry;

import io.fabric8.kubernetes.api.model.Node;
import io.fabric8.kubernetes.api.model.NodeSelector;
import io.fabric8.kubernetes.api.model.NodeSelectorBuilder;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.PodBuilder;
import io.fabric8.kubernetes.api.model.Quantity;
import java.util.List;
import java.util.stream.Stream;
import org.junit.jupiter.api.Named;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

class NodeFilterTest {

  static Pod requesting(String cpu, String mem) {
    return K.pod("p")
        .editSpec()
        .editFirstContainer()
        .withNewResources()
        .addToRequests("cpu", new Quantity(cpu))
        .addToRequests("memory", new Quantity(mem))
        .endResources()
        .endContainer()
        .endSpec()
        .build();
  }

  static Pod boundTo(String name, String node, String cpu) {
    return new PodBuilder(requesting(cpu, "1Gi"))
        .editMetadata()
        .withName(name)
        .withUid("uid-" + name)
        .endMetadata()
        .editSpec()
        .withNodeName(node)
        .endSpec()
        .build();
  }

  static NodeSelector inZone(String zone) {
    return new NodeSelectorBuilder()
        .addNewNodeSelectorTerm()
        .addNewMatchExpression()
        .withKey("zone")
        .withOperator("In")
        .withValues(zone)
        .endMatchExpression()
        .endNodeSelectorTerm()
        .build();
  }

  static Stream<Arguments> cases() {
    Pod plain = K.pod("p").build();
    Node tainted =
        K.node("n")
            .editSpec()
            .addNewTaint()
            .withKey("gpu")
            .withValue("yes")
            .withEffect("NoSchedule")
            .endTaint()
            .endSpec()
            .build();
    Node preferTainted =
        K.node("n")
            .editSpec()
            .addNewTaint()
            .withKey("x")
            .withEffect("PreferNoSchedule")
            .endTaint()
            .endSpec()
            .build();
    Node cordoned = K.node("n").editSpec().withUnschedulable(true).endSpec().build();
    Node notReady =
        K.node("n")
            .editStatus()
            .editFirstCondition()
            .withStatus("False")
            .endCondition()
            .endStatus()
            .build();
    Pod tolerant =
        K.pod("p")
            .editSpec()
            .addNewToleration()
            .withKey("gpu")
            .withOperator("Exists")
            .endToleration()
            .endSpec()
            .build();
    Pod tolerantAll =
        K.pod("p")
            .editSpec()
            .addNewToleration()
            .withOperator("Exists")
            .endToleration()
            .endSpec()
            .build();
    Pod wrongValue =
        K.pod("p")
            .editSpec()
            .addNewToleration()
            .withKey("gpu")
            .withValue("no")
            .withEffect("NoSchedule")
            .endToleration()
            .endSpec()
            .build();
    Pod zoneB = K.pod("p").editSpec().addToNodeSelector("zone", "b").endSpec().build();
    Pod affinityA =
        K.pod("p")
            .editSpec()
            .withNewAffinity()
            .withNewNodeAffinity()
            .withRequiredDuringSchedulingIgnoredDuringExecution(inZone("a"))
            .endNodeAffinity()
            .endAffinity()
            .endSpec()
            .build();
    Pod affinityB =
        K.pod("p")
            .editSpec()
            .withNewAffinity()
            .withNewNodeAffinity()
            .withRequiredDuringSchedulingIgnoredDuringExecution(inZone("b"))
            .endNodeAffinity()
            .endAffinity()
            .endSpec()
            .build();
    Node n = K.readyNode("n");
    return Stream.of(
        Arguments.of(Named.of("ready node, no constraints", plain), n, List.of(), List.of(), null),
        Arguments.of(
            Named.of("not ready", plain), notReady, List.of(), List.of(), "node(s) were not ready"),
        Arguments.of(
            Named.of("cordoned", plain),
            cordoned,
            List.of(),
            List.of(),
            "node(s) were unschedulable"),
        Arguments.of(
            Named.of("cordoned, but tolerating everything", tolerantAll),
            cordoned,
            List.of(),
            List.of(),
            null),
        Arguments.of(
            Named.of("untolerated NoSchedule taint", plain),
            tainted,
            List.of(),
            List.of(),
            "node(s) had untolerated taint(s)"),
        Arguments.of(
            Named.of("taint tolerated with Exists", tolerant), tainted, List.of(), List.of(), null),
        Arguments.of(
            Named.of("Equal toleration with another value", wrongValue),
            tainted,
            List.of(),
            List.of(),
            "node(s) had untolerated taint(s)"),
        Arguments.of(
            Named.of("PreferNoSchedule never blocks", plain),
            preferTainted,
            List.of(),
            List.of(),
            null),
        Arguments.of(
            Named.of("nodeSelector mismatch", zoneB),
            n,
            List.of(),
            List.of(),
            "node(s) didn't match Pod's node affinity/selector"),
        Arguments.of(Named.of("required affinity match", affinityA), n, List.of(), List.of(), null),
        Arguments.of(
            Named.of("required affinity mismatch", affinityB),
            n,
            List.of(),
            List.of(),
            "node(s) didn't match Pod's node affinity/selector"),
        Arguments.of(
            Named.of("allocated claim elsewhere", plain),
            n,
            List.of(),
            List.of(inZone("b")),
            "node(s) cannot use the pod's allocated ResourceClaims"),
        Arguments.of(
            Named.of("allocated claim here", plain), n, List.of(), List.of(inZone("a")), null),
        Arguments.of(
            Named.of("cpu fits next to bound pods", requesting("1", "1Gi")),
            n,
            List.of(boundTo("x", "n", "3")),
            List.of(),
            null),
        Arguments.of(
            Named.of("cpu does not fit", requesting("1500m", "1Gi")),
            n,
            List.of(boundTo("x", "n", "3")),
            List.of(),
            "Insufficient cpu"),
        Arguments.of(
            Named.of("pods elsewhere do not count", requesting("2", "1Gi")),
            n,
            List.of(boundTo("x", "other", "4")),
            List.of(),
            null),
        Arguments.of(
            Named.of(
                "spec.nodeName names another node: NodeName's PreFilter, before the rest",
                K.pod("p").editSpec().withNodeName("other").endSpec().build()),
            cordoned,
            List.of(),
            List.of(),
            "node(s) didn't satisfy plugin(s) [NodeName]"),
        Arguments.of(
            Named.of(
                "spec.nodeName names this node",
                K.pod("p").editSpec().withNodeName("n").endSpec().build()),
            n,
            List.of(),
            List.of(),
            null),
        Arguments.of(
            Named.of("memory does not fit", requesting("1", "9Gi")),
            n,
            List.of(),
            List.of(),
            "Insufficient memory"));
  }

  @ParameterizedTest(name = "{0}")
  @MethodSource("cases")
  void filters(
      Pod pod, Node node, List<Pod> others, List<NodeSelector> claimSelectors, String reason) {
    NodeFilter.Result r = NodeFilter.filter(pod, List.of(node), others, claimSelectors);
    if (reason == null) {
      assertThat(r.feasible()).containsExactly(node);
    } else {
      assertThat(r.feasible()).isEmpty();
      assertThat(r.rejected()).containsEntry("n", reason);
    }
  }

  @Test
  void summaryCountsReasonsLikeTheScheduler() {
    Node cordoned = K.node("b").editSpec().withUnschedulable(true).endSpec().build();
    NodeFilter.Result r =
        NodeFilter.filter(
            requesting("1", "9Gi"),
            List.of(K.readyNode("c"), cordoned, K.readyNode("a")),
            List.of(),
            List.of());
    assertThat(r.summary())
        .isEqualTo("0/3 nodes are available: 2 Insufficient memory, 1 node(s) were unschedulable.");
  }

  /**
   * kube-scheduler's default profile runs PodTopologySpread before InterPodAffinity: a node both
   * reject is rejected for the spread (found by SchedulingDifferentialIT).
   */
  @Test
  void spreadIsCheckedBeforePodAffinity() {
    Node a = K.node("a").editMetadata().addToLabels("host", "a").endMetadata().build();
    Node b = K.node("b").editMetadata().addToLabels("host", "b").endMetadata().build();
    Pod web =
        new PodBuilder(boundTo("web", "a", "100m"))
            .editMetadata()
            .addToLabels("app", "web")
            .endMetadata()
            .build();
    Pod pod =
        K.pod("p")
            .editMetadata()
            .addToLabels("app", "web")
            .endMetadata()
            .editSpec()
            .withNewAffinity()
            .withNewPodAntiAffinity()
            .addNewRequiredDuringSchedulingIgnoredDuringExecution()
            .withTopologyKey("host")
            .withNewLabelSelector()
            .addToMatchLabels("app", "web")
            .endLabelSelector()
            .endRequiredDuringSchedulingIgnoredDuringExecution()
            .endPodAntiAffinity()
            .endAffinity()
            .addNewTopologySpreadConstraint()
            .withMaxSkew(1)
            .withTopologyKey("host")
            .withWhenUnsatisfiable("DoNotSchedule")
            .withNewLabelSelector()
            .addToMatchLabels("app", "web")
            .endLabelSelector()
            .endTopologySpreadConstraint()
            .endSpec()
            .build();
    NodeFilter.Result r = NodeFilter.filter(pod, List.of(a, b), List.of(web), List.of());
    assertThat(r.feasible()).containsExactly(b);
    assertThat(r.rejected()).containsExactly(entry("a", PodTopologySpread.REASON));
  }

  /** A required node affinity term naming nodes by {@code metadata.name} (matchFields). */
  static Pod namingNodes(String op, String... names) {
    return K.pod("p")
        .editSpec()
        .withNewAffinity()
        .withNewNodeAffinity()
        .withNewRequiredDuringSchedulingIgnoredDuringExecution()
        .addNewNodeSelectorTerm()
        .addNewMatchField()
        .withKey("metadata.name")
        .withOperator(op)
        .withValues(names)
        .endMatchField()
        .endNodeSelectorTerm()
        .endRequiredDuringSchedulingIgnoredDuringExecution()
        .endNodeAffinity()
        .endAffinity()
        .endSpec()
        .build();
  }

  /**
   * Upstream's NodeAffinity PreFilter narrows the nodes to those its terms name with {@code
   * metadata.name In}: every other node is rejected for that before any filter runs (found by
   * SchedulingDifferentialIT: kdra named the cordon or the taint instead).
   */
  static Stream<Arguments> namedNodes() {
    return Stream.of(
        Arguments.of(
            Named.of("named node passes, others fail the PreFilter", namingNodes("In", "a")),
            List.of(entry("b", "node(s) didn't satisfy plugin(s) [NodeAffinity]"))),
        Arguments.of(
            Named.of("NotIn does not narrow", namingNodes("NotIn", "a")),
            List.of(
                entry("a", "node(s) didn't match Pod's node affinity/selector"),
                entry("b", "node(s) were unschedulable"))),
        Arguments.of(
            Named.of("terms whose names exclude each other conflict", conflicting()),
            List.of(
                entry("a", "pod affinity terms conflict"),
                entry("b", "pod affinity terms conflict"))),
        Arguments.of(
            Named.of(
                "spec.nodeName narrows as NodeName's PreFilter",
                K.pod("p").editSpec().withNodeName("a").endSpec().build()),
            List.of(entry("b", "node(s) didn't satisfy plugin(s) [NodeName]"))),
        Arguments.of(
            Named.of(
                "spec.nodeName and affinity naming the same node",
                withNodeName(namingNodes("In", "a"), "a")),
            List.of(entry("b", "node(s) didn't satisfy plugin(s) [NodeAffinity NodeName]"))),
        Arguments.of(
            Named.of(
                "spec.nodeName and affinity naming other nodes exclude each other",
                withNodeName(namingNodes("In", "a"), "b")),
            List.of(
                entry(
                    "a", "node(s) didn't satisfy plugin(s) [NodeAffinity NodeName] simultaneously"),
                entry(
                    "b",
                    "node(s) didn't satisfy plugin(s) [NodeAffinity NodeName] simultaneously"))));
  }

  private static Pod withNodeName(Pod p, String node) {
    p.getSpec().setNodeName(node);
    return p;
  }

  private static Pod conflicting() {
    Pod p = namingNodes("In", "a");
    var term = p.getSpec().getAffinity().getNodeAffinity();
    term.getRequiredDuringSchedulingIgnoredDuringExecution()
        .getNodeSelectorTerms()
        .get(0)
        .getMatchFields()
        .add(
            new io.fabric8.kubernetes.api.model.NodeSelectorRequirementBuilder()
                .withKey("metadata.name")
                .withOperator("In")
                .withValues("b")
                .build());
    return p;
  }

  @ParameterizedTest(name = "{0}")
  @MethodSource("namedNodes")
  void nodeAffinityPreFilterNarrowsToNamedNodes(
      Pod pod, List<java.util.Map.Entry<String, String>> rejected) {
    Node a = K.readyNode("a");
    Node cordoned = K.node("b").editSpec().withUnschedulable(true).endSpec().build();
    NodeFilter.Result r = NodeFilter.filter(pod, List.of(a, cordoned), List.of(), List.of());
    assertThat(r.rejected()).containsExactlyInAnyOrderEntriesOf(mapOf(rejected));
  }

  private static java.util.Map<String, String> mapOf(
      List<java.util.Map.Entry<String, String>> entries) {
    java.util.Map<String, String> m = new java.util.TreeMap<>();
    entries.forEach(e -> m.put(e.getKey(), e.getValue()));
    return m;
  }

  /**
   * Pod-level requests (PodLevelResources, on by default since 1.34) replace the containers' sum
   * for each resource they name, below or above it; the overhead comes on top (found by
   * SchedulingDifferentialIT: kdra counted the containers only).
   */
  static Stream<Arguments> podLevelRequests() {
    return Stream.of(
        Arguments.of(Named.of("above the containers", "4"), null, null, "4", "1Gi"),
        Arguments.of(Named.of("below the containers", "500m"), null, null, "500m", "1Gi"),
        Arguments.of(Named.of("memory only", null), "3Gi", null, "1", "3Gi"),
        Arguments.of(Named.of("with overhead", "2"), "2Gi", "250m", "2250m", "2Gi"));
  }

  @ParameterizedTest(name = "{0}")
  @MethodSource("podLevelRequests")
  void podLevelRequestsReplaceTheContainers(
      String cpu, String memory, String overheadCpu, String wantCpu, String wantMemory) {
    var spec = requesting("1", "1Gi").edit().editSpec();
    var resources = new io.fabric8.kubernetes.api.model.ResourceRequirements();
    if (cpu != null) {
      resources.setRequests(new java.util.HashMap<>(java.util.Map.of("cpu", new Quantity(cpu))));
    }
    if (memory != null) {
      if (resources.getRequests() == null) {
        resources.setRequests(new java.util.HashMap<>());
      }
      resources.getRequests().put("memory", new Quantity(memory));
    }
    spec.withResources(resources);
    if (overheadCpu != null) {
      spec.addToOverhead("cpu", new Quantity(overheadCpu));
    }
    PodRequests r = PodRequests.of(spec.endSpec().build());
    assertThat(r.cpu()).isEqualByComparingTo(io.kdra.core.model.Quantity.parse(wantCpu));
    assertThat(r.memory()).isEqualByComparingTo(io.kdra.core.model.Quantity.parse(wantMemory));
  }

  @Test
  void sidecarsAddUpAndInitContainersPeak() {
    Pod pod =
        requesting("1", "1Gi")
            .edit()
            .editSpec()
            .addNewInitContainer()
            .withName("sidecar")
            .withRestartPolicy("Always")
            .withNewResources()
            .addToRequests("cpu", new Quantity("500m"))
            .endResources()
            .endInitContainer()
            .addNewInitContainer()
            .withName("init")
            .withNewResources()
            .addToRequests("cpu", new Quantity("2"))
            .endResources()
            .endInitContainer()
            .endSpec()
            .build();
    // containers 1 + sidecar 0.5 = 1.5; init peak = 2 + 0.5 = 2.5
    assertThat(PodRequests.of(pod).cpu().toString()).isEqualTo("2500m");
  }

  @Test
  void aVolumePreFilterRefusalIsEveryNodesReasonAsUpstreamsPreFilterIs() {
    Node tainted =
        K.node("node-a")
            .editSpec()
            .addNewTaint()
            .withKey("dedicated")
            .withEffect("NoSchedule")
            .endTaint()
            .endSpec()
            .build();
    Pod pod = VolumeFiltersTest.podWithClaim("p", "data");
    NodeFilter.Result r =
        NodeFilter.filter(
            pod,
            List.of(tainted, K.readyNode("node-b")),
            List.of(),
            List.of(),
            java.util.Map.of(),
            VolumeObjects.NONE);
    assertThat(r.feasible()).isEmpty();
    assertThat(r.rejected())
        .containsExactly(
            entry("node-a", "persistentvolumeclaim \"data\" not found"),
            entry("node-b", "persistentvolumeclaim \"data\" not found"));
  }

  /**
   * Upstream's framework runs the PreFilters in the profile's order, NodeName and NodeAffinity
   * before the volume plugins, and stops at the first that rejects the pod on every node: names
   * that leave no node are every node's reason even when a claim is missing too; names that leave
   * some nodes let the volume PreFilter's refusal stand for every node (found by
   * SchedulingDifferentialIT, seed 7: kdra named the missing claim where upstream named the
   * plugins).
   */
  static Stream<Arguments> preFilterOrder() {
    String simultaneously =
        "node(s) didn't satisfy plugin(s) [NodeAffinity NodeName] simultaneously";
    String missing = "persistentvolumeclaim \"data\" not found";
    return Stream.of(
        Arguments.of(
            Named.of(
                "spec.nodeName and affinity exclude each other: the framework's refusal first",
                withNodeName(withClaim(namingNodes("In", "a")), "b")),
            simultaneously),
        Arguments.of(
            Named.of(
                "affinity terms conflict: NodeAffinity's PreFilter first",
                withClaim(conflicting())),
            NodeAffinityPreFilter.REASON_CONFLICT),
        Arguments.of(
            Named.of(
                "affinity names a node: the volume PreFilter refuses every node",
                withClaim(namingNodes("In", "a"))),
            missing),
        Arguments.of(
            Named.of(
                "spec.nodeName names a node: the volume PreFilter refuses every node",
                withNodeName(withClaim(K.pod("p").build()), "b")),
            missing));
  }

  @ParameterizedTest(name = "{0}")
  @MethodSource("preFilterOrder")
  void preFiltersRefuseInTheProfilesOrder(Pod pod, String everyNodesReason) {
    NodeFilter.Result r =
        NodeFilter.filter(
            pod,
            List.of(K.readyNode("a"), K.readyNode("b")),
            List.of(),
            List.of(),
            java.util.Map.of(),
            VolumeObjects.NONE);
    assertThat(r.feasible()).isEmpty();
    assertThat(r.rejected())
        .containsExactly(entry("a", everyNodesReason), entry("b", everyNodesReason));
  }

  /** {@code p} with claim {@code data}'s volume, as {@link VolumeFiltersTest#podWithClaim}. */
  private static Pod withClaim(Pod p) {
    p.getSpec()
        .setVolumes(
            VolumeFiltersTest.podWithClaim(p.getMetadata().getName(), "data")
                .getSpec()
                .getVolumes());
    return p;
  }

  @Test
  void volumeFiltersComeAfterNodeResourcesFitAsInTheDefaultProfile() {
    Pod pod =
        new PodBuilder(VolumeFiltersTest.podWithClaim("p", "data"))
            .editSpec()
            .editFirstContainer()
            .withNewResources()
            .addToRequests("cpu", new Quantity("64"))
            .endResources()
            .endContainer()
            .endSpec()
            .build();
    VolumeObjects volumes =
        VolumeObjects.of(
            List.of(VolumeFiltersTest.bound(VolumeFiltersTest.pvc("data"), "pv-1")),
            List.of(VolumeFiltersTest.pvOnZone("pv-1", "z9")),
            List.of(),
            List.of());
    NodeFilter.Result r =
        NodeFilter.filter(
            pod, List.of(K.readyNode("node-a")), List.of(), List.of(), java.util.Map.of(), volumes);
    assertThat(r.rejected()).containsExactly(entry("node-a", "Insufficient cpu"));
  }
}
