package io.kdra.claimcontroller.scheduling;

import static io.kdra.claimcontroller.domain.K.NS;
import static org.assertj.core.api.Assertions.assertThat;

import io.fabric8.kubernetes.api.model.Node;
import io.fabric8.kubernetes.api.model.NodeBuilder;
import io.fabric8.kubernetes.api.model.PersistentVolume;
import io.fabric8.kubernetes.api.model.PersistentVolumeBuilder;
import io.fabric8.kubernetes.api.model.PersistentVolumeClaimBuilder;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.PodBuilder;
import io.fabric8.kubernetes.api.model.Quantity;
import io.fabric8.kubernetes.api.model.storage.CSIDriverBuilder;
import io.fabric8.kubernetes.api.model.storage.CSIStorageCapacityBuilder;
import io.fabric8.kubernetes.api.model.storage.StorageClassBuilder;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.server.mock.EnableKubernetesMockClient;
import io.kdra.claimcontroller.domain.K;
import io.kdra.claimcontroller.domain.TemplateMode;
import io.kdra.claimcontroller.k8s.ClaimWriter;
import io.kdra.claimcontroller.k8s.PodBinder;
import io.kdra.claimcontroller.k8s.PodWriter;
import io.kdra.events.EventRecorder;
import java.time.Clock;
import java.util.function.UnaryOperator;
import org.junit.jupiter.api.Test;

/**
 * The users' cases of the filters that look at placed pods, end to end against the fabric8 mock API
 * server: replicas of one workload, scheduled one after the other, the second kept off the first
 * one's node with kube-scheduler's reason in its {@code PodScheduled} condition.
 */
@EnableKubernetesMockClient(crud = true)
class PlacedPodFiltersSchedulingTest {

  KubernetesClient client;

  final PodBinder binder =
      (pod, node) ->
          client
              .pods()
              .inNamespace(NS)
              .withName(pod.getMetadata().getName())
              .edit(p -> new PodBuilder(p).editSpec().withNodeName(node).endSpec().build());

  PodScheduling scheduling() {
    ApiView view = new ApiView(client);
    return new PodScheduling(
        view,
        new RecentWrites(),
        new PodScheduling.Writers(
            new ClaimWriter(client, K.SCHEDULER, 3),
            new PodWriter(client, 3, Clock.systemUTC()),
            binder,
            new EventRecorder(client, K.SCHEDULER, Clock.systemUTC())),
        new FakeAllocator(2),
        PodScheduling.Settings.of(TemplateMode.OWN, ClaimTracer.NOOP));
  }

  void nodes(String... names) {
    for (String n : names) {
      Node node =
          new NodeBuilder(K.readyNode(n))
              .editMetadata()
              .addToLabels("kubernetes.io/hostname", n)
              .endMetadata()
              .build();
      client.nodes().resource(node).create();
    }
  }

  Pod replica(String name, UnaryOperator<PodBuilder> spec) {
    PodBuilder b = K.pod(name).editMetadata().addToLabels("app", "web").endMetadata();
    return client.resource(spec.apply(b).build()).create();
  }

  static PodBuilder antiAffinity(PodBuilder b) {
    return b.editSpec()
        .withNewAffinity()
        .withNewPodAntiAffinity()
        .addNewRequiredDuringSchedulingIgnoredDuringExecution()
        .withTopologyKey("kubernetes.io/hostname")
        .withNewLabelSelector()
        .addToMatchLabels("app", "web")
        .endLabelSelector()
        .endRequiredDuringSchedulingIgnoredDuringExecution()
        .endPodAntiAffinity()
        .endAffinity()
        .endSpec();
  }

  static PodBuilder hostPort(PodBuilder b) {
    return b.editSpec()
        .editFirstContainer()
        .addNewPort()
        .withContainerPort(8080)
        .withHostPort(8080)
        .endPort()
        .endContainer()
        .endSpec();
  }

  static PodBuilder spread(PodBuilder b) {
    return b.editSpec()
        .addNewTopologySpreadConstraint()
        .withMaxSkew(1)
        .withTopologyKey("kubernetes.io/hostname")
        .withWhenUnsatisfiable("DoNotSchedule")
        .withNewLabelSelector()
        .addToMatchLabels("app", "web")
        .endLabelSelector()
        .endTopologySpreadConstraint()
        .endSpec();
  }

  /** Schedules the second replica after the first and returns its outcome. */
  Outcome secondAfterFirst(UnaryOperator<PodBuilder> spec) {
    PodScheduling s = scheduling();
    assertThat(s.schedule(replica("web-1", spec))).isEqualTo(new Outcome.Bound("node-a"));
    return s.schedule(replica("web-2", spec));
  }

  /** The outcome is Unschedulable with {@code message}, and the pod's condition says so. */
  void staysPendingWith(String pod, Outcome o, String message) {
    assertThat(o).isInstanceOf(Outcome.Unschedulable.class);
    assertThat(((Outcome.Unschedulable) o).message()).isEqualTo(message);
    PodWriter writer = new PodWriter(client, 3, Clock.systemUTC());
    Pod now = client.pods().inNamespace(NS).withName(pod).get();
    writer.markUnschedulable(now, message);
    now = client.pods().inNamespace(NS).withName(pod).get();
    assertThat(now.getSpec().getNodeName()).isNull();
    assertThat(now.getStatus().getConditions())
        .singleElement()
        .satisfies(
            c -> {
              assertThat(c.getType()).isEqualTo("PodScheduled");
              assertThat(c.getStatus()).isEqualTo("False");
              assertThat(c.getMessage()).isEqualTo(message);
            });
  }

  @Test
  void requiredAntiAffinityKeepsTheSecondReplicaPending() {
    nodes("node-a");
    staysPendingWith(
        "web-2",
        secondAfterFirst(PlacedPodFiltersSchedulingTest::antiAffinity),
        "0/1 nodes are available: 1 node(s) didn't match pod anti-affinity rules.");
  }

  @Test
  void requiredAntiAffinityPutsTheSecondReplicaOnAnotherNode() {
    nodes("node-a", "node-b");
    assertThat(secondAfterFirst(PlacedPodFiltersSchedulingTest::antiAffinity))
        .isEqualTo(new Outcome.Bound("node-b"));
  }

  @Test
  void anExistingPodsAntiAffinityKeepsOthersAway() {
    nodes("node-a");
    PodScheduling s = scheduling();
    assertThat(s.schedule(replica("web-1", PlacedPodFiltersSchedulingTest::antiAffinity)))
        .isEqualTo(new Outcome.Bound("node-a"));
    staysPendingWith(
        "web-2",
        s.schedule(replica("web-2", b -> b)),
        "0/1 nodes are available: 1 node(s) didn't satisfy existing pods anti-affinity rules.");
  }

  @Test
  void doNotScheduleSpreadPutsTheSecondReplicaOnAnotherNode() {
    nodes("node-a", "node-b");
    assertThat(secondAfterFirst(PlacedPodFiltersSchedulingTest::spread))
        .isEqualTo(new Outcome.Bound("node-b"));
  }

  @Test
  void doNotScheduleSpreadKeepsAThirdReplicaPendingWhenTheSkewWouldGrow() {
    nodes("node-a", "node-b");
    PodScheduling s = scheduling();
    // node-b is cordoned after the first two: it still is a domain (nodeTaintsPolicy Ignore)
    assertThat(secondAfterFirst(PlacedPodFiltersSchedulingTest::spread))
        .isEqualTo(new Outcome.Bound("node-b"));
    assertThat(s.schedule(replica("web-3", PlacedPodFiltersSchedulingTest::spread)))
        .isEqualTo(new Outcome.Bound("node-a"));
    client
        .nodes()
        .withName("node-b")
        .edit(n -> new NodeBuilder(n).editSpec().withUnschedulable(true).endSpec().build());
    staysPendingWith(
        "web-4",
        s.schedule(replica("web-4", PlacedPodFiltersSchedulingTest::spread)),
        "0/2 nodes are available: 1 node(s) didn't match pod topology spread constraints, 1"
            + " node(s) were unschedulable.");
  }

  @Test
  void aTakenHostPortKeepsTheSecondReplicaPending() {
    nodes("node-a");
    staysPendingWith(
        "web-2",
        secondAfterFirst(PlacedPodFiltersSchedulingTest::hostPort),
        "0/1 nodes are available: 1 node(s) didn't have free ports for the requested pod ports.");
  }

  /** PV {@code pv-1}, which only {@code node} can reach. */
  void volumeOn(String node) {
    client
        .persistentVolumes()
        .resource(
            new PersistentVolumeBuilder()
                .withNewMetadata()
                .withName("pv-1")
                .endMetadata()
                .withNewSpec()
                .withNewNodeAffinity()
                .withNewRequired()
                .addNewNodeSelectorTerm()
                .addNewMatchExpression()
                .withKey("kubernetes.io/hostname")
                .withOperator("In")
                .withValues(node)
                .endMatchExpression()
                .endNodeSelectorTerm()
                .endRequired()
                .endNodeAffinity()
                .endSpec()
                .build())
        .create();
  }

  static PodBuilder withClaim(PodBuilder b) {
    return b.editSpec()
        .addNewVolume()
        .withName("data")
        .withNewPersistentVolumeClaim()
        .withClaimName("data")
        .endPersistentVolumeClaim()
        .endVolume()
        .endSpec();
  }

  /** Claim {@code data} bound to PV {@code pv-1}, which only {@code node} can reach. */
  void claimBoundToAVolumeOn(String node) {
    volumeOn(node);
    client
        .persistentVolumeClaims()
        .resource(
            new PersistentVolumeClaimBuilder()
                .withNewMetadata()
                .withNamespace(NS)
                .withName("data")
                .addToAnnotations("pv.kubernetes.io/bind-completed", "yes")
                .endMetadata()
                .withNewSpec()
                .withVolumeName("pv-1")
                .endSpec()
                .build())
        .create();
  }

  @Test
  void aPodWhoseClaimIsMissingWaitsWithUpstreamsReasonThenLandsWhereItsVolumeIs() {
    nodes("node-a", "node-b");
    PodScheduling s = scheduling();
    staysPendingWith(
        "web-1",
        s.schedule(replica("web-1", PlacedPodFiltersSchedulingTest::withClaim)),
        "0/2 nodes are available: persistentvolumeclaim \"data\" not found.");
    claimBoundToAVolumeOn("node-b");
    Pod again = client.pods().inNamespace(NS).withName("web-1").get();
    assertThat(s.schedule(again)).isEqualTo(new Outcome.Bound("node-b"));
  }

  /**
   * NodeAffinity's PreFilter runs before the volume plugins' in upstream's profile: node names that
   * exclude each other are the pod's reason even while its claim is missing too.
   */
  @Test
  void conflictingNodeNamesAreThePodsReasonBeforeItsMissingClaim() {
    nodes("node-a", "node-b");
    staysPendingWith(
        "web-1",
        scheduling()
            .schedule(
                replica(
                    "web-1",
                    b ->
                        withClaim(
                            b.editSpec()
                                .withNewAffinity()
                                .withNewNodeAffinity()
                                .withNewRequiredDuringSchedulingIgnoredDuringExecution()
                                .addNewNodeSelectorTerm()
                                .addNewMatchField()
                                .withKey("metadata.name")
                                .withOperator("In")
                                .withValues("node-a")
                                .endMatchField()
                                .addNewMatchField()
                                .withKey("metadata.name")
                                .withOperator("In")
                                .withValues("node-b")
                                .endMatchField()
                                .endNodeSelectorTerm()
                                .endRequiredDuringSchedulingIgnoredDuringExecution()
                                .endNodeAffinity()
                                .endAffinity()
                                .endSpec()))),
        "0/2 nodes are available: 2 pod affinity terms conflict.");
  }

  @Test
  void aClaimBoundToAVolumeOnACordonedNodeKeepsThePodPendingWithUpstreamsReasons() {
    nodes("node-a", "node-b");
    claimBoundToAVolumeOn("node-b");
    client
        .nodes()
        .withName("node-b")
        .edit(n -> new NodeBuilder(n).editSpec().withUnschedulable(true).endSpec().build());
    staysPendingWith(
        "web-1",
        scheduling().schedule(replica("web-1", PlacedPodFiltersSchedulingTest::withClaim)),
        "0/2 nodes are available: 1 node(s) didn't match PersistentVolume's node affinity, 1"
            + " node(s) were unschedulable.");
  }

  @Test
  void aClaimWaitingForItsFirstConsumerIsProvisionedOnTheChosenNodeThenThePodIsBoundThere() {
    nodes("node-a", "node-b");
    client
        .nodes()
        .withName("node-a")
        .edit(n -> new NodeBuilder(n).editSpec().withUnschedulable(true).endSpec().build());
    waitForFirstConsumerClass("local", "csi.example.com");
    client
        .persistentVolumeClaims()
        .resource(
            new PersistentVolumeClaimBuilder()
                .withNewMetadata()
                .withNamespace(NS)
                .withName("data")
                .endMetadata()
                .withNewSpec()
                .withStorageClassName("local")
                .endSpec()
                .build())
        .create();
    PodScheduling s = scheduling();
    Outcome first = s.schedule(replica("web-1", PlacedPodFiltersSchedulingTest::withClaim));
    assertThat(first)
        .isEqualTo(
            new Outcome.Waiting(
                "pod ns/web-1 waits for PersistentVolumeClaim(s) ns/data to be provisioned on"
                    + " node node-b and bound"));
    assertThat(client.pods().inNamespace(NS).withName("web-1").get().getSpec().getNodeName())
        .isNull();
    assertThat(
            client
                .persistentVolumeClaims()
                .inNamespace(NS)
                .withName("data")
                .get()
                .getMetadata()
                .getAnnotations())
        .containsEntry("volume.kubernetes.io/selected-node", "node-b");
    // the provisioner's part: a volume on node-b, the claim bound to it
    volumeOn("node-b");
    client
        .persistentVolumeClaims()
        .inNamespace(NS)
        .withName("data")
        .edit(
            c ->
                new PersistentVolumeClaimBuilder(c)
                    .editMetadata()
                    .addToAnnotations("pv.kubernetes.io/bind-completed", "yes")
                    .endMetadata()
                    .editSpec()
                    .withVolumeName("pv-1")
                    .endSpec()
                    .build());
    Pod again = client.pods().inNamespace(NS).withName("web-1").get();
    assertThat(s.schedule(again)).isEqualTo(new Outcome.Bound("node-b"));
  }

  @Test
  void aClaimWaitingForItsFirstConsumerIsBoundToAnExistingVolumeThenThePodIsBoundWhereItIs() {
    nodes("node-a", "node-b");
    waitForFirstConsumerClass("local", "kubernetes.io/no-provisioner");
    // a local volume on node-b; node-a has none
    client
        .persistentVolumes()
        .resource(
            new PersistentVolumeBuilder(localVolumeOn("local-b", "node-b"))
                .withNewStatus()
                .withPhase("Available")
                .endStatus()
                .build())
        .create();
    client
        .persistentVolumeClaims()
        .resource(
            new PersistentVolumeClaimBuilder()
                .withNewMetadata()
                .withNamespace(NS)
                .withName("data")
                .endMetadata()
                .withNewSpec()
                .withStorageClassName("local")
                .withAccessModes("ReadWriteOnce")
                .withNewResources()
                .addToRequests("storage", new Quantity("1Gi"))
                .endResources()
                .endSpec()
                .build())
        .create();
    PodScheduling s = scheduling();
    Outcome first = s.schedule(replica("web-1", PlacedPodFiltersSchedulingTest::withClaim));
    assertThat(first)
        .isEqualTo(
            new Outcome.Waiting(
                "pod ns/web-1 waits for PersistentVolumeClaim ns/data to be bound to"
                    + " PersistentVolume local-b"));
    assertThat(client.pods().inNamespace(NS).withName("web-1").get().getSpec().getNodeName())
        .isNull();
    PersistentVolume claimed = client.persistentVolumes().withName("local-b").get();
    String claimUid =
        client
            .persistentVolumeClaims()
            .inNamespace(NS)
            .withName("data")
            .get()
            .getMetadata()
            .getUid();
    assertThat(claimed.getSpec().getClaimRef().getName()).isEqualTo("data");
    assertThat(claimed.getSpec().getClaimRef().getNamespace()).isEqualTo(NS);
    assertThat(claimed.getSpec().getClaimRef().getUid()).isEqualTo(claimUid);
    assertThat(claimed.getMetadata().getAnnotations())
        .containsEntry("pv.kubernetes.io/bound-by-controller", "yes");
    // tried again before the PV controller's part: the volume pre-bound to the claim decides
    Pod again = client.pods().inNamespace(NS).withName("web-1").get();
    assertThat(s.schedule(again)).isInstanceOf(Outcome.Waiting.class);
    // the PV controller's part: the claim bound to the volume
    client
        .persistentVolumeClaims()
        .inNamespace(NS)
        .withName("data")
        .edit(
            c ->
                new PersistentVolumeClaimBuilder(c)
                    .editMetadata()
                    .addToAnnotations("pv.kubernetes.io/bind-completed", "yes")
                    .endMetadata()
                    .editSpec()
                    .withVolumeName("local-b")
                    .endSpec()
                    .build());
    again = client.pods().inNamespace(NS).withName("web-1").get();
    assertThat(s.schedule(again)).isEqualTo(new Outcome.Bound("node-b"));
  }

  @Test
  void aClaimWaitingForItsFirstConsumerWithNoVolumeThatFitsKeepsThePodPendingWithUpstreamsReason() {
    nodes("node-a");
    waitForFirstConsumerClass("local", "kubernetes.io/no-provisioner");
    client.persistentVolumes().resource(localVolumeOn("local-b", "node-b")).create();
    client
        .persistentVolumeClaims()
        .resource(
            new PersistentVolumeClaimBuilder()
                .withNewMetadata()
                .withNamespace(NS)
                .withName("data")
                .endMetadata()
                .withNewSpec()
                .withStorageClassName("local")
                .endSpec()
                .build())
        .create();
    staysPendingWith(
        "web-1",
        scheduling().schedule(replica("web-1", PlacedPodFiltersSchedulingTest::withClaim)),
        "0/1 nodes are available: 1 node(s) didn't find available persistent volumes to bind.");
  }

  @Test
  void aClaimToBeProvisionedGoesWhereItsStorageLeavesTheMostRoom() {
    nodes("node-a", "node-b");
    waitForFirstConsumerClass("lvm", "csi.example.com");
    client
        .storage()
        .v1()
        .csiDrivers()
        .resource(
            new CSIDriverBuilder()
                .withNewMetadata()
                .withName("csi.example.com")
                .endMetadata()
                .withNewSpec()
                .withStorageCapacity(true)
                .endSpec()
                .build())
        .create();
    // node-a, which wins ties, has room for the claim; node-b has far more
    for (String[] c : new String[][] {{"node-a", "2Gi"}, {"node-b", "100Gi"}}) {
      client
          .storage()
          .v1()
          .csiStorageCapacities()
          .inNamespace("kube-system")
          .resource(
              new CSIStorageCapacityBuilder()
                  .withNewMetadata()
                  .withNamespace("kube-system")
                  .withName("lvm-" + c[0])
                  .endMetadata()
                  .withStorageClassName("lvm")
                  .withNewNodeTopology()
                  .addToMatchLabels("kubernetes.io/hostname", c[0])
                  .endNodeTopology()
                  .withCapacity(new Quantity(c[1]))
                  .build())
          .create();
    }
    client
        .persistentVolumeClaims()
        .resource(
            new PersistentVolumeClaimBuilder()
                .withNewMetadata()
                .withNamespace(NS)
                .withName("data")
                .endMetadata()
                .withNewSpec()
                .withStorageClassName("lvm")
                .withAccessModes("ReadWriteOnce")
                .withNewResources()
                .addToRequests("storage", new Quantity("1Gi"))
                .endResources()
                .endSpec()
                .build())
        .create();
    Outcome o = scheduling().schedule(replica("web-1", PlacedPodFiltersSchedulingTest::withClaim));
    assertThat(o)
        .isEqualTo(
            new Outcome.Waiting(
                "pod ns/web-1 waits for PersistentVolumeClaim(s) ns/data to be provisioned on"
                    + " node node-b and bound"));
  }

  static PersistentVolume localVolumeOn(String name, String node) {
    return new PersistentVolumeBuilder()
        .withNewMetadata()
        .withName(name)
        .endMetadata()
        .withNewSpec()
        .withStorageClassName("local")
        .withAccessModes("ReadWriteOnce")
        .addToCapacity("storage", new Quantity("10Gi"))
        .withNewLocal()
        .withPath("/mnt/disks/" + name)
        .endLocal()
        .withNewNodeAffinity()
        .withNewRequired()
        .addNewNodeSelectorTerm()
        .addNewMatchExpression()
        .withKey("kubernetes.io/hostname")
        .withOperator("In")
        .withValues(node)
        .endMatchExpression()
        .endNodeSelectorTerm()
        .endRequired()
        .endNodeAffinity()
        .endSpec()
        .build();
  }

  @Test
  void aGatedPodIsNotScheduledUntilItsGatesAreGone() {
    nodes("node-a");
    PodScheduling s = scheduling();
    Pod gated =
        replica("web-1", b -> b.editSpec().addNewSchedulingGate("example.com/wait").endSpec());
    assertThat(s.schedule(gated)).isInstanceOf(Outcome.Waiting.class);
    assertThat(client.pods().inNamespace(NS).withName("web-1").get().getSpec().getNodeName())
        .isNull();
    Pod open =
        client
            .pods()
            .inNamespace(NS)
            .withName("web-1")
            .edit(p -> new PodBuilder(p).editSpec().withSchedulingGates().endSpec().build());
    assertThat(s.schedule(open)).isEqualTo(new Outcome.Bound("node-a"));
  }

  /** A StorageClass whose claims wait for their first consumer. */
  private void waitForFirstConsumerClass(String name, String provisioner) {
    client
        .storage()
        .v1()
        .storageClasses()
        .resource(
            new StorageClassBuilder()
                .withNewMetadata()
                .withName(name)
                .endMetadata()
                .withProvisioner(provisioner)
                .withVolumeBindingMode("WaitForFirstConsumer")
                .build())
        .create();
  }
}
