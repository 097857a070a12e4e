package io.kdra.it;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.fabric8.kubernetes.api.model.AffinityBuilder;
import io.fabric8.kubernetes.api.model.PersistentVolume;
import io.fabric8.kubernetes.api.model.PersistentVolumeBuilder;
import io.fabric8.kubernetes.api.model.PersistentVolumeClaim;
import io.fabric8.kubernetes.api.model.PersistentVolumeClaimBuilder;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.PodBuilder;
import io.fabric8.kubernetes.api.model.PodCondition;
import io.fabric8.kubernetes.api.model.PodSpec;
import io.fabric8.kubernetes.api.model.PodSpecBuilder;
import io.fabric8.kubernetes.api.model.Quantity;
import io.fabric8.kubernetes.api.model.TopologySpreadConstraintBuilder;
import io.fabric8.kubernetes.api.model.storage.StorageClassBuilder;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.Watch;
import io.fabric8.kubernetes.client.Watcher;
import io.fabric8.kubernetes.client.WatcherException;
import io.kdra.it.chart.KdraChart;
import io.kdra.it.controlplane.ControlPlane;
import io.kdra.it.nodes.NodeRegistration;
import io.kdra.it.nodes.RealNode;
import io.kdra.it.nodes.SimulatedNode;
import io.kdra.it.services.Dra;
import io.kdra.it.services.KdraStack;
import io.kdra.it.services.RealPods;
import io.kdra.it.services.Stack;
import io.kdra.it.support.TestFiles;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.stream.Collectors;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.MethodOrderer;
import org.junit.jupiter.api.Order;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestMethodOrder;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * The constraints users hit first, honoured by our scheduler on real nodes (two real kubelets with
 * their containerd, {@link RealNode}; two simulated L4s each) on a complete control plane, so that
 * kube-controller-manager runs the Deployments, creates the template claims and binds the volumes,
 * as in a user's cluster. Every pod names the claim-controller ({@link Stack#SCHEDULER}), which
 * runs with the chart's ClusterRole. Each story ends with its pods deleted.
 *
 * <ul>
 *   <li>required pod anti-affinity on the hostname: two replicas, each with a device from a
 *       template, on two nodes; a third waits with kube-scheduler's reason and no device;
 *   <li>a {@code DoNotSchedule} topology spread (maxSkew 1 on the hostname): replicas spread; once
 *       the lighter node is cordoned, a replica that would skew the spread by two waits;
 *   <li>a host port (the bug: the kubelet's {@code NodePorts} rejection, replaced and bound
 *       to the same node again, without end): at most one replica per node, the surplus waits
 *       unbound, no pod ever Failed;
 *   <li>a PersistentVolume with node affinity and no provisioner, its claim unbound (upstream's
 *       local-volume recipe): our scheduler binds the claim to it, and the pod runs on that node,
 *       not the one that wins ties.
 * </ul>
 */
@ExtendWith(ControlPlane.class)
@TestMethodOrder(MethodOrderer.OrderAnnotation.class)
class SchedulingConstraintsRealNodeIT {

  /** The first node by name: where equal scores go, so the volume is pinned to the other one. */
  private static final String NODE_P = "rn-p";

  private static final String NODE_Q = "rn-q";

  private static final String HOSTNAME = "kubernetes.io/hostname";

  /** Upstream's reasons (kube-scheduler 1.37's plugins), as PodScheduled shows them. */
  private static final String ANTI_AFFINITY = "node(s) didn't match pod anti-affinity rules";

  private static final String SPREAD = "node(s) didn't match pod topology spread constraints";
  private static final String CORDONED = "node(s) were unschedulable";
  private static final String PORTS = "node(s) didn't have free ports for the requested pod ports";

  @RegisterExtension
  static final KdraStack STACK =
      KdraStack.realNodes(
              SimulatedNode.l4sWithDeviceNodes(NODE_P, "/dev/fuse", "/dev/vsock"),
              SimulatedNode.l4sWithDeviceNodes(NODE_Q, "/dev/fuse", "/dev/vsock"))
          .fullControlPlane();

  private static Stack stack;
  private static KubernetesClient client;
  private static String ns;

  @BeforeAll
  static void slicesPublished() {
    stack = STACK.get();
    client = stack.client;
    ns = stack.namespace;
    await()
        .atMost(Duration.ofSeconds(60))
        .untilAsserted(
            () -> {
              assertThat(Dra.publishedDevices(client, NODE_P)).isEqualTo(2);
              assertThat(Dra.publishedDevices(client, NODE_Q)).isEqualTo(2);
            });
  }

  @Test
  @Order(1)
  void requiredAntiAffinityPutsEachReplicaOnItsOwnNodeAndTheThirdWaitsWithoutADevice() {
    client.resource(Dra.template(ns, "one-gpu", KdraChart.GPU_CLASS, 1)).create();
    PodSpec spec = RealPods.showingDevices(Dra.podWithTemplate(ns, "x", "one-gpu")).getSpec();
    spec.setAffinity(
        new AffinityBuilder()
            .withNewPodAntiAffinity()
            .addNewRequiredDuringSchedulingIgnoredDuringExecution()
            .withNewLabelSelector()
            .addToMatchLabels("app", "apart")
            .endLabelSelector()
            .withTopologyKey(HOSTNAME)
            .endRequiredDuringSchedulingIgnoredDuringExecution()
            .endPodAntiAffinity()
            .build());
    client.resource(Dra.deployment(ns, "apart", 2, spec)).create();

    List<Pod> two = awaitRunning("apart", 2);
    assertThat(two).extracting(p -> p.getSpec().getNodeName()).containsOnly(NODE_P, NODE_Q);
    for (Pod p : two) {
      var claim = Dra.claimOf(client, p, "gpu");
      assertThat(Dra.devices(claim))
          .singleElement()
          .asString()
          .startsWith(p.getSpec().getNodeName() + "/gpu-");
      assertThat(RealPods.awaitListed(stack, p))
          .contains("KDRA_DEVICE_0=gpu-" + RealPods.deviceIndex(claim));
    }

    scale("apart", 3);
    Pod third = awaitUnschedulable("apart", "0/2 nodes are available: 2 " + ANTI_AFFINITY);
    assertThat(running("apart")).hasSize(2);
    // kube-controller-manager made its claim; it stays unallocated (a device on no node)
    assertThat(Dra.devices(Dra.claimOf(client, third, "gpu"))).isEmpty();
    deleteAndAwaitGone("apart");
  }

  @Test
  @Order(2)
  void aDoNotScheduleSpreadPlacesReplicasEvenlyAndAReplicaThatWouldSkewItWaits() {
    PodSpec spec = sleeping();
    spec.setTopologySpreadConstraints(
        List.of(
            new TopologySpreadConstraintBuilder()
                .withMaxSkew(1)
                .withTopologyKey(HOSTNAME)
                .withWhenUnsatisfiable("DoNotSchedule")
                .withNewLabelSelector()
                .addToMatchLabels("app", "spread")
                .endLabelSelector()
                .build()));
    client.resource(Dra.deployment(ns, "spread", 2, spec)).create();
    assertThat(awaitRunning("spread", 2))
        .extracting(p -> p.getSpec().getNodeName())
        .containsOnly(NODE_P, NODE_Q);

    scale("spread", 3);
    Map<String, Long> perNode = perNode(awaitRunning("spread", 3));
    assertThat(perNode.values()).containsExactlyInAnyOrder(1L, 2L);
    String lighter = perNode.get(NODE_P) == 1L ? NODE_P : NODE_Q;
    // cordoned, the lighter node still counts as a domain (nodeTaintsPolicy Ignore, upstream's
    // default): a fourth replica on the other node would make the skew 2
    cordon(lighter, true);
    try {
      scale("spread", 4);
      awaitUnschedulable("spread", "0/2 nodes are available: 1 " + SPREAD + ", 1 " + CORDONED);
      assertThat(perNode(running("spread"))).isEqualTo(perNode);
    } finally {
      cordon(lighter, false);
    }
    deleteAndAwaitGone("spread");
  }

  @Test
  @Order(3)
  void aHostPortKeepsOneReplicaPerNodeAndTheSurplusWaitsUnboundWithoutAnyPodFailing() {
    PodSpec spec = sleeping();
    spec.getContainers()
        .get(0)
        .setPorts(
            List.of(
                new io.fabric8.kubernetes.api.model.ContainerPortBuilder()
                    .withContainerPort(8080)
                    .withHostPort(18080)
                    .withProtocol("TCP")
                    .build()));
    // every pod of the Deployment that ever reaches Failed (the kubelet's NodePorts rejection)
    Set<String> failed = ConcurrentHashMap.newKeySet();
    try (Watch watch =
        client
            .pods()
            .inNamespace(ns)
            .withLabel("app", "ported")
            .watch(
                new Watcher<>() {
                  @Override
                  public void eventReceived(Action action, Pod pod) {
                    if (pod.getStatus() != null && "Failed".equals(pod.getStatus().getPhase())) {
                      failed.add(
                          pod.getMetadata().getName()
                              + " on "
                              + pod.getSpec().getNodeName()
                              + ": "
                              + pod.getStatus().getReason()
                              + " "
                              + pod.getStatus().getMessage());
                    }
                  }

                  @Override
                  public void onClose(WatcherException cause) {}
                })) {
      client.resource(Dra.deployment(ns, "ported", 3, spec)).create();
      await("two replicas Running on two nodes, the third unschedulable, none Failed")
          .atMost(RealPods.POD_TIMEOUT)
          .pollInterval(Duration.ofMillis(500))
          .failFast(
              "a replica Failed",
              () -> {
                assertThat(failed).as("replicas seen Failed").isEmpty();
                assertThat(failedNow("ported")).as("replicas Failed").isEmpty();
              })
          .untilAsserted(
              () -> {
                assertThat(running("ported"))
                    .extracting(p -> p.getSpec().getNodeName())
                    .containsExactlyInAnyOrder(NODE_P, NODE_Q);
                assertThat(pods("ported")).hasSize(3);
                assertThat(pods("ported"))
                    .filteredOn(p -> p.getSpec().getNodeName() == null)
                    .singleElement()
                    .satisfies(p -> assertUnschedulable(p, "0/2 nodes are available: 2 " + PORTS));
              });
      assertThat(failed).isEmpty();
      assertThat(failedNow("ported")).isEmpty();
    }
    deleteAndAwaitGone("ported");
  }

  @Test
  @Order(4)
  void aPodWhoseVolumeIsPinnedToANodeRunsThere() throws Exception {
    Path data = Path.of("target", "rn-volumes", "pinned").toAbsolutePath();
    TestFiles.deleteRecursively(data);
    stack.createClusterScoped(
        new StorageClassBuilder()
            .withNewMetadata()
            .withName("pinned-local")
            .endMetadata()
            .withProvisioner("kubernetes.io/no-provisioner")
            .withVolumeBindingMode("WaitForFirstConsumer")
            .build());
    PersistentVolume pv =
        new PersistentVolumeBuilder()
            .withNewMetadata()
            .withName("pinned-to-" + NODE_Q)
            .endMetadata()
            .withNewSpec()
            .withCapacity(Map.of("storage", new Quantity("1Gi")))
            .withAccessModes("ReadWriteOnce")
            .withPersistentVolumeReclaimPolicy("Retain")
            .withStorageClassName("pinned-local")
            .withNewHostPath()
            .withPath(data.toString())
            .withType("DirectoryOrCreate")
            .endHostPath()
            .withNewNodeAffinity()
            .withNewRequired()
            .addNewNodeSelectorTerm()
            .addNewMatchExpression()
            .withKey(HOSTNAME)
            .withOperator("In")
            .withValues(NODE_Q)
            .endMatchExpression()
            .endNodeSelectorTerm()
            .endRequired()
            .endNodeAffinity()
            .endSpec()
            .build();
    stack.createClusterScoped(pv);
    // unbound, as upstream's local-volume recipe leaves it: our scheduler chooses the volume for
    // the pod's node and writes its claimRef; kube-controller-manager's PV controller binds them
    client
        .resource(
            new PersistentVolumeClaimBuilder()
                .withNewMetadata()
                .withName("pinned")
                .withNamespace(ns)
                .endMetadata()
                .withNewSpec()
                .withStorageClassName("pinned-local")
                .withAccessModes("ReadWriteOnce")
                .withNewResources()
                .addToRequests("storage", new Quantity("1Gi"))
                .endResources()
                .endSpec()
                .build())
        .create();

    PodSpec spec = sleeping();
    spec.getContainers()
        .get(0)
        .setCommand(
            List.of("sh", "-c", "echo written-on-$NODE > /data/hello && exec sleep 2147483647"));
    spec.getContainers()
        .get(0)
        .setEnv(
            List.of(
                new io.fabric8.kubernetes.api.model.EnvVarBuilder()
                    .withName("NODE")
                    .withNewValueFrom()
                    .withNewFieldRef()
                    .withFieldPath("spec.nodeName")
                    .endFieldRef()
                    .endValueFrom()
                    .build()));
    spec.getContainers()
        .get(0)
        .setVolumeMounts(
            List.of(
                new io.fabric8.kubernetes.api.model.VolumeMountBuilder()
                    .withName("data")
                    .withMountPath("/data")
                    .build()));
    spec.setVolumes(
        List.of(
            new io.fabric8.kubernetes.api.model.VolumeBuilder()
                .withName("data")
                .withNewPersistentVolumeClaim()
                .withClaimName("pinned")
                .endPersistentVolumeClaim()
                .build()));
    Pod pod =
        client
            .resource(
                new PodBuilder()
                    .withNewMetadata()
                    .withName("pinned")
                    .withNamespace(ns)
                    .addToLabels("app", "pinned")
                    .endMetadata()
                    .withSpec(spec)
                    .build())
            .create();
    Pod runs = awaitRunning("pinned", 1).get(0);
    assertThat(runs.getSpec().getNodeName()).isEqualTo(NODE_Q);
    PersistentVolumeClaim bound =
        client.persistentVolumeClaims().inNamespace(ns).withName("pinned").get();
    assertThat(bound.getStatus().getPhase()).isEqualTo("Bound");
    assertThat(bound.getSpec().getVolumeName()).isEqualTo(pv.getMetadata().getName());
    // the kubelet mounted the volume: what the container wrote is in its directory
    Path hello = data.resolve("hello");
    await("the container's file in the volume")
        .atMost(RealPods.POD_TIMEOUT)
        .until(() -> Files.exists(hello) && Files.readString(hello).contains("written-on-"));
    assertThat(Files.readString(hello).trim()).isEqualTo("written-on-" + NODE_Q);
    client.resource(pod).delete();
    deleteAndAwaitGone("pinned");
    client.persistentVolumeClaims().inNamespace(ns).withName("pinned").delete();
  }

  /** A busybox pod spec for our scheduler that sleeps, as each story's Deployment runs it. */
  private static PodSpec sleeping() {
    return new PodSpecBuilder()
        .withSchedulerName(Stack.SCHEDULER)
        .withTerminationGracePeriodSeconds(1L)
        .withAutomountServiceAccountToken(false)
        .addNewContainer()
        .withName("app")
        .withImage(RealNode.BUSYBOX)
        .withImagePullPolicy("Never")
        .withCommand("sleep", "2147483647")
        .withNewResources()
        .addToRequests("cpu", new Quantity("10m"))
        .endResources()
        .endContainer()
        .build();
  }

  private static void scale(String deployment, int replicas) {
    client.apps().deployments().inNamespace(ns).withName(deployment).scale(replicas);
  }

  private static void cordon(String node, boolean unschedulable) {
    NodeRegistration.onConflictRetry(
        () ->
            client
                .nodes()
                .withName(node)
                .edit(
                    n -> {
                      n.getSpec().setUnschedulable(unschedulable ? true : null);
                      return n;
                    }));
  }

  /** The pods of {@code app} not being deleted. */
  private static List<Pod> pods(String app) {
    return client.pods().inNamespace(ns).withLabel("app", app).list().getItems().stream()
        .filter(p -> p.getMetadata().getDeletionTimestamp() == null)
        .toList();
  }

  private static List<Pod> running(String app) {
    return pods(app).stream()
        .filter(p -> p.getStatus() != null && "Running".equals(p.getStatus().getPhase()))
        .toList();
  }

  /** {@code app}'s pods in phase Failed, with their reasons. */
  private static List<String> failedNow(String app) {
    return client.pods().inNamespace(ns).withLabel("app", app).list().getItems().stream()
        .filter(p -> p.getStatus() != null && "Failed".equals(p.getStatus().getPhase()))
        .map(p -> p.getMetadata().getName() + ": " + p.getStatus().getReason())
        .toList();
  }

  /** Awaits exactly {@code count} of {@code app}'s pods Running; returns them. */
  private static List<Pod> awaitRunning(String app, int count) {
    await(count + " pods of " + app + " Running")
        .atMost(RealPods.POD_TIMEOUT)
        .pollInterval(Duration.ofMillis(500))
        .untilAsserted(() -> assertThat(running(app)).hasSize(count));
    return running(app);
  }

  private static Map<String, Long> perNode(List<Pod> pods) {
    return pods.stream()
        .collect(Collectors.groupingBy(p -> p.getSpec().getNodeName(), Collectors.counting()));
  }

  /**
   * Awaits the one pod of {@code app} that is not bound, unschedulable with {@code message} in its
   * PodScheduled condition; returns it.
   */
  private static Pod awaitUnschedulable(String app, String message) {
    await("a pod of " + app + " unschedulable: " + message)
        .atMost(RealPods.POD_TIMEOUT)
        .pollInterval(Duration.ofMillis(500))
        .untilAsserted(
            () ->
                assertThat(pods(app))
                    .filteredOn(p -> p.getSpec().getNodeName() == null)
                    .singleElement()
                    .satisfies(p -> assertUnschedulable(p, message)));
    return pods(app).stream().filter(p -> p.getSpec().getNodeName() == null).findFirst().get();
  }

  private static void assertUnschedulable(Pod pod, String message) {
    assertThat(pod.getSpec().getNodeName()).as("bound").isNull();
    assertThat(pod.getStatus().getConditions())
        .as("conditions of %s", pod.getMetadata().getName())
        .filteredOn(c -> c.getType().equals("PodScheduled"))
        .singleElement()
        .satisfies(
            (PodCondition c) -> {
              assertThat(c.getStatus()).isEqualTo("False");
              assertThat(c.getReason()).isEqualTo("Unschedulable");
              assertThat(c.getMessage()).contains(message);
            });
  }

  /** Deletes the Deployment (if any) and waits until none of {@code app}'s pods is left. */
  private static void deleteAndAwaitGone(String app) {
    client.apps().deployments().inNamespace(ns).withName(app).delete();
    await("the pods of " + app + " gone")
        .atMost(RealPods.POD_TIMEOUT)
        .until(
            () -> client.pods().inNamespace(ns).withLabel("app", app).list().getItems().isEmpty());
  }
}
