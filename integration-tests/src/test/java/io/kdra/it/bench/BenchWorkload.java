package io.kdra.it.bench;

import io.fabric8.kubernetes.api.model.GenericKubernetesResource;
import io.fabric8.kubernetes.api.model.GenericKubernetesResourceBuilder;
import io.fabric8.kubernetes.api.model.HasMetadata;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.resource.v1.Device;
import io.fabric8.kubernetes.api.model.resource.v1.DeviceAttribute;
import io.fabric8.kubernetes.api.model.resource.v1.DeviceAttributeBuilder;
import io.fabric8.kubernetes.api.model.resource.v1.DeviceBuilder;
import io.fabric8.kubernetes.api.model.resource.v1.DeviceCapacityBuilder;
import io.fabric8.kubernetes.api.model.resource.v1.DeviceClass;
import io.fabric8.kubernetes.api.model.resource.v1.ResourceClaim;
import io.fabric8.kubernetes.api.model.resource.v1.ResourceClaimTemplate;
import io.fabric8.kubernetes.api.model.resource.v1.ResourceSlice;
import io.fabric8.kubernetes.api.model.resource.v1.ResourceSliceBuilder;
import io.fabric8.kubernetes.client.utils.Serialization;
import io.kdra.it.nodes.SimulatedNode;
import io.kdra.it.services.Dra;
import io.kdra.it.services.Stack;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * The objects of one {@link SchedulingBenchmark} workload: the nodes' devices (one ResourceSlice of
 * 8 GPUs per node, written directly: no driver runs), the DeviceClasses, and the pods with their
 * templates or shared claims. The same objects for both sides but for the pods' {@code
 * schedulerName}. Every pod fits, so every pod must be bound.
 */
enum BenchWorkload {

  /** One GPU with at least 40Gi (a CEL capacity selector); half of each node's GPUs qualify. */
  SINGLE("one GPU, CEL memory selector", 3),
  /** Four GPUs on one PCIe root (matchAttribute); each node has two roots of four. */
  MATCH_ATTRIBUTE("4 GPUs, matchAttribute pcieRoot", 2),
  /**
   * firstAvailable: one A100, else two L4s. Every tenth node has 8 A100s, the others 8 L4s: there
   * are fewer A100s than pods, so both alternatives are used.
   */
  FIRST_AVAILABLE("firstAvailable: one A100 else two L4", 3),
  /** Three pods share each ResourceClaim of one GPU (at least 40Gi), created before the pods. */
  SHARED("shared claims, 3 pods per claim", 3),
  /**
   * As {@link #SINGLE}, with one more pod created just before them whose claim is valid but fits on
   * no node, found out only after trying every arrangement of its first requests ({@link
   * #adversaries}): the others' throughput against {@code single}'s says what it costs them.
   */
  ADVERSARIAL("one GPU as single, beside a pod whose search never succeeds", 3),
  /**
   * As {@link #SINGLE}, the pods in gangs of {@link #GANG_SIZE} (a PodGroup with a gang policy of
   * the 1.37 Workload API, created before the pods; the last one smaller when the pods do not
   * divide): each gang lands whole. Needs a control plane that serves the API.
   */
  GANG("one GPU as single, gangs of 4 pods (PodGroup minCount)", 3),
  /**
   * As {@link #SINGLE}, the pods filling 90% of the GPUs they can take, then waves that each
   * replace 10% of them, as ClusterLoader2's DRA test churns ({@link ChurnPlan}): the waves' times
   * to bind are what a cluster in use sees.
   */
  CHURN("one GPU as single, 90% of the GPUs it can take, then waves replacing 10%", 4);

  static final String NAMESPACE = "bench";
  static final String GPUS_PER_NODE_TEXT = "8";
  private static final int GPUS_PER_NODE = 8;

  /** The GPUs of a node that {@link #SINGLE}'s request can take: the second root's L40S. */
  static final int GPUS_OF_40GI_PER_NODE = GPUS_PER_NODE / 2;

  private static final int PODS_PER_SHARED_CLAIM = 3;
  private static final String A100 = "NVIDIA A100-SXM4-40GB";
  private static final String L4 = "NVIDIA L4";
  private static final String L40S = "NVIDIA L40S";
  private static final String PCIE_ROOT = "resource.kubernetes.io/pcieRoot";
  static final int GANG_SIZE = 4;

  final String description;

  /** At most this many pods per node by default: the most that fit on 100 nodes. */
  final int maxPodsPerNode;

  BenchWorkload(String description, int maxPodsPerNode) {
    this.description = description;
    this.maxPodsPerNode = maxPodsPerNode;
  }

  /** The name on the command line and in the results: {@code single}, {@code match} ... */
  String key() {
    return switch (this) {
      case SINGLE -> "single";
      case MATCH_ATTRIBUTE -> "match";
      case FIRST_AVAILABLE -> "first";
      case SHARED -> "shared";
      case ADVERSARIAL -> "adversarial";
      case GANG -> "gang";
      case CHURN -> "churn";
    };
  }

  static BenchWorkload of(String key) {
    for (BenchWorkload w : values()) {
      if (w.key().equals(key)) {
        return w;
      }
    }
    throw new IllegalArgumentException(
        "unknown workload "
            + key
            + "; one of single, match, first, shared, adversarial, gang, churn");
  }

  /** The node's ResourceSlice: 8 GPUs on two PCIe roots, its pool named as the node. */
  ResourceSlice slice(String node, int index) {
    List<Device> devices = new ArrayList<>();
    for (int i = 0; i < GPUS_PER_NODE; i++) {
      String product = product(index, i);
      String memory = product.equals(A100) ? "40Gi" : product.equals(L40S) ? "48Gi" : "24Gi";
      Map<String, DeviceAttribute> attributes = new LinkedHashMap<>();
      attributes.put("type", new DeviceAttributeBuilder().withString("gpu").build());
      attributes.put("index", new DeviceAttributeBuilder().withInt((long) i).build());
      attributes.put("productName", new DeviceAttributeBuilder().withString(product).build());
      attributes.put(
          "uuid", new DeviceAttributeBuilder().withString(SimulatedNode.uuid(node, i)).build());
      attributes.put(
          PCIE_ROOT,
          new DeviceAttributeBuilder()
              .withString(i < GPUS_PER_NODE / 2 ? "pci0000:10" : "pci0000:90")
              .build());
      devices.add(
          new DeviceBuilder()
              .withName("gpu-" + i)
              .withAttributes(attributes)
              .withCapacity(
                  Map.of(
                      "memory",
                      new DeviceCapacityBuilder()
                          .withValue(new io.fabric8.kubernetes.api.model.Quantity(memory))
                          .build()))
              .build());
    }
    return new ResourceSliceBuilder()
        .withNewMetadata()
        .withName(node + "-gpus")
        .endMetadata()
        .withNewSpec()
        .withDriver(Stack.DRIVER)
        .withNodeName(node)
        .withNewPool()
        .withName(node)
        .withGeneration(1L)
        .withResourceSliceCount(1L)
        .endPool()
        .withDevices(devices)
        .endSpec()
        .build();
  }

  private String product(int node, int device) {
    if (this == FIRST_AVAILABLE) {
      return node % 10 == 0 ? A100 : L4;
    }
    // two roots: four L4s (24Gi) on the first, four L40S (48Gi) on the second
    return device < GPUS_PER_NODE / 2 ? L4 : L40S;
  }

  /** The DeviceClasses the requests name. */
  List<DeviceClass> classes() {
    return List.of(
        Dra.gpuClass("bench-gpu", null),
        Dra.gpuClass(
            "bench-a100",
            "device.attributes[\"" + Stack.DRIVER + "\"].productName == \"" + A100 + "\""),
        Dra.gpuClass(
            "bench-l4",
            "device.attributes[\"" + Stack.DRIVER + "\"].productName == \"" + L4 + "\""));
  }

  /** The template every pod's claim comes from (none for {@link #SHARED}). */
  List<ResourceClaimTemplate> templates() {
    if (this == SHARED) {
      return List.of();
    }
    return List.of(
        Serialization.unmarshal(
            """
        apiVersion: resource.k8s.io/v1
        kind: ResourceClaimTemplate
        metadata: {name: gpu, namespace: %s}
        spec:
          spec:
            devices:
        %s"""
                .formatted(NAMESPACE, requests().indent(6)),
            ResourceClaimTemplate.class));
  }

  private String requests() {
    String memory =
        "device.capacity[\"" + Stack.DRIVER + "\"].memory.compareTo(quantity(\"40Gi\"))" + " >= 0";
    return switch (this) {
      case SINGLE, SHARED, ADVERSARIAL, GANG, CHURN ->
          """
          requests:
          - name: gpu
            exactly:
              deviceClassName: bench-gpu
              count: 1
              selectors:
              - cel: {expression: '%s'}
          """
              .formatted(memory);
      case MATCH_ATTRIBUTE ->
          """
          requests:
          - name: gpu
            exactly: {deviceClassName: bench-gpu, count: 4}
          constraints:
          - matchAttribute: %s
          """
              .formatted(PCIE_ROOT);
      case FIRST_AVAILABLE ->
          """
          requests:
          - name: gpu
            firstAvailable:
            - {name: a100, deviceClassName: bench-a100, count: 1}
            - {name: l4, deviceClassName: bench-l4, count: 2}
          """;
    };
  }

  /** The claims the pods share ({@link #SHARED} only), before the pods. */
  List<ResourceClaim> sharedClaims(int pods) {
    if (this != SHARED) {
      return List.of();
    }
    List<ResourceClaim> claims = new ArrayList<>();
    for (int i = 0; i < claimsFor(pods); i++) {
      claims.add(
          Serialization.unmarshal(
              """
          apiVersion: resource.k8s.io/v1
          kind: ResourceClaim
          metadata: {name: shared-%d, namespace: %s}
          spec:
            devices:
          %s"""
                  .formatted(i, NAMESPACE, requests().indent(4)),
              ResourceClaim.class));
    }
    return claims;
  }

  private static int claimsFor(int pods) {
    return (pods + PODS_PER_SHARED_CLAIM - 1) / PODS_PER_SHARED_CLAIM;
  }

  /** Name of the {@link #ADVERSARIAL} workload's pathological pod and of its claim. */
  static final String ADVERSARY = "adversary";

  /**
   * The pods to create before the measured ones and leave out of the counts: for {@link
   * #ADVERSARIAL}, one pod whose claim asks for six single GPUs and then nine (a node has eight),
   * so each node's search tries every arrangement of the six before it fails.
   */
  List<Pod> adversaries(String schedulerName) {
    if (this != ADVERSARIAL) {
      return List.of();
    }
    Pod pod = Dra.podWithClaim(NAMESPACE, ADVERSARY, ADVERSARY);
    pod.getSpec().setSchedulerName(schedulerName);
    pod.getSpec().setAutomountServiceAccountToken(false);
    return List.of(pod);
  }

  private List<ResourceClaim> adversaryClaims() {
    if (this != ADVERSARIAL) {
      return List.of();
    }
    StringBuilder requests = new StringBuilder("requests:\n");
    for (int i = 0; i < 6; i++) {
      requests.append("- {name: one-%d, exactly: {deviceClassName: bench-gpu}}\n".formatted(i));
    }
    requests.append(
        "- {name: nine, exactly: {deviceClassName: bench-gpu, count: %d}}\n"
            .formatted(GPUS_PER_NODE + 1));
    return List.of(
        Serialization.unmarshal(
            """
        apiVersion: resource.k8s.io/v1
        kind: ResourceClaim
        metadata: {name: %s, namespace: %s}
        spec:
          devices:
        %s"""
                .formatted(ADVERSARY, NAMESPACE, requests.toString().indent(4)),
            ResourceClaim.class));
  }

  /** Pod {@code i} of the run, for the scheduler {@code schedulerName}. */
  Pod pod(int i, String schedulerName) {
    return pod("", i, schedulerName);
  }

  /**
   * Pod {@code i} of the run, its name (and its PodGroup's) after {@code prefix}: the {@link
   * WarmBurst}'s pods share the measured ones' templates and shared claims, not their names.
   */
  Pod pod(String prefix, int i, String schedulerName) {
    String name = podName(prefix, i);
    Pod pod =
        this == SHARED
            ? Dra.podWithClaim(NAMESPACE, name, "shared-" + (i / PODS_PER_SHARED_CLAIM))
            : Dra.podWithTemplate(NAMESPACE, name, "gpu");
    if (this == GANG) {
      pod.getSpec()
          .setAdditionalProperty(
              "schedulingGroup", Map.of("podGroupName", gangName(prefix, i / GANG_SIZE)));
    }
    pod.getSpec().setSchedulerName(schedulerName);
    // no ServiceAccount token volume: no kubelet runs these pods
    pod.getSpec().setAutomountServiceAccountToken(false);
    return pod;
  }

  static String podName(int i) {
    return podName("", i);
  }

  static String podName(String prefix, int i) {
    return String.format("%spod-%05d", prefix, i);
  }

  static String gangName(String prefix, int gang) {
    return String.format("%sgang-%04d", prefix, gang);
  }

  /**
   * The {@link #GANG} workload's PodGroups, one per {@link #GANG_SIZE} pods, each of a gang policy
   * with {@code minCount} its number of pods.
   */
  List<GenericKubernetesResource> podGroups(int pods, String prefix) {
    if (this != GANG) {
      return List.of();
    }
    List<GenericKubernetesResource> groups = new ArrayList<>();
    for (int g = 0; g * GANG_SIZE < pods; g++) {
      int members = Math.min(GANG_SIZE, pods - g * GANG_SIZE);
      groups.add(
          new GenericKubernetesResourceBuilder()
              .withApiVersion("scheduling.k8s.io/v1beta1")
              .withKind("PodGroup")
              .withNewMetadata()
              .withNamespace(NAMESPACE)
              .withName(gangName(prefix, g))
              .endMetadata()
              .addToAdditionalProperties(
                  "spec", Map.of("schedulingPolicy", Map.of("gang", Map.of("minCount", members))))
              .build());
    }
    return groups;
  }

  /** Everything but the nodes, slices and pods, in the order to create it. */
  List<HasMetadata> prerequisites(int pods) {
    List<HasMetadata> all = new ArrayList<>(classes());
    all.addAll(templates());
    all.addAll(sharedClaims(pods));
    all.addAll(adversaryClaims());
    all.addAll(podGroups(pods, ""));
    return all;
  }
}
