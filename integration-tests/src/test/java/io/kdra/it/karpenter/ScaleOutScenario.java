package io.kdra.it.karpenter;

import io.fabric8.kubernetes.api.model.GenericKubernetesResource;
import io.fabric8.kubernetes.api.model.Node;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.PodSpec;
import io.fabric8.kubernetes.api.model.apps.Deployment;
import io.fabric8.kubernetes.api.model.resource.v1.DeviceRequestAllocationResult;
import io.fabric8.kubernetes.api.model.resource.v1.ResourceClaim;
import io.fabric8.kubernetes.api.model.resource.v1.ResourceClaimTemplate;
import io.fabric8.kubernetes.api.model.resource.v1.ResourceSlice;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.dsl.base.ResourceDefinitionContext;
import io.fabric8.kubernetes.client.utils.Serialization;
import io.kdra.it.karpenter.KarpenterTemplates.InstanceTypeInventory;
import io.kdra.it.nodes.SimulatedNode;
import io.kdra.it.nodes.TestKubelet;
import io.kdra.it.services.Dra;
import io.kdra.it.services.Stack;
import java.time.Instant;
import java.util.List;
import java.util.Map;
import java.util.function.Function;

/**
 * Issue 46's scale-out scenario, for {@code KarpenterScaleOutIT} and {@code bin/demo --scale-out}
 * alike: on a stack whose bridge has scale-out on ({@link #BRIDGE_PROPERTIES}) and no node yet,
 * Karpenter (kdra-karpenter-kwok) with two instance types, {@value #A100_TYPE} (one 40Gi A100, the
 * cheaper) and {@value #L4_TYPE} (two 24Gi L4s), the nodes it launches brought up ({@link
 * LaunchedNodes}), the ComputeClass "1 x A100, else 2 x L4", and a Deployment whose pods use the
 * bridge's template. What the steps wait for and look at is here; the waiting is the caller's.
 */
public final class ScaleOutScenario implements AutoCloseable {

  public static final String A100_TYPE = "a100-x1";
  public static final String L4_TYPE = "l4-x2";
  public static final String COMPUTE_CLASS_NAME = "a100-or-l4";
  public static final String APP = "gpu-work";

  /** The bridge's NodePools, one per priority, and the subrequests of its template. */
  public static final String A100_NODE_POOL = "a100-or-l4-nvidia-tesla-a100-x1";

  public static final String L4_NODE_POOL = "a100-or-l4-nvidia-l4-x2";
  public static final String A100_REQUEST = "accelerator/nvidia-tesla-a100-x1";
  public static final String L4_REQUEST = "accelerator/nvidia-l4-x2";

  /** The label of each node's instance type, which Karpenter sets. */
  public static final String INSTANCE_TYPE_LABEL = "node.kubernetes.io/instance-type";

  /** The bridge with scale-out on, knowing the two instance types. */
  public static final Map<String, String> BRIDGE_PROPERTIES =
      Map.of(
          "kdra.computeclass-bridge.scale-out.enabled",
          "true",
          "kdra.computeclass-bridge.scale-out.instance-types",
          A100_TYPE + "=nvidia-tesla-a100:1," + L4_TYPE + "=nvidia-l4:2");

  public static final String COMPUTE_CLASS_YAML =
      """
      apiVersion: cloud.google.com/v1
      kind: ComputeClass
      metadata:
        name: a100-or-l4
      spec:
        priorities:
          - gpu: {type: nvidia-tesla-a100, count: 1}
          - gpu: {type: nvidia-l4, count: 2}
        whenUnsatisfiable: DoNotScaleUp
      """;

  public static final ResourceDefinitionContext COMPUTE_CLASS =
      new ResourceDefinitionContext.Builder()
          .withGroup("cloud.google.com")
          .withVersion("v1")
          .withKind("ComputeClass")
          .withPlural("computeclasses")
          .withNamespaced(false)
          .build();

  public static final ResourceDefinitionContext NODE_POOL = karpenter("NodePool", "nodepools");
  public static final ResourceDefinitionContext NODE_CLAIM = karpenter("NodeClaim", "nodeclaims");
  public static final ResourceDefinitionContext NODE_CLASS =
      new ResourceDefinitionContext.Builder()
          .withGroup("karpenter.kwok.sh")
          .withVersion("v1alpha1")
          .withKind("KWOKNodeClass")
          .withPlural("kwoknodeclasses")
          .withNamespaced(false)
          .build();

  /** The simulated node of each instance type: what its driver reports. */
  public static final Map<String, Function<String, SimulatedNode>> INVENTORIES =
      Map.of(A100_TYPE, SimulatedNode::oneA100, L4_TYPE, SimulatedNode::twoL4s);

  /**
   * Where a pod of the Deployment runs and with what.
   *
   * @param node its node, null while pending
   * @param instanceType its node's instance type
   * @param computeClass its node's ComputeClass label
   * @param requests the requests its claim's devices were allocated for, one per device
   * @param devices its claim's devices, {@code pool/device}
   * @param prepared whether its node's kubelet prepared the claim
   */
  public record Placement(
      String pod,
      String node,
      String instanceType,
      String computeClass,
      List<String> requests,
      List<String> devices,
      boolean prepared) {

    /**
     * Bound to a node of {@code type}, its claim holding {@code count} devices of that node for
     * {@code request}, prepared.
     */
    public boolean runsWith(String type, String request, int count) {
      return node != null
          && type.equals(instanceType)
          && prepared
          && devices.size() == count
          && devices.stream().allMatch(d -> d.startsWith(node + "/"))
          && requests.stream().allMatch(request::equals);
    }
  }

  private final Stack stack;
  private final KubernetesClient client;
  private final KarpenterKwok karpenter;
  private final LaunchedNodes launched;

  private ScaleOutScenario(Stack stack, KarpenterKwok karpenter, LaunchedNodes launched) {
    this.stack = stack;
    this.client = stack.client;
    this.karpenter = karpenter;
    this.launched = launched;
  }

  /**
   * Karpenter's CRDs, its NodeClass Ready, Karpenter started, the launched nodes brought up from
   * now on, and the ComputeClass created; returns once Karpenter is ready (the bridge's objects
   * follow: {@link #bridgeReady}).
   */
  public static ScaleOutScenario start(Stack stack) {
    KubernetesClient client = stack.client;
    KarpenterKwok.installCrds(client);
    nodeClassReady(client);
    KarpenterKwok karpenter =
        KarpenterKwok.start(
            stack.adminKubeconfig(),
            List.of(
                // the A100 machine is the cheaper one: Karpenter never replaces it by an L4 one
                new KarpenterKwok.InstanceType(A100_TYPE, 1.0),
                new KarpenterKwok.InstanceType(L4_TYPE, 2.0)),
            KarpenterTemplates.json(
                Stack.DRIVER, List.of(templatesOf(A100_TYPE), templatesOf(L4_TYPE)), Instant.now()),
            stack.logDir());
    LaunchedNodes launched;
    try {
      launched = new LaunchedNodes(stack, INVENTORIES);
      client
          .genericKubernetesResources(COMPUTE_CLASS)
          .resource(Serialization.unmarshal(COMPUTE_CLASS_YAML, GenericKubernetesResource.class))
          .create();
    } catch (RuntimeException e) {
      karpenter.close();
      throw e;
    }
    return new ScaleOutScenario(stack, karpenter, launched);
  }

  /**
   * The bridge made the ComputeClass's template and its NodePools, by priority (weights 100 and
   * 99), and Karpenter took them (Ready).
   */
  public boolean bridgeReady() {
    return client
                .resources(ResourceClaimTemplate.class)
                .inNamespace(stack.namespace)
                .withName(COMPUTE_CLASS_NAME)
                .get()
            != null
        && Integer.valueOf(100).equals(weightOf(A100_NODE_POOL))
        && Integer.valueOf(99).equals(weightOf(L4_NODE_POOL))
        && ready(A100_NODE_POOL)
        && ready(L4_NODE_POOL);
  }

  /** The Deployment of {@code replicas} pods whose claim comes from the bridge's template. */
  public void createDeployment(int replicas) {
    PodSpec spec = Dra.podWithTemplate(stack.namespace, "x", COMPUTE_CLASS_NAME).getSpec();
    Deployment deployment = Dra.deployment(stack.namespace, APP, replicas, spec);
    // Karpenter never moves a running replica to another node while the scenario looks at it
    deployment
        .getSpec()
        .getTemplate()
        .getMetadata()
        .setAnnotations(Map.of("karpenter.sh/do-not-disrupt", "true"));
    client.resource(deployment).create();
  }

  public void scale(int replicas) {
    client.apps().deployments().inNamespace(stack.namespace).withName(APP).scale(replicas);
  }

  /** From now on Karpenter's provider has no A100 machine left ({@link KarpenterKwok}). */
  public void noA100Capacity() {
    karpenter.noCapacityFor(A100_TYPE);
  }

  /** The Deployment's pods. */
  public List<Pod> pods() {
    return client.pods().inNamespace(stack.namespace).withLabel("app", APP).list().getItems();
  }

  /** Where {@code pod} runs and with what, as the API server and its node's kubelet say now. */
  public Placement placement(Pod pod) {
    String name = pod.getMetadata().getName();
    String node = pod.getSpec().getNodeName();
    if (node == null) {
      return new Placement(name, null, null, null, List.of(), List.of(), false);
    }
    Node n = client.nodes().withName(node).get();
    Map<String, String> labels =
        n == null || n.getMetadata().getLabels() == null ? Map.of() : n.getMetadata().getLabels();
    ResourceClaim claim = Dra.claimOf(client, pod, "gpu");
    boolean allocated =
        claim != null && claim.getStatus() != null && claim.getStatus().getAllocation() != null;
    List<String> requests =
        allocated
            ? claim.getStatus().getAllocation().getDevices().getResults().stream()
                .map(DeviceRequestAllocationResult::getRequest)
                .toList()
            : List.of();
    TestKubelet kubelet = stack.nodes.kubelet(node);
    return new Placement(
        name,
        node,
        labels.get(INSTANCE_TYPE_LABEL),
        labels.get("cloud.google.com/compute-class"),
        requests,
        allocated ? Dra.devices(claim) : List.of(),
        kubelet != null && kubelet.prepared(pod) != null);
  }

  /** The nodes Karpenter launched that are there now, of {@code instanceType}. */
  public List<Node> nodesOf(String instanceType) {
    return client
        .nodes()
        .withLabel(LaunchedNodes.NODE_POOL_LABEL)
        .withLabel(INSTANCE_TYPE_LABEL, instanceType)
        .list()
        .getItems();
  }

  /** The nodes Karpenter launched that are there now. */
  public List<Node> launchedNodes() {
    return client.nodes().withLabel(LaunchedNodes.NODE_POOL_LABEL).list().getItems();
  }

  public LaunchedNodes launched() {
    return launched;
  }

  /**
   * After scaling to zero: no pod or claim of the Deployment's namespace, no node or NodeClaim of
   * Karpenter's, no slice of a node it launched (other tests on the same API server leave slices of
   * their own nodes).
   */
  public boolean allGone() {
    return pods().isEmpty()
        && client
            .resources(ResourceClaim.class)
            .inNamespace(stack.namespace)
            .list()
            .getItems()
            .isEmpty()
        && launchedNodes().isEmpty()
        && client.genericKubernetesResources(NODE_CLAIM).list().getItems().isEmpty()
        && client.resources(ResourceSlice.class).list().getItems().stream()
            .noneMatch(s -> launched.everLaunched().contains(s.getSpec().getNodeName()));
  }

  /**
   * Karpenter stops, and so does bringing up the nodes it launched; the nodes up so far keep their
   * kubelet and driver (the stack stops them). For a cluster that goes with them (the demo's).
   */
  @Override
  public void close() {
    try {
      karpenter.close();
    } finally {
      launched.closeNow();
    }
  }

  /**
   * For a cluster that stays (the test suite's API server): the Deployment, the ComputeClass and
   * the NodePools deleted, Karpenter stopped, the launched nodes' kubelets and drivers stopped, and
   * what Karpenter would have finalized deleted without it, then its CRDs.
   */
  public void closeAndCleanUp() {
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
      launched.close();
      launched.running().forEach(n -> quietly(() -> stack.removeNode(n)));
      karpenter.close();
      // with Karpenter gone, nothing removes its finalizers any more
      for (ResourceDefinitionContext kind : List.of(NODE_CLAIM, NODE_POOL, NODE_CLASS)) {
        orNone(() -> client.genericKubernetesResources(kind).list().getItems())
            .forEach(o -> quietly(() -> dropFinalizersAndDelete(kind, o)));
      }
      orNone(this::launchedNodes)
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

  private static InstanceTypeInventory templatesOf(String instanceType) {
    return new InstanceTypeInventory(
        instanceType,
        INVENTORIES.get(instanceType).apply(instanceType).inventory(),
        Map.of(INSTANCE_TYPE_LABEL, instanceType));
  }

  /**
   * The KWOK provider's NodeClass, Ready: nothing in the KWOK provider sets its status, and
   * Karpenter uses a NodePool only while its NodeClass is Ready.
   */
  private static void nodeClassReady(KubernetesClient client) {
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

  /** The weight of {@code nodePool}, or null when it is not there (yet). */
  @SuppressWarnings("unchecked")
  public Integer weightOf(String nodePool) {
    GenericKubernetesResource np =
        client.genericKubernetesResources(NODE_POOL).withName(nodePool).get();
    if (np == null) {
      return null;
    }
    return (Integer) ((Map<String, Object>) np.getAdditionalProperties().get("spec")).get("weight");
  }

  /** Whether Karpenter took {@code nodePool}: its Ready condition is True. */
  @SuppressWarnings("unchecked")
  public boolean ready(String nodePool) {
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

  private void dropFinalizersAndDelete(
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
