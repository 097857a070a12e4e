package io.kdra.it;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.fabric8.kubernetes.api.model.GenericKubernetesResource;
import io.fabric8.kubernetes.api.model.Node;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.PodSpec;
import io.fabric8.kubernetes.api.model.resource.v1.ResourceClaim;
import io.fabric8.kubernetes.api.model.resource.v1.ResourceClaimTemplate;
import io.fabric8.kubernetes.api.model.resource.v1.ResourceSlice;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.dsl.base.ResourceDefinitionContext;
import io.fabric8.kubernetes.client.utils.Serialization;
import io.kdra.it.controlplane.ControlPlane;
import io.kdra.it.karpenter.KarpenterKwok;
import io.kdra.it.karpenter.KarpenterTemplates;
import io.kdra.it.karpenter.KarpenterTemplates.InstanceTypeInventory;
import io.kdra.it.karpenter.LaunchedNodes;
import io.kdra.it.nodes.SimulatedNode;
import io.kdra.it.services.Dra;
import io.kdra.it.services.KdraStack;
import io.kdra.it.services.Stack;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.function.Function;
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
 * the template (our controller adopts them) and collects the garbage.
 */
@ExtendWith(ControlPlane.class)
@TestMethodOrder(MethodOrderer.OrderAnnotation.class)
class KarpenterScaleOutIT {

  private static final String A100_TYPE = "a100-x1";
  private static final String L4_TYPE = "l4-x2";
  // not ComputeClassIT's "a100-or-l4": that class stays on the shared API server after its IT
  private static final String COMPUTE_CLASS_NAME = "grow-a100-or-l4";
  private static final String APP = "gpu-work";

  /** Karpenter's launches and removals take a few of its batch and disruption rounds each. */
  private static final Duration TIMEOUT = Duration.ofSeconds(300);

  @RegisterExtension
  static final KdraStack STACK =
      KdraStack.nodes()
          .withBridge()
          .fullControlPlane()
          .withProperties(
              Map.of(
                  "kdra.computeclass-bridge.scale-out.enabled",
                  "true",
                  "kdra.computeclass-bridge.scale-out.instance-types",
                  A100_TYPE + "=nvidia-tesla-a100:1," + L4_TYPE + "=nvidia-l4:2"));

  private static final ResourceDefinitionContext COMPUTE_CLASS =
      new ResourceDefinitionContext.Builder()
          .withGroup("cloud.google.com")
          .withVersion("v1")
          .withKind("ComputeClass")
          .withPlural("computeclasses")
          .withNamespaced(false)
          .build();

  private static final ResourceDefinitionContext NODE_POOL = karpenter("NodePool", "nodepools");
  private static final ResourceDefinitionContext NODE_CLAIM = karpenter("NodeClaim", "nodeclaims");
  private static final ResourceDefinitionContext NODE_CLASS =
      new ResourceDefinitionContext.Builder()
          .withGroup("karpenter.kwok.sh")
          .withVersion("v1alpha1")
          .withKind("KWOKNodeClass")
          .withPlural("kwoknodeclasses")
          .withNamespaced(false)
          .build();

  /** The simulated node of each instance type: what its driver reports. */
  private static final Map<String, Function<String, SimulatedNode>> INVENTORIES =
      Map.of(A100_TYPE, SimulatedNode::oneA100, L4_TYPE, SimulatedNode::twoL4s);

  private static Stack stack;
  private static KubernetesClient client;
  private static KarpenterKwok karpenter;
  private static LaunchedNodes launched;

  @BeforeAll
  static void karpenterAndTheComputeClass() {
    stack = STACK.get();
    client = stack.client;
    KarpenterKwok.installCrds(client);
    nodeClassReady();
    karpenter =
        KarpenterKwok.start(
            stack.adminKubeconfig(),
            List.of(
                // the A100 machine is the cheaper one: Karpenter never replaces it by an L4 one
                new KarpenterKwok.InstanceType(A100_TYPE, 1.0),
                new KarpenterKwok.InstanceType(L4_TYPE, 2.0)),
            KarpenterTemplates.json(
                Stack.DRIVER, List.of(templatesOf(A100_TYPE), templatesOf(L4_TYPE)), Instant.now()),
            stack.logDir());
    launched = new LaunchedNodes(stack, INVENTORIES);
    client
        .genericKubernetesResources(COMPUTE_CLASS)
        .resource(
            Serialization.unmarshal(
                """
        apiVersion: cloud.google.com/v1
        kind: ComputeClass
        metadata:
          name: grow-a100-or-l4
        spec:
          priorities:
            - gpu: {type: nvidia-tesla-a100, count: 1}
            - gpu: {type: nvidia-l4, count: 2}
          whenUnsatisfiable: DoNotScaleUp
        """,
                GenericKubernetesResource.class))
        .create();
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
              assertThat(weightOf(COMPUTE_CLASS_NAME + "-nvidia-tesla-a100-x1")).isEqualTo(100);
              assertThat(weightOf(COMPUTE_CLASS_NAME + "-nvidia-l4-x2")).isEqualTo(99);
              assertThat(ready(COMPUTE_CLASS_NAME + "-nvidia-tesla-a100-x1")).isTrue();
              assertThat(ready(COMPUTE_CLASS_NAME + "-nvidia-l4-x2")).isTrue();
            });
    assertThat(client.nodes().withLabel(LaunchedNodes.NODE_POOL_LABEL).list().getItems())
        .as("no node before the Deployment")
        .isEmpty();
  }

  @AfterAll
  static void karpenterGoes() {
    if (stack == null) {
      return;
    }
    try {
      quietly(
          () ->
              client
                  .apps()
                  .deployments()
                  .inNamespace(stack.namespace)
                  .withName(APP)
                  .withGracePeriod(0)
                  .delete());
      quietly(
          () ->
              client
                  .genericKubernetesResources(COMPUTE_CLASS)
                  .withName(COMPUTE_CLASS_NAME)
                  .delete());
      quietly(() -> client.genericKubernetesResources(NODE_POOL).delete());
    } finally {
      if (launched != null) {
        launched.close();
        launched.running().forEach(n -> quietly(() -> stack.removeNode(n)));
      }
      if (karpenter != null) {
        karpenter.close();
      }
      // with Karpenter gone, nothing removes its finalizers any more
      for (ResourceDefinitionContext kind : List.of(NODE_CLAIM, NODE_POOL, NODE_CLASS)) {
        orNone(() -> client.genericKubernetesResources(kind).list().getItems())
            .forEach(o -> quietly(() -> dropFinalizersAndDelete(kind, o)));
      }
      orNone(() -> client.nodes().withLabel(LaunchedNodes.NODE_POOL_LABEL).list().getItems())
          .forEach(
              n ->
                  quietly(
                      () -> {
                        client
                            .nodes()
                            .withName(n.getMetadata().getName())
                            .edit(
                                x -> {
                                  x.getMetadata().setFinalizers(List.of());
                                  return x;
                                });
                        client.nodes().withName(n.getMetadata().getName()).delete();
                      }));
      quietly(() -> KarpenterKwok.uninstallCrds(client));
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
    PodSpec spec = Dra.podWithTemplate(stack.namespace, "x", COMPUTE_CLASS_NAME).getSpec();
    var deployment = Dra.deployment(stack.namespace, APP, 3, spec);
    // Karpenter never moves a running replica to another node while the test looks at it
    deployment
        .getSpec()
        .getTemplate()
        .getMetadata()
        .setAnnotations(Map.of("karpenter.sh/do-not-disrupt", "true"));
    client.resource(deployment).create();

    await()
        .atMost(TIMEOUT)
        .untilAsserted(
            () -> {
              List<Pod> pods = pods();
              assertThat(pods).hasSize(3);
              for (Pod pod : pods) {
                assertRunsWith(pod, A100_TYPE, "accelerator/nvidia-tesla-a100-x1", 1);
              }
              assertThat(pods.stream().map(p -> p.getSpec().getNodeName()).distinct()).hasSize(3);
            });
    assertThat(nodesOf(A100_TYPE)).hasSize(3);
    assertThat(nodesOf(L4_TYPE)).isEmpty();
  }

  /**
   * Fallback: with no A100 capacity left, the next two replicas get nodes of the second priority's
   * NodePool, two L4s each, allocated for the template's second subrequest.
   */
  @Test
  @Order(2)
  void withoutA100CapacityTheNextReplicasGetL4Nodes() {
    Set<String> before = names(pods());
    karpenter.noCapacityFor(A100_TYPE);
    client.apps().deployments().inNamespace(stack.namespace).withName(APP).scale(5);

    await()
        .atMost(TIMEOUT)
        .untilAsserted(
            () -> {
              List<Pod> pods = pods();
              assertThat(pods).hasSize(5);
              List<Pod> next =
                  pods.stream().filter(p -> !before.contains(p.getMetadata().getName())).toList();
              assertThat(next).hasSize(2);
              for (Pod pod : next) {
                assertRunsWith(pod, L4_TYPE, "accelerator/nvidia-l4-x2", 2);
              }
            });
    assertThat(nodesOf(A100_TYPE)).hasSize(3);
    assertThat(nodesOf(L4_TYPE)).hasSize(2);
  }

  /**
   * Scale down to zero: the claims go with their pods, Karpenter removes the empty nodes, and their
   * drivers' slices go with the nodes.
   */
  @Test
  @Order(3)
  void scalingDownRemovesTheNodesTheirSlicesAndClaims() {
    assertThat(launched.everLaunched()).as("nodes launched by the earlier steps").isNotEmpty();
    client.apps().deployments().inNamespace(stack.namespace).withName(APP).scale(0);

    await()
        .atMost(TIMEOUT)
        .untilAsserted(
            () -> {
              assertThat(pods()).isEmpty();
              assertThat(
                      client
                          .resources(ResourceClaim.class)
                          .inNamespace(stack.namespace)
                          .list()
                          .getItems())
                  .isEmpty();
              assertThat(client.nodes().withLabel(LaunchedNodes.NODE_POOL_LABEL).list().getItems())
                  .isEmpty();
              assertThat(client.genericKubernetesResources(NODE_CLAIM).list().getItems()).isEmpty();
              // other test classes on the same API server leave slices of their own nodes
              assertThat(client.resources(ResourceSlice.class).list().getItems())
                  .noneMatch(
                      slice -> launched.everLaunched().contains(slice.getSpec().getNodeName()));
            });
    assertThat(launched.running()).isEmpty();
  }

  /**
   * The pod is bound to a launched node of {@code instanceType}, its claim holds {@code devices}
   * devices of that node's pool for {@code request}, and the node's kubelet prepared them.
   */
  private static void assertRunsWith(Pod pod, String instanceType, String request, int devices) {
    String node = pod.getSpec().getNodeName();
    assertThat(node).as("node of %s", pod.getMetadata().getName()).isNotNull();
    assertThat(client.nodes().withName(node).get().getMetadata().getLabels())
        .containsEntry("node.kubernetes.io/instance-type", instanceType)
        .containsEntry("cloud.google.com/compute-class", COMPUTE_CLASS_NAME);
    ResourceClaim claim = Dra.claimOf(client, pod, "gpu");
    assertThat(Dra.devices(claim)).hasSize(devices).allMatch(d -> d.startsWith(node + "/"));
    assertThat(claim.getStatus().getAllocation().getDevices().getResults())
        .allSatisfy(r -> assertThat(r.getRequest()).isEqualTo(request));
    assertThat(stack.nodes.kubelet(node)).as("kubelet of %s", node).isNotNull();
    assertThat(stack.nodes.kubelet(node).prepared(pod)).isNotNull();
  }

  private static List<Pod> pods() {
    return client.pods().inNamespace(stack.namespace).withLabel("app", APP).list().getItems();
  }

  private static Set<String> names(List<Pod> pods) {
    return pods.stream().map(p -> p.getMetadata().getName()).collect(Collectors.toSet());
  }

  private static List<Node> nodesOf(String instanceType) {
    return client
        .nodes()
        .withLabel(LaunchedNodes.NODE_POOL_LABEL)
        .withLabel("node.kubernetes.io/instance-type", instanceType)
        .list()
        .getItems();
  }

  private static String inventory(String instanceType) {
    return INVENTORIES.get(instanceType).apply(instanceType).inventory();
  }

  private static InstanceTypeInventory templatesOf(String instanceType) {
    return new InstanceTypeInventory(
        instanceType,
        inventory(instanceType),
        Map.of("node.kubernetes.io/instance-type", instanceType));
  }

  /**
   * The KWOK provider's NodeClass, Ready: nothing in the KWOK provider sets its status, and
   * Karpenter uses a NodePool only while its NodeClass is Ready.
   */
  private static void nodeClassReady() {
    GenericKubernetesResource nodeClass =
        client
            .genericKubernetesResources(NODE_CLASS)
            .resource(
                Serialization.unmarshal(
                    """
            apiVersion: karpenter.kwok.sh/v1alpha1
            kind: KWOKNodeClass
            metadata:
              name: default
            """,
                    GenericKubernetesResource.class))
            .create();
    nodeClass.setAdditionalProperty(
        "status",
        Map.of(
            "conditions",
            List.of(
                Map.of(
                    "type", "Ready",
                    "status", "True",
                    "reason", "Ready",
                    "message", "",
                    "observedGeneration", nodeClass.getMetadata().getGeneration(),
                    "lastTransitionTime", Instant.now().toString()))));
    client.genericKubernetesResources(NODE_CLASS).resource(nodeClass).updateStatus();
  }

  @SuppressWarnings("unchecked")
  private static Integer weightOf(String nodePool) {
    GenericKubernetesResource np =
        client.genericKubernetesResources(NODE_POOL).withName(nodePool).get();
    if (np == null) {
      return null;
    }
    return (Integer) ((Map<String, Object>) np.getAdditionalProperties().get("spec")).get("weight");
  }

  @SuppressWarnings("unchecked")
  private static boolean ready(String nodePool) {
    GenericKubernetesResource np =
        client.genericKubernetesResources(NODE_POOL).withName(nodePool).get();
    if (np == null || !(np.getAdditionalProperties().get("status") instanceof Map<?, ?> status)) {
      return false;
    }
    Object conditions = status.get("conditions");
    return conditions instanceof List<?> list
        && list.stream()
            .map(c -> (Map<String, Object>) c)
            .anyMatch(c -> "Ready".equals(c.get("type")) && "True".equals(c.get("status")));
  }

  private static void dropFinalizersAndDelete(
      ResourceDefinitionContext kind, GenericKubernetesResource o) {
    var one = client.genericKubernetesResources(kind).withName(o.getMetadata().getName());
    one.edit(
        x -> {
          x.getMetadata().setFinalizers(List.of());
          return x;
        });
    one.delete();
  }

  private static ResourceDefinitionContext karpenter(String kind, String plural) {
    return new ResourceDefinitionContext.Builder()
        .withGroup("karpenter.sh")
        .withVersion("v1")
        .withKind(kind)
        .withPlural(plural)
        .withNamespaced(false)
        .build();
  }

  private static void quietly(Runnable r) {
    try {
      r.run();
    } catch (RuntimeException e) {
      System.out.println("[karpenter] cleanup: " + e);
    }
  }

  private static <T> List<T> orNone(java.util.function.Supplier<List<T>> s) {
    try {
      return s.get();
    } catch (RuntimeException e) {
      System.out.println("[karpenter] cleanup: " + e);
      return List.of();
    }
  }
}
