package io.kdra.kubectl;

import static org.assertj.core.api.Assertions.assertThat;

import io.fabric8.kubernetes.api.model.Node;
import io.fabric8.kubernetes.api.model.NodeBuilder;
import io.fabric8.kubernetes.api.model.PersistentVolume;
import io.fabric8.kubernetes.api.model.PersistentVolumeBuilder;
import io.fabric8.kubernetes.api.model.PersistentVolumeClaim;
import io.fabric8.kubernetes.api.model.PersistentVolumeClaimBuilder;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.PodBuilder;
import io.kdra.claimcontroller.domain.VolumeFilters;
import io.kdra.claimcontroller.domain.VolumeObjects;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/**
 * The filters that read more than nodes and pods: the volume plugins (PersistentVolumeClaims and
 * what they bind) and pod affinity's namespace selectors (namespaces' labels). The answer must be
 * the claim-controller's, which reads both from its informers.
 */
class PodWhyFiltersTest {

  private static final String HOSTNAME = "kubernetes.io/hostname";

  private final List<Node> nodes = List.of(node("node-a"), node("node-b"), node("node-c"));

  @Test
  void aClaimThatDoesNotExistRefusesThePodOnEveryNodeAsThePreFilterSays() {
    Pod pod = withVolumeClaim("uses-data", "data");
    PodWhy.Answer a = explain(pod, state(List.of(pod), Map.of(), volumes(List.of(), List.of())));
    assertThat(a.state()).isEqualTo(PodWhy.State.UNSCHEDULABLE);
    assertThat(a.message())
        .isEqualTo("0/3 nodes are available: persistentvolumeclaim \"data\" not found.");
  }

  @Test
  void aBoundVolumesNodeAffinityLeavesOnlyItsNode() {
    Pod pod = withVolumeClaim("uses-data", "data");
    VolumeObjects v = volumes(List.of(boundClaim("data", "pv-data")), List.of(pvOn("pv-data")));
    PodWhy.Answer a = explain(pod, state(List.of(pod), Map.of(), v));
    assertThat(a.state()).as(a.message()).isEqualTo(PodWhy.State.FITS);
    assertThat(a.node()).isEqualTo("node-b");
    assertThat(a.nodes())
        .contains(
            new PodWhy.NodeRow("node-a", VolumeFilters.REASON_NODE_CONFLICT),
            new PodWhy.NodeRow("node-c", VolumeFilters.REASON_NODE_CONFLICT));
  }

  @Test
  void volumesThatCouldNotBeReadLeaveTheVolumeFiltersOut() {
    Pod pod = withVolumeClaim("uses-data", "data");
    PodWhy.Answer a = explain(pod, state(List.of(pod), Map.of(), null));
    assertThat(a.state()).isEqualTo(PodWhy.State.FITS);
    assertThat(a.node()).isEqualTo("node-a");
  }

  @Test
  void podAffinityWithANamespaceSelectorReadsTheNamespacesLabels() {
    Pod peer =
        new PodBuilder()
            .withNewMetadata()
            .withNamespace("team-a")
            .withName("peer")
            .withUid("uid-peer")
            .withLabels(Map.of("app", "peer"))
            .endMetadata()
            .withNewSpec()
            .withNodeName("node-c")
            .endSpec()
            .build();
    Pod pod =
        new PodBuilder(pod("near-peer"))
            .editSpec()
            .withNewAffinity()
            .withNewPodAffinity()
            .addNewRequiredDuringSchedulingIgnoredDuringExecution()
            .withTopologyKey(HOSTNAME)
            .withNewLabelSelector()
            .addToMatchLabels("app", "peer")
            .endLabelSelector()
            .withNewNamespaceSelector()
            .addToMatchLabels("team", "a")
            .endNamespaceSelector()
            .endRequiredDuringSchedulingIgnoredDuringExecution()
            .endPodAffinity()
            .endAffinity()
            .endSpec()
            .build();
    Map<String, Map<String, String>> labels = Map.of("team-a", Map.of("team", "a"), "ml", Map.of());

    PodWhy.Answer a = explain(pod, state(List.of(peer, pod), labels, null));

    assertThat(a.state()).isEqualTo(PodWhy.State.FITS);
    assertThat(a.node()).isEqualTo("node-c");
  }

  private static PodWhy.Answer explain(Pod pod, ClusterState state) {
    return PodWhy.explain(pod, state, Main.options());
  }

  private ClusterState state(
      List<Pod> pods, Map<String, Map<String, String>> labels, VolumeObjects volumes) {
    return new ClusterState(
        nodes, pods, List.of(), List.of(), List.of(), List.of(), labels, volumes);
  }

  private static VolumeObjects volumes(
      List<PersistentVolumeClaim> pvcs, List<PersistentVolume> pvs) {
    return VolumeObjects.of(pvcs, pvs, List.of(), List.of());
  }

  private static Node node(String name) {
    return new NodeBuilder()
        .withNewMetadata()
        .withName(name)
        .withLabels(Map.of(HOSTNAME, name))
        .endMetadata()
        .withNewStatus()
        .addNewCondition()
        .withType("Ready")
        .withStatus("True")
        .endCondition()
        .endStatus()
        .build();
  }

  private static Pod pod(String name) {
    return new PodBuilder()
        .withNewMetadata()
        .withNamespace("ml")
        .withName(name)
        .withUid("uid-" + name)
        .endMetadata()
        .withNewSpec()
        .withSchedulerName("dra-claim-controller")
        .addNewContainer()
        .withName("main")
        .withImage("trainer:1")
        .endContainer()
        .endSpec()
        .build();
  }

  private static Pod withVolumeClaim(String name, String claim) {
    return new PodBuilder(pod(name))
        .editSpec()
        .addNewVolume()
        .withName("data")
        .withNewPersistentVolumeClaim()
        .withClaimName(claim)
        .endPersistentVolumeClaim()
        .endVolume()
        .endSpec()
        .build();
  }

  private static PersistentVolumeClaim boundClaim(String name, String volume) {
    return new PersistentVolumeClaimBuilder()
        .withNewMetadata()
        .withNamespace("ml")
        .withName(name)
        .withUid("uid-pvc-" + name)
        .withAnnotations(Map.of("pv.kubernetes.io/bind-completed", "yes"))
        .endMetadata()
        .withNewSpec()
        .withVolumeName(volume)
        .withStorageClassName("")
        .endSpec()
        .withNewStatus()
        .withPhase("Bound")
        .endStatus()
        .build();
  }

  /** A local volume on node-b alone. */
  private static PersistentVolume pvOn(String name) {
    return new PersistentVolumeBuilder()
        .withNewMetadata()
        .withName(name)
        .endMetadata()
        .withNewSpec()
        .withStorageClassName("")
        .withNewClaimRef()
        .withNamespace("ml")
        .withName("data")
        .withUid("uid-pvc-data")
        .endClaimRef()
        .withNewNodeAffinity()
        .withNewRequired()
        .addNewNodeSelectorTerm()
        .addNewMatchExpression()
        .withKey(HOSTNAME)
        .withOperator("In")
        .withValues("node-b")
        .endMatchExpression()
        .endNodeSelectorTerm()
        .endRequired()
        .endNodeAffinity()
        .endSpec()
        .withNewStatus()
        .withPhase("Bound")
        .endStatus()
        .build();
  }
}
