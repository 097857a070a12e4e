package io.kdra.it;

import static io.kdra.it.nodes.SimulatedNode.oneA100;
import static io.kdra.it.nodes.SimulatedNode.twoL4s;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.fabric8.kubernetes.api.model.GenericKubernetesResource;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.PodCondition;
import io.fabric8.kubernetes.api.model.resource.v1.ResourceClaim;
import io.fabric8.kubernetes.api.model.resource.v1.ResourceClaimTemplate;
import io.fabric8.kubernetes.api.model.resource.v1.ResourceSlice;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.dsl.base.ResourceDefinitionContext;
import io.fabric8.kubernetes.client.utils.Serialization;
import io.kdra.it.controlplane.ControlPlane;
import io.kdra.it.services.Dra;
import io.kdra.it.services.KdraStack;
import io.kdra.it.services.Stack;
import io.kdra.it.support.ServiceProcess;
import java.time.Duration;
import java.util.List;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.MethodOrderer;
import org.junit.jupiter.api.Order;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestMethodOrder;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * Scenario 4 (a ComputeClass "one A100, else two L4s" through the computeclass-bridge) and, last
 * because it takes node-b away, scenario 6 (a deleted node: its slices go, nothing is allocated
 * there any more).
 */
@ExtendWith(ControlPlane.class)
@TestMethodOrder(MethodOrderer.OrderAnnotation.class)
class ComputeClassIT {

  @RegisterExtension
  static final KdraStack STACK = KdraStack.nodes(twoL4s("node-a"), oneA100("node-b")).withBridge();

  private static final ResourceDefinitionContext COMPUTE_CLASS =
      new ResourceDefinitionContext.Builder()
          .withGroup("cloud.google.com")
          .withVersion("v1")
          .withKind("ComputeClass")
          .withPlural("computeclasses")
          .withNamespaced(false)
          .build();

  private static Stack stack;
  private static KubernetesClient client;

  @BeforeAll
  static void computeClassAndSlices() {
    stack = STACK.get();
    client = stack.client;
    // a name of its own: the class stays on the shared API server after this IT, and the
    // scale-out scenario's "a100-or-l4" is created later by KarpenterScaleOutIT
    client
        .genericKubernetesResources(COMPUTE_CLASS)
        .resource(
            Serialization.unmarshal(
                """
        apiVersion: cloud.google.com/v1
        kind: ComputeClass
        metadata:
          name: a100-else-l4
        spec:
          priorities:
            - gpu: {type: nvidia-tesla-a100, count: 1}
            - gpu: {type: nvidia-l4, count: 2}
          whenUnsatisfiable: DoNotScaleUp
        """,
                GenericKubernetesResource.class))
        .create();
    await()
        .atMost(Duration.ofSeconds(60))
        .untilAsserted(
            () -> {
              assertThat(Dra.publishedDevices(client, "node-a")).isEqualTo(2);
              assertThat(Dra.publishedDevices(client, "node-b")).isEqualTo(1);
              assertThat(
                      client
                          .resources(ResourceClaimTemplate.class)
                          .inNamespace(stack.namespace)
                          .withName("a100-else-l4")
                          .get())
                  .isNotNull();
            });
  }

  @AfterEach
  void noPodsLeft() {
    stack.deletePodsAndAwaitClaimsGone();
  }

  /**
   * The first pod gets the preferred A100, the second the fallback of two L4s, the third nothing:
   * it stays Pending and says why, per alternative.
   */
  @Test
  @Order(1)
  void aComputeClassPrefersTheA100ThenFallsBackToTwoL4s() {
    String ns = stack.namespace;
    Pod first = client.resource(Dra.podWithTemplate(ns, "first", "a100-else-l4")).create();
    await()
        .atMost(Duration.ofSeconds(60))
        .untilAsserted(() -> assertThat(stack.nodes.kubelet("node-b").prepared(first)).isNotNull());
    ResourceClaim firstClaim = Dra.claimOf(client, first, "gpu");
    assertThat(Dra.devices(firstClaim)).containsExactly("node-b/gpu-0");
    assertThat(firstClaim.getStatus().getAllocation().getDevices().getResults().get(0).getRequest())
        .isEqualTo("accelerator/nvidia-tesla-a100-x1");

    Pod second = client.resource(Dra.podWithTemplate(ns, "second", "a100-else-l4")).create();
    await()
        .atMost(Duration.ofSeconds(60))
        .untilAsserted(
            () -> assertThat(stack.nodes.kubelet("node-a").prepared(second)).isNotNull());
    ResourceClaim secondClaim = Dra.claimOf(client, second, "gpu");
    assertThat(Dra.devices(secondClaim)).containsExactlyInAnyOrder("node-a/gpu-0", "node-a/gpu-1");
    assertThat(secondClaim.getStatus().getAllocation().getDevices().getResults())
        .allSatisfy(r -> assertThat(r.getRequest()).isEqualTo("accelerator/nvidia-l4-x2"));
    assertThat(stack.nodes.kubelet("node-a").prepared(second).deviceCdiIds()).hasSize(2);

    Pod third = client.resource(Dra.podWithTemplate(ns, "third", "a100-else-l4")).create();
    await()
        .atMost(Duration.ofSeconds(90))
        .untilAsserted(
            () -> {
              PodCondition scheduled = scheduled(third);
              assertThat(scheduled).isNotNull();
              assertThat(scheduled.getStatus()).isEqualTo("False");
              assertThat(scheduled.getMessage())
                  .contains("nvidia-tesla-a100-x1")
                  .contains("nvidia-l4-x2");
            });
    assertThat(Dra.get(client, third).getSpec().getNodeName()).isNull();
  }

  /**
   * Scenario 6: node-b is deleted while its driver keeps reporting: its slices are removed and stay
   * removed, the A100 is never allocated again, and the L4s on node-a still are.
   */
  @Test
  @Order(2)
  void aDeletedNodesSlicesGoAndNothingIsAllocatedThere() {
    String ns = stack.namespace;
    client.nodes().withName("node-b").delete();
    await()
        .atMost(Duration.ofSeconds(90))
        .untilAsserted(() -> assertThat(slicesOf("node-b")).isEmpty());
    // node-b's driver sends snapshots every 2 s: they must not bring the slices back
    ServiceProcess.sleep(5000);
    assertThat(slicesOf("node-b")).isEmpty();
    assertThat(Dra.publishedDevices(client, "node-a")).isEqualTo(2);

    Pod pod = client.resource(Dra.podWithTemplate(ns, "after", "a100-else-l4")).create();
    await()
        .atMost(Duration.ofSeconds(60))
        .untilAsserted(() -> assertThat(stack.nodes.kubelet("node-a").prepared(pod)).isNotNull());
    assertThat(Dra.devices(Dra.claimOf(client, pod, "gpu")))
        .containsExactlyInAnyOrder("node-a/gpu-0", "node-a/gpu-1");
    assertThat(stack.nodes.kubelet("node-b").prepared()).isEmpty();
  }

  private static List<ResourceSlice> slicesOf(String node) {
    return client.resources(ResourceSlice.class).list().getItems().stream()
        .filter(
            s ->
                node.equals(s.getSpec().getNodeName())
                    || node.equals(s.getSpec().getPool().getName()))
        .toList();
  }

  private static PodCondition scheduled(Pod pod) {
    Pod current = Dra.get(client, pod);
    if (current == null || current.getStatus() == null) {
      return null;
    }
    return current.getStatus().getConditions().stream()
        .filter(c -> c.getType().equals("PodScheduled"))
        .findFirst()
        .orElse(null);
  }
}
