package io.kdra.it;

import static io.kdra.it.karpenter.ScaleOutScenario.A100_NODE_POOL;
import static io.kdra.it.karpenter.ScaleOutScenario.A100_REQUEST;
import static io.kdra.it.karpenter.ScaleOutScenario.A100_TYPE;
import static io.kdra.it.karpenter.ScaleOutScenario.COMPUTE_CLASS_NAME;
import static io.kdra.it.karpenter.ScaleOutScenario.L4_NODE_POOL;
import static io.kdra.it.karpenter.ScaleOutScenario.L4_REQUEST;
import static io.kdra.it.karpenter.ScaleOutScenario.L4_TYPE;
import static io.kdra.it.karpenter.ScaleOutScenario.NODE_CLAIM;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.resource.v1.ResourceClaim;
import io.fabric8.kubernetes.api.model.resource.v1.ResourceClaimTemplate;
import io.fabric8.kubernetes.api.model.resource.v1.ResourceSlice;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.kdra.it.controlplane.ControlPlane;
import io.kdra.it.karpenter.KarpenterKwok;
import io.kdra.it.karpenter.LaunchedNodes;
import io.kdra.it.karpenter.ScaleOutScenario;
import io.kdra.it.services.Dra;
import io.kdra.it.services.KdraStack;
import io.kdra.it.services.Stack;
import java.time.Duration;
import java.util.List;
import java.util.Set;
import java.util.stream.Collectors;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.MethodOrderer;
import org.junit.jupiter.api.Order;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestMethodOrder;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * Issue 46's scenario: ComputeClass-driven scale-out through Karpenter, from zero nodes. The bridge
 * makes a NodePool per priority of "1 x A100-40GB, else 2 x L4" (weights 100 and 99); Karpenter
 * (kdra-karpenter-kwok: its KWOK provider with our template ResourceSlices per instance type, DRA
 * simulation on) launches nodes for the pending replicas of a Deployment whose pods use the
 * bridge's template; each launched node gets what a real one would run ({@link LaunchedNodes}:
 * Ready, our driver with the inventory of its instance type, publishing through our publisher), our
 * claim-controller allocates and binds. Then A100 capacity runs out and the next replicas get L4
 * nodes; scaling down lets Karpenter remove the nodes, and their slices and claims go.
 *
 * <p>On the full control plane: kube-controller-manager runs the Deployment, makes the claims from
 * the template (our controller adopts them) and collects the garbage. The set-up and what the steps
 * look at are {@link ScaleOutScenario}'s, which {@code bin/demo --scale-out} tells as a story.
 */
@ExtendWith(ControlPlane.class)
@TestMethodOrder(MethodOrderer.OrderAnnotation.class)
class KarpenterScaleOutIT {

  /** Karpenter's launches and removals take a few of its batch and disruption rounds each. */
  private static final Duration TIMEOUT = Duration.ofSeconds(300);

  @RegisterExtension
  static final KdraStack STACK =
      KdraStack.nodes()
          .withBridge()
          .fullControlPlane()
          .withProperties(ScaleOutScenario.BRIDGE_PROPERTIES);

  private static Stack stack;
  private static KubernetesClient client;
  private static ScaleOutScenario scenario;

  @BeforeAll
  static void karpenterAndTheComputeClass() {
    stack = STACK.get();
    client = stack.client;
    scenario = ScaleOutScenario.start(stack);
    await()
        .atMost(Duration.ofSeconds(120))
        .untilAsserted(
            () -> {
              assertThat(
                      client
                          .resources(ResourceClaimTemplate.class)
                          .inNamespace(stack.namespace)
                          .withName(COMPUTE_CLASS_NAME)
                          .get())
                  .isNotNull();
              // the bridge's NodePools, by priority, and Karpenter took them (their NodeClass is
              // ready)
              assertThat(scenario.weightOf(A100_NODE_POOL)).isEqualTo(100);
              assertThat(scenario.weightOf(L4_NODE_POOL)).isEqualTo(99);
              assertThat(scenario.ready(A100_NODE_POOL)).isTrue();
              assertThat(scenario.ready(L4_NODE_POOL)).isTrue();
              assertThat(scenario.bridgeReady()).isTrue();
            });
    assertThat(scenario.launchedNodes()).as("no node before the Deployment").isEmpty();
  }

  @AfterAll
  static void karpenterGoes() {
    if (scenario != null) {
      scenario.closeAndCleanUp();
    } else if (client != null) {
      // Karpenter did not start: its CRDs may be there
      try {
        KarpenterKwok.uninstallCrds(client);
      } catch (RuntimeException e) {
        System.out.println("[karpenter] cleanup: " + e);
      }
    }
  }

  /**
   * Scale from zero: each of the three replicas gets a node of the first priority's NodePool, and
   * on it the node's A100, published by that node's driver through our publisher and allocated by
   * our controller for the template's first subrequest.
   */
  @Test
  @Order(1)
  void threeReplicasFromZeroGetAnA100NodeEach() {
    scenario.createDeployment(3);

    await()
        .atMost(TIMEOUT)
        .untilAsserted(
            () -> {
              List<Pod> pods = scenario.pods();
              assertThat(pods).hasSize(3);
              for (Pod pod : pods) {
                assertRunsWith(pod, A100_TYPE, A100_REQUEST, 1);
              }
              assertThat(pods.stream().map(p -> p.getSpec().getNodeName()).distinct()).hasSize(3);
            });
    assertThat(scenario.nodesOf(A100_TYPE)).hasSize(3);
    assertThat(scenario.nodesOf(L4_TYPE)).isEmpty();
  }

  /**
   * Fallback: with no A100 capacity left, the next two replicas get nodes of the second priority's
   * NodePool, two L4s each, allocated for the template's second subrequest.
   */
  @Test
  @Order(2)
  void withoutA100CapacityTheNextReplicasGetL4Nodes() {
    Set<String> before = names(scenario.pods());
    scenario.noA100Capacity();
    scenario.scale(5);

    await()
        .atMost(TIMEOUT)
        .untilAsserted(
            () -> {
              List<Pod> pods = scenario.pods();
              assertThat(pods).hasSize(5);
              List<Pod> next =
                  pods.stream().filter(p -> !before.contains(p.getMetadata().getName())).toList();
              assertThat(next).hasSize(2);
              for (Pod pod : next) {
                assertRunsWith(pod, L4_TYPE, L4_REQUEST, 2);
              }
            });
    assertThat(scenario.nodesOf(A100_TYPE)).hasSize(3);
    assertThat(scenario.nodesOf(L4_TYPE)).hasSize(2);
  }

  /**
   * Scale down to zero: the claims go with their pods, Karpenter removes the empty nodes, and their
   * drivers' slices go with the nodes.
   */
  @Test
  @Order(3)
  void scalingDownRemovesTheNodesTheirSlicesAndClaims() {
    LaunchedNodes launched = scenario.launched();
    assertThat(launched.everLaunched()).as("nodes launched by the earlier steps").isNotEmpty();
    scenario.scale(0);

    await()
        .atMost(TIMEOUT)
        .untilAsserted(
            () -> {
              assertThat(scenario.pods()).isEmpty();
              assertThat(
                      client
                          .resources(ResourceClaim.class)
                          .inNamespace(stack.namespace)
                          .list()
                          .getItems())
                  .isEmpty();
              assertThat(scenario.launchedNodes()).isEmpty();
              assertThat(client.genericKubernetesResources(NODE_CLAIM).list().getItems()).isEmpty();
              // other test classes on the same API server leave slices of their own nodes
              assertThat(client.resources(ResourceSlice.class).list().getItems())
                  .noneMatch(
                      slice -> launched.everLaunched().contains(slice.getSpec().getNodeName()));
              assertThat(scenario.allGone()).isTrue();
              // the nodes' kubelets and drivers stop a moment after their Nodes go
              assertThat(launched.running()).isEmpty();
            });
  }

  /**
   * The pod is bound to a launched node of {@code instanceType}, its claim holds {@code devices}
   * devices of that node's pool for {@code request}, and the node's kubelet prepared them.
   */
  private static void assertRunsWith(Pod pod, String instanceType, String request, int devices) {
    String node = pod.getSpec().getNodeName();
    assertThat(node).as("node of %s", pod.getMetadata().getName()).isNotNull();
    assertThat(client.nodes().withName(node).get().getMetadata().getLabels())
        .containsEntry(ScaleOutScenario.INSTANCE_TYPE_LABEL, instanceType)
        .containsEntry("cloud.google.com/compute-class", COMPUTE_CLASS_NAME);
    ResourceClaim claim = Dra.claimOf(client, pod, "gpu");
    assertThat(Dra.devices(claim)).hasSize(devices).allMatch(d -> d.startsWith(node + "/"));
    assertThat(claim.getStatus().getAllocation().getDevices().getResults())
        .allSatisfy(r -> assertThat(r.getRequest()).isEqualTo(request));
    assertThat(stack.nodes.kubelet(node)).as("kubelet of %s", node).isNotNull();
    assertThat(stack.nodes.kubelet(node).prepared(pod)).isNotNull();
    // what bin/demo --scale-out waits for says the same
    assertThat(scenario.placement(pod).runsWith(instanceType, request, devices)).isTrue();
  }

  private static Set<String> names(List<Pod> pods) {
    return pods.stream().map(p -> p.getMetadata().getName()).collect(Collectors.toSet());
  }
}
