package io.kdra.it;

import static io.kdra.it.nodes.SimulatedNode.oneA100;
import static io.kdra.it.nodes.SimulatedNode.twoL4s;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.fabric8.kubernetes.api.model.ConfigMap;
import io.fabric8.kubernetes.api.model.ManagedFieldsEntry;
import io.fabric8.kubernetes.api.model.Node;
import io.fabric8.kubernetes.api.model.NodeBuilder;
import io.fabric8.kubernetes.api.model.NodeConditionBuilder;
import io.fabric8.kubernetes.api.model.OwnerReference;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.PodSpec;
import io.fabric8.kubernetes.api.model.Taint;
import io.fabric8.kubernetes.api.model.apps.Deployment;
import io.fabric8.kubernetes.api.model.apps.DeploymentBuilder;
import io.fabric8.kubernetes.api.model.apps.ReplicaSet;
import io.fabric8.kubernetes.api.model.resource.v1.ResourceClaim;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.kdra.it.chart.KdraChart;
import io.kdra.it.controlplane.ControlPlane;
import io.kdra.it.nodes.NodeRegistration;
import io.kdra.it.nodes.TestKubelet;
import io.kdra.it.services.Dra;
import io.kdra.it.services.KdraStack;
import io.kdra.it.services.Stack;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * The services on a complete control plane ({@link KdraStack#fullControlPlane()}: kube-scheduler
 * and kube-controller-manager next to the API server), with two simulated nodes (node-a: two L4s,
 * node-b: one A100). What it proves, each on upstream's real components:
 *
 * <ul>
 *   <li>kube-controller-manager publishes the namespace's {@code default} ServiceAccount and {@code
 *       kube-root-ca.crt};
 *   <li>a Deployment creates its pods through a ReplicaSet, and kube-scheduler binds them;
 *   <li>pods that do not name our scheduler: kube-controller-manager's resourceclaim controller
 *       creates their claims from the template, kube-scheduler allocates them from our driver's
 *       ResourceSlices, our driver prepares them; scaling down deletes the claims and frees the
 *       devices for the next replicas;
 *   <li>pods that name our scheduler, with the claim-controller in {@code adopt} mode: the claims
 *       kube-controller-manager creates are allocated, reserved and bound by our controller;
 *   <li>the garbage collector removes a generated claim whose pod is gone (one that no scheduler
 *       touched, which upstream's resourceclaim controller and ours leave to it);
 *   <li>the node lifecycle controller marks a node unreachable when its kubelet stops renewing the
 *       node Lease, while the harness's nodes, whose test kubelets renew theirs, stay Ready.
 * </ul>
 */
@ExtendWith(ControlPlane.class)
class FullControlPlaneIT {

  @RegisterExtension
  static final KdraStack STACK =
      KdraStack.nodes(twoL4s("node-a"), oneA100("node-b")).fullControlPlane();

  private static final Duration TIMEOUT = Duration.ofSeconds(120);
  private static final String DEFAULT_SCHEDULER = "default-scheduler";

  private static Stack stack;
  private static KubernetesClient client;

  @BeforeAll
  static void slicesPublished() {
    stack = STACK.get();
    client = stack.client;
    await()
        .atMost(Duration.ofSeconds(60))
        .untilAsserted(
            () -> {
              assertThat(Dra.publishedDevices(client, "node-a")).isEqualTo(2);
              assertThat(Dra.publishedDevices(client, "node-b")).isEqualTo(1);
            });
  }

  @AfterEach
  void nothingLeft() {
    client.apps().deployments().inNamespace(stack.namespace).delete();
    await()
        .atMost(TIMEOUT)
        .untilAsserted(
            () ->
                assertThat(
                        client.apps().replicaSets().inNamespace(stack.namespace).list().getItems())
                    .isEmpty());
    stack.deletePodsAndAwaitClaimsGone();
  }

  @Test
  void kubeControllerManagerPublishesTheDefaultServiceAccountAndTheRootCa() {
    await()
        .atMost(TIMEOUT)
        .untilAsserted(
            () -> {
              assertThat(
                      client
                          .serviceAccounts()
                          .inNamespace(stack.namespace)
                          .withName("default")
                          .get())
                  .isNotNull();
              ConfigMap ca =
                  client
                      .configMaps()
                      .inNamespace(stack.namespace)
                      .withName("kube-root-ca.crt")
                      .get();
              assertThat(ca).isNotNull();
              assertThat(ca.getData().get("ca.crt")).contains("BEGIN CERTIFICATE");
            });
  }

  @Test
  void aDeploymentCreatesItsPodsThroughAReplicaSetAndKubeSchedulerBindsThem() {
    PodSpec spec = Dra.podWithTemplate(stack.namespace, "x", "unused").getSpec();
    spec.setSchedulerName(null);
    spec.setResourceClaims(List.of());
    spec.getContainers().get(0).getResources().setClaims(List.of());
    Deployment web = client.resource(deployment("web", 2, spec)).create();

    await()
        .atMost(TIMEOUT)
        .untilAsserted(
            () -> {
              List<ReplicaSet> sets =
                  client
                      .apps()
                      .replicaSets()
                      .inNamespace(stack.namespace)
                      .withLabel("app", "web")
                      .list()
                      .getItems();
              assertThat(sets).hasSize(1);
              assertThat(sets.get(0).getMetadata().getOwnerReferences())
                  .extracting(OwnerReference::getUid)
                  .containsExactly(web.getMetadata().getUid());
              List<Pod> pods = pods("web");
              assertThat(pods)
                  .hasSize(2)
                  .allSatisfy(
                      p -> {
                        assertThat(p.getMetadata().getOwnerReferences())
                            .extracting(OwnerReference::getUid)
                            .containsExactly(sets.get(0).getMetadata().getUid());
                        assertThat(p.getSpec().getSchedulerName()).isEqualTo(DEFAULT_SCHEDULER);
                        assertThat(p.getSpec().getNodeName()).isIn("node-a", "node-b");
                      });
            });
  }

  @Test
  void kubeSchedulerAllocatesFromOurSlicesAndScalingDownFreesTheDevices() {
    client.resource(Dra.template(stack.namespace, "any-gpu", KdraChart.GPU_CLASS, 1)).create();
    PodSpec spec = Dra.podWithTemplate(stack.namespace, "x", "any-gpu").getSpec();
    spec.setSchedulerName(null);
    client.resource(deployment("upstream", 3, spec)).create();

    // all three GPUs, one per replica, allocated by kube-scheduler, prepared by our driver
    List<String> devices = awaitAllocatedAndPrepared("upstream", 3, DEFAULT_SCHEDULER);
    assertThat(devices).containsExactlyInAnyOrder("node-a/gpu-0", "node-a/gpu-1", "node-b/gpu-0");

    scale("upstream", 1);
    await()
        .atMost(TIMEOUT)
        .untilAsserted(
            () -> {
              assertThat(pods("upstream")).hasSize(1);
              assertThat(claims()).hasSize(1);
            });
    // the two freed devices are allocated again to the next replicas
    scale("upstream", 3);
    assertThat(awaitAllocatedAndPrepared("upstream", 3, DEFAULT_SCHEDULER))
        .hasSize(3)
        .doesNotHaveDuplicates();

    scale("upstream", 0);
    await()
        .atMost(TIMEOUT)
        .untilAsserted(
            () -> {
              assertThat(pods("upstream")).isEmpty();
              assertThat(claims()).isEmpty();
              assertThat(stack.nodes.kubelet("node-a").prepared()).isEmpty();
              assertThat(stack.nodes.kubelet("node-b").prepared()).isEmpty();
            });
  }

  @Test
  void ourSchedulerAllocatesTheClaimsKubeControllerManagerCreates() {
    client.resource(Dra.template(stack.namespace, "our-gpu", KdraChart.GPU_CLASS, 1)).create();
    PodSpec spec = Dra.podWithTemplate(stack.namespace, "x", "our-gpu").getSpec();
    client.resource(deployment("ours", 2, spec)).create();

    assertThat(awaitAllocatedAndPrepared("ours", 2, Stack.SCHEDULER))
        .hasSize(2)
        .doesNotHaveDuplicates();
    assertThat(claims())
        .allSatisfy(
            c -> {
              // created by kube-controller-manager's resourceclaim controller (adopt mode),
              // scheduled by
              // our controller, which marks the claims it reserves
              // managedFields are sorted by operation, time (in whole seconds), then manager name,
              // so
              // the creator is the manager that owns the spec, not the first entry
              assertThat(c.getMetadata().getManagedFields())
                  .filteredOn(m -> m.getFieldsV1().getAdditionalProperties().containsKey("f:spec"))
                  .extracting(ManagedFieldsEntry::getManager)
                  .singleElement()
                  .asString()
                  .startsWith("kube-controller-manager");
              assertThat(c.getMetadata().getAnnotations())
                  .containsEntry("resource.kubernetes.io/pod-claim-name", "gpu")
                  .containsKey("kdra.io/scheduler-name");
            });

    scale("ours", 0);
    await()
        .atMost(TIMEOUT)
        .untilAsserted(
            () -> {
              assertThat(pods("ours")).isEmpty();
              assertThat(claims()).isEmpty();
            });
  }

  /**
   * DeviceTaintRules with kube-controller-manager running (the claim-controller in {@code adopt}
   * mode evicts nothing): a NoExecute rule on the device our controller allocated has
   * kube-controller-manager's device-taint-eviction controller evict the pod and write the rule's
   * status. Served as v1 from 1.37 on.
   */
  @Test
  void kubeControllerManagerEvictsThePodOfADeviceThatARuleTaints() {
    org.junit.jupiter.api.Assumptions.assumeTrue(
        io.kdra.core.model.Semver.parse(ControlPlane.VERSION)
                .compareTo(io.kdra.core.model.Semver.parse("1.37.0"))
            >= 0,
        "DeviceTaintRule is served as v1 from 1.37 on");
    client.resource(Dra.template(stack.namespace, "taint-gpu", KdraChart.GPU_CLASS, 1)).create();
    Pod pod =
        client.resource(Dra.podWithTemplate(stack.namespace, "tainted", "taint-gpu")).create();
    await()
        .atMost(TIMEOUT)
        .untilAsserted(() -> assertThat(Dra.get(client, pod).getSpec().getNodeName()).isNotNull());
    String[] poolDevice = Dra.devices(Dra.claimOf(client, pod, "gpu")).get(0).split("/");
    String rule = "kcm-evicts";
    client
        .resources(io.kdra.core.taint.DeviceTaintRule.class)
        .resource(
            new io.kdra.core.taint.DeviceTaintRule(
                new io.fabric8.kubernetes.api.model.ObjectMetaBuilder().withName(rule).build(),
                new io.kdra.core.taint.DeviceTaintRuleSpec(
                    new io.kdra.core.taint.DeviceTaintSelector(
                        Stack.DRIVER, poolDevice[0], poolDevice[1]),
                    new io.fabric8.kubernetes.api.model.resource.v1.DeviceTaint(
                        "NoExecute", "example.com/broken", null, "yes"))))
        .create();
    try {
      await()
          .atMost(TIMEOUT)
          .untilAsserted(
              () -> {
                Pod current = client.resource(pod).get();
                assertThat(current == null || current.getMetadata().getDeletionTimestamp() != null)
                    .as("evicted")
                    .isTrue();
              });
      await()
          .atMost(TIMEOUT)
          .untilAsserted(
              () -> {
                var status =
                    client
                        .resources(io.kdra.core.taint.DeviceTaintRule.class)
                        .withName(rule)
                        .get()
                        .getStatus();
                assertThat(status).as("the rule's status").isNotNull();
                assertThat(status.getConditions())
                    .filteredOn(c -> c.getType().equals("EvictionInProgress"))
                    .singleElement()
                    .satisfies(c -> assertThat(c.getReason()).isEqualTo("Completed"));
              });
    } finally {
      client.resources(io.kdra.core.taint.DeviceTaintRule.class).withName(rule).delete();
    }
  }

  @Test
  void theGarbageCollectorDeletesAGeneratedClaimWhosePodIsGone() {
    client.resource(Dra.template(stack.namespace, "gc-gpu", KdraChart.GPU_CLASS, 1)).create();
    Pod pod = Dra.podWithTemplate(stack.namespace, "orphan", "gc-gpu");
    // no scheduler serves this name: the claim is generated but never allocated, so no
    // scheduler marks it, and our controller's cleanup (claims it reserved) leaves it alone
    pod.getSpec().setSchedulerName("no-such-scheduler");
    Pod created = client.resource(pod).create();
    await()
        .atMost(TIMEOUT)
        .untilAsserted(
            () ->
                assertThat(claims())
                    .singleElement()
                    .satisfies(
                        c -> {
                          assertThat(c.getMetadata().getOwnerReferences())
                              .singleElement()
                              .satisfies(
                                  o -> {
                                    assertThat(o.getUid())
                                        .isEqualTo(created.getMetadata().getUid());
                                    assertThat(o.getController()).isTrue();
                                  });
                          assertThat(c.getMetadata().getAnnotations())
                              .doesNotContainKey("kdra.io/scheduler-name");
                        }));

    // upstream's resourceclaim controller leaves a gone pod's claims to the garbage collector
    client.pods().inNamespace(stack.namespace).withName("orphan").delete();
    await()
        .atMost(TIMEOUT)
        .untilAsserted(
            () -> {
              assertThat(Dra.get(client, created)).isNull();
              assertThat(claims()).isEmpty();
            });
  }

  @Test
  void aNodeThatStopsRenewingItsLeaseIsMarkedUnreachableWhileTheHarnessNodesStayReady() {
    Node silent =
        new NodeBuilder()
            .withNewMetadata()
            .withName("node-silent")
            .addToLabels("kubernetes.io/hostname", "node-silent")
            .endMetadata()
            .build();
    stack.createClusterScoped(silent);
    try {
      NodeRegistration.onConflictRetry(
          () ->
              client
                  .nodes()
                  .withName("node-silent")
                  .editStatus(
                      n -> {
                        n.setStatus(
                            new io.fabric8.kubernetes.api.model.NodeStatusBuilder()
                                .withConditions(
                                    new NodeConditionBuilder()
                                        .withType("Ready")
                                        .withStatus("True")
                                        .withReason("KubeletReady")
                                        .withLastHeartbeatTime(Instant.now().toString())
                                        .withLastTransitionTime(Instant.now().toString())
                                        .build())
                                .build());
                        return n;
                      }));
      // the node monitor grace period (50 s) without a heartbeat
      await()
          .atMost(TIMEOUT)
          .untilAsserted(
              () -> assertThat(taints("node-silent")).contains("node.kubernetes.io/unreachable"));
      for (String node : List.of("node-a", "node-b")) {
        assertThat(taints(node)).as(node).isEmpty();
        assertThat(client.nodes().withName(node).get().getStatus().getConditions())
            .filteredOn(c -> c.getType().equals("Ready"))
            .singleElement()
            .satisfies(c -> assertThat(c.getStatus()).isEqualTo("True"));
        assertThat(
                client.leases().inNamespace(TestKubelet.NODE_LEASE_NAMESPACE).withName(node).get())
            .isNotNull();
      }
    } finally {
      client.nodes().withName("node-silent").withGracePeriod(0).delete();
    }
  }

  /**
   * Waits until {@code replicas} pods of {@code app} are bound by {@code scheduler}, each with its
   * own generated claim allocated from our driver and reserved for it, and prepared by its node's
   * kubelet; returns their devices ({@code pool/device}).
   */
  private List<String> awaitAllocatedAndPrepared(String app, int replicas, String scheduler) {
    await()
        .atMost(TIMEOUT)
        .untilAsserted(
            () -> {
              List<Pod> pods = pods(app);
              assertThat(pods)
                  .hasSize(replicas)
                  .allSatisfy(
                      p -> {
                        assertThat(p.getSpec().getSchedulerName()).isEqualTo(scheduler);
                        assertThat(p.getSpec().getNodeName()).isNotNull();
                        ResourceClaim claim = Dra.claimOf(client, p, "gpu");
                        assertThat(claim).isNotNull();
                        assertThat(claim.getMetadata().getOwnerReferences())
                            .extracting(OwnerReference::getUid)
                            .containsExactly(p.getMetadata().getUid());
                        assertThat(Dra.devices(claim))
                            .hasSize(1)
                            .allSatisfy(
                                d -> assertThat(d).startsWith(p.getSpec().getNodeName() + "/"));
                        assertThat(claim.getStatus().getReservedFor())
                            .extracting(r -> r.getUid())
                            .containsExactly(p.getMetadata().getUid());
                        // both schedulers protect what they allocate with the same finalizer
                        assertThat(claim.getMetadata().getFinalizers())
                            .contains("resource.kubernetes.io/delete-protection");
                        assertThat(stack.nodes.kubelet(p.getSpec().getNodeName()).prepared(p))
                            .isNotNull();
                      });
            });
    return pods(app).stream()
        .flatMap(p -> Dra.devices(Dra.claimOf(client, p, "gpu")).stream())
        .toList();
  }

  private Deployment deployment(String app, int replicas, PodSpec spec) {
    return new DeploymentBuilder()
        .withNewMetadata()
        .withName(app)
        .withNamespace(stack.namespace)
        .endMetadata()
        .withNewSpec()
        .withReplicas(replicas)
        .withNewSelector()
        .addToMatchLabels("app", app)
        .endSelector()
        .withNewTemplate()
        .withNewMetadata()
        .addToLabels("app", app)
        .endMetadata()
        .withSpec(spec)
        .endTemplate()
        .endSpec()
        .build();
  }

  private void scale(String app, int replicas) {
    client.apps().deployments().inNamespace(stack.namespace).withName(app).scale(replicas);
  }

  /** The app's pods that are not being deleted. */
  private List<Pod> pods(String app) {
    return client
        .pods()
        .inNamespace(stack.namespace)
        .withLabel("app", app)
        .list()
        .getItems()
        .stream()
        .filter(p -> p.getMetadata().getDeletionTimestamp() == null)
        .toList();
  }

  private List<ResourceClaim> claims() {
    return client.resources(ResourceClaim.class).inNamespace(stack.namespace).list().getItems();
  }

  private List<String> taints(String node) {
    List<Taint> taints = client.nodes().withName(node).get().getSpec().getTaints();
    return taints == null ? List.of() : taints.stream().map(Taint::getKey).toList();
  }
}
