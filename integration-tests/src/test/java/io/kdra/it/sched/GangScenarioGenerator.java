package io.kdra.it.sched;

import io.fabric8.kubernetes.api.model.ContainerBuilder;
import io.fabric8.kubernetes.api.model.GenericKubernetesResource;
import io.fabric8.kubernetes.api.model.Node;
import io.fabric8.kubernetes.api.model.NodeBuilder;
import io.fabric8.kubernetes.api.model.ObjectMetaBuilder;
import io.fabric8.kubernetes.api.model.OwnerReferenceBuilder;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.PodBuilder;
import io.fabric8.kubernetes.api.model.PodResourceClaim;
import io.fabric8.kubernetes.api.model.PodResourceClaimBuilder;
import io.fabric8.kubernetes.api.model.PodResourceClaimStatus;
import io.fabric8.kubernetes.api.model.Quantity;
import io.fabric8.kubernetes.api.model.resource.v1.AllocationResult;
import io.fabric8.kubernetes.api.model.resource.v1.Device;
import io.fabric8.kubernetes.api.model.resource.v1.DeviceAllocationResult;
import io.fabric8.kubernetes.api.model.resource.v1.DeviceClaim;
import io.fabric8.kubernetes.api.model.resource.v1.DeviceClass;
import io.fabric8.kubernetes.api.model.resource.v1.DeviceRequest;
import io.fabric8.kubernetes.api.model.resource.v1.DeviceRequestAllocationResult;
import io.fabric8.kubernetes.api.model.resource.v1.ExactDeviceRequest;
import io.fabric8.kubernetes.api.model.resource.v1.ResourceClaim;
import io.fabric8.kubernetes.api.model.resource.v1.ResourceClaimConsumerReference;
import io.fabric8.kubernetes.api.model.resource.v1.ResourceClaimSpec;
import io.fabric8.kubernetes.api.model.resource.v1.ResourceClaimStatus;
import io.fabric8.kubernetes.api.model.resource.v1.ResourceClaimTemplate;
import io.fabric8.kubernetes.api.model.resource.v1.ResourceClaimTemplateSpec;
import io.fabric8.kubernetes.api.model.resource.v1.ResourceSlice;
import io.fabric8.kubernetes.client.utils.Serialization;
import io.kdra.core.testing.AllocFixtures;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;

/**
 * Draws gang scenarios from a seed: two to five nodes (CPU, a rack label) with zero to three GPUs
 * each ({@code model} a100 or l4), some pods already bound (CPU, some holding a GPU through an
 * allocated claim), and one PodGroup {@code train} with a gang policy: one to five pending members
 * (CPU, zero to two claims from the templates {@code one-gpu}, {@code two-gpu} and {@code
 * one-a100}, some pinned to a node by {@code nodeSelector}), sometimes members already bound,
 * sometimes a claim of the group's own that most members use (one GPU, allocated once, so they go
 * where it is), and {@code minCount} from 1 to one more than the members (a gang that waits for
 * members). Claims from templates exist as kube-controller-manager makes them (owned by the pod or
 * the group, named in their status). Sometimes a topology constraint on {@code rack}: both sides
 * ignore it with {@code TopologyAwareWorkloadScheduling} off. The value sets are small so that
 * members compete. Same seed, same scenarios.
 */
public final class GangScenarioGenerator {

  static final String HOSTNAME = "kubernetes.io/hostname";
  static final String SCHEDULER = "default-scheduler";
  static final String GROUP = "train";
  static final String SHARED = "shared";

  private static final List<String> NODE_CPUS = List.of("2", "4", "8");
  private static final List<String> CPU_REQUESTS = List.of("500m", "1", "2", "3");
  private static final List<String> TEMPLATES = List.of("one-gpu", "two-gpu", "one-a100");

  private final Random random;
  private final long seed;
  private int index;

  public GangScenarioGenerator(long seed) {
    this.seed = seed;
    this.random = new Random(seed);
  }

  public GangScenario next() {
    String name = "seed-" + seed + "-" + index++;
    List<Node> nodes = new ArrayList<>();
    List<ResourceSlice> slices = new ArrayList<>();
    Map<String, Integer> gpus = new LinkedHashMap<>();
    int nodeCount = 2 + random.nextInt(4);
    for (int i = 0; i < nodeCount; i++) {
      String n = "node-" + i;
      nodes.add(node(n, "r" + (1 + random.nextInt(2)), pick(NODE_CPUS)));
      int count = random.nextInt(4);
      gpus.put(n, count);
      List<Device> devices = new ArrayList<>();
      for (int d = 0; d < count; d++) {
        devices.add(
            AllocFixtures.device("gpu-" + d)
                .withString("model", random.nextInt(3) == 0 ? "a100" : "l4")
                .build());
      }
      slices.add(AllocFixtures.slice(n + "-gpus", n, devices.toArray(Device[]::new)).build());
    }
    List<DeviceClass> classes =
        List.of(
            AllocFixtures.deviceClass("gpu", "device.driver == \"gpu.example.com\""),
            AllocFixtures.deviceClass(
                "a100",
                "device.driver == \"gpu.example.com\" && "
                    + "device.attributes[\"gpu.example.com\"].model == \"a100\""));
    List<ResourceClaimTemplate> templates =
        List.of(
            template("one-gpu", "gpu", 1),
            template("two-gpu", "gpu", 2),
            template("one-a100", "a100", 1));
    List<ResourceClaim> claims = new ArrayList<>();
    List<Pod> pods = new ArrayList<>();

    // pods already bound, some holding a GPU of their node
    int others = random.nextInt(4);
    java.util.Set<String> taken = new java.util.HashSet<>(); // devices the bound pods hold
    for (int i = 0; i < others; i++) {
      String n = nodes.get(random.nextInt(nodes.size())).getMetadata().getName();
      Pod p = pod("other-" + i, pick(CPU_REQUESTS));
      p.getSpec().setNodeName(n);
      p.getStatus().setPhase("Running");
      int g = gpus.get(n);
      int device = g > 0 ? random.nextInt(g) : 0;
      if (g > 0 && random.nextBoolean() && taken.add(n + "/gpu-" + device)) {
        String claim = "other-" + i + "-gpu";
        ResourceClaim c = claimFrom(claim, templates.get(0));
        allocate(c, n, "gpu-" + device, p);
        claims.add(c);
        p.getSpec()
            .setResourceClaims(
                List.of(
                    new PodResourceClaimBuilder()
                        .withName("gpu")
                        .withResourceClaimName(claim)
                        .build()));
        p.getSpec()
            .getContainers()
            .get(0)
            .getResources()
            .setClaims(
                List.of(
                    new io.fabric8.kubernetes.api.model.ResourceClaimBuilder()
                        .withName("gpu")
                        .build()));
      }
      pods.add(p);
    }

    // the group: members already bound (CPU only), pending members with claims
    int pending = 1 + random.nextInt(5);
    int bound = random.nextInt(4) == 0 ? 1 + random.nextInt(2) : 0;
    // one in eight waits for a member that never comes
    int minCount =
        random.nextInt(8) == 0 ? pending + bound + 1 : 1 + random.nextInt(pending + bound);
    boolean shared = random.nextInt(3) == 0;
    String sharedClaim = GROUP + "-" + SHARED + "-g7x2k";
    if (shared) {
      ResourceClaim c = claimFrom(sharedClaim, templates.get(0));
      c.getMetadata()
          .setOwnerReferences(
              List.of(
                  new OwnerReferenceBuilder()
                      .withApiVersion("scheduling.k8s.io/v1beta1")
                      .withKind("PodGroup")
                      .withName(GROUP)
                      .withUid("uid-" + GROUP)
                      .withController(true)
                      .withBlockOwnerDeletion(true)
                      .build()));
      c.getMetadata().getAnnotations().put("resource.kubernetes.io/pod-claim-name", SHARED);
      claims.add(c);
    }
    for (int i = 0; i < bound; i++) {
      Pod p = member("b" + i);
      p.getSpec().setNodeName(nodes.get(random.nextInt(nodes.size())).getMetadata().getName());
      p.getStatus().setPhase("Running");
      pods.add(p);
    }
    Pod trigger = null;
    for (int i = 0; i < pending; i++) {
      String podName = "w" + i;
      Pod p = member(podName);
      List<PodResourceClaim> entries = new ArrayList<>();
      List<PodResourceClaimStatus> statuses = new ArrayList<>();
      if (shared && random.nextInt(4) != 0) {
        entries.add(
            new PodResourceClaimBuilder()
                .withName(SHARED)
                .withResourceClaimTemplateName("one-gpu")
                .build());
        statuses.add(new PodResourceClaimStatus(SHARED, sharedClaim));
      }
      int own = random.nextInt(3);
      for (int k = 0; k < own; k++) {
        ResourceClaimTemplate t = pick(templates);
        String entry = "c" + k;
        String claim =
            podName + "-" + entry + "-" + Integer.toString(10000 + random.nextInt(90000), 36);
        ResourceClaim c = claimFrom(claim, t);
        c.getMetadata()
            .setOwnerReferences(
                List.of(
                    new OwnerReferenceBuilder()
                        .withApiVersion("v1")
                        .withKind("Pod")
                        .withName(podName)
                        .withUid(p.getMetadata().getUid())
                        .withController(true)
                        .withBlockOwnerDeletion(true)
                        .build()));
        c.getMetadata().getAnnotations().put("resource.kubernetes.io/pod-claim-name", entry);
        claims.add(c);
        entries.add(
            new PodResourceClaimBuilder()
                .withName(entry)
                .withResourceClaimTemplateName(t.getMetadata().getName())
                .build());
        statuses.add(new PodResourceClaimStatus(entry, claim));
      }
      p.getSpec().setResourceClaims(entries);
      p.getStatus().setResourceClaimStatuses(statuses);
      p.getSpec()
          .getContainers()
          .get(0)
          .getResources()
          .setClaims(
              entries.stream()
                  .map(
                      e ->
                          new io.fabric8.kubernetes.api.model.ResourceClaimBuilder()
                              .withName(e.getName())
                              .build())
                  .toList());
      if (random.nextInt(6) == 0) {
        p.getSpec()
            .setNodeSelector(
                Map.of(HOSTNAME, nodes.get(random.nextInt(nodes.size())).getMetadata().getName()));
      }
      if (trigger == null) {
        trigger = p;
      }
      pods.add(p);
    }
    GenericKubernetesResource group =
        podGroup(minCount, shared ? sharedClaim : null, random.nextInt(5) == 0);
    return new GangScenario(name, nodes, slices, classes, templates, claims, pods, group, trigger);
  }

  private <T> T pick(List<T> values) {
    return values.get(random.nextInt(values.size()));
  }

  private static Node node(String name, String rack, String cpu) {
    Map<String, Quantity> allocatable =
        Map.of(
            "cpu", new Quantity(cpu), "memory", new Quantity("16Gi"), "pods", new Quantity("110"));
    return new NodeBuilder()
        .withNewMetadata()
        .withName(name)
        .addToLabels(HOSTNAME, name)
        .addToLabels("rack", rack)
        .endMetadata()
        .withNewStatus()
        .withAllocatable(allocatable)
        .withCapacity(allocatable)
        .addNewCondition()
        .withType("Ready")
        .withStatus("True")
        .endCondition()
        .endStatus()
        .build();
  }

  private Pod pod(String name, String cpu) {
    return new PodBuilder()
        .withNewMetadata()
        .withName(name)
        .withNamespace(GangScenario.NAMESPACE)
        .withUid("uid-" + name)
        .endMetadata()
        .withNewSpec()
        .withSchedulerName(SCHEDULER)
        .withContainers(
            new ContainerBuilder()
                .withName("c")
                .withImage("registry.example/worker:1")
                .withNewResources()
                .addToRequests("cpu", new Quantity(cpu))
                .endResources()
                .build())
        .endSpec()
        .withNewStatus()
        .withPhase("Pending")
        .endStatus()
        .build();
  }

  private Pod member(String name) {
    Pod p = pod(name, pick(CPU_REQUESTS));
    p.getSpec().setAdditionalProperty("schedulingGroup", Map.of("podGroupName", GROUP));
    return p;
  }

  private static ResourceClaimTemplate template(String name, String className, long count) {
    ResourceClaimTemplate t = new ResourceClaimTemplate();
    t.setMetadata(
        new ObjectMetaBuilder().withName(name).withNamespace(GangScenario.NAMESPACE).build());
    ResourceClaimTemplateSpec spec = new ResourceClaimTemplateSpec();
    spec.setSpec(claimSpec(className, count));
    t.setSpec(spec);
    return t;
  }

  private static ResourceClaimSpec claimSpec(String className, long count) {
    ExactDeviceRequest exactly = new ExactDeviceRequest();
    exactly.setDeviceClassName(className);
    exactly.setAllocationMode("ExactCount");
    exactly.setCount(count);
    DeviceRequest r = new DeviceRequest();
    r.setName("gpu");
    r.setExactly(exactly);
    DeviceClaim devices = new DeviceClaim();
    devices.setRequests(List.of(r));
    ResourceClaimSpec spec = new ResourceClaimSpec();
    spec.setDevices(devices);
    return spec;
  }

  /** A claim made from {@code t}, as the resourceclaim controller makes one (owner set after). */
  private static ResourceClaim claimFrom(String name, ResourceClaimTemplate t) {
    ResourceClaim c = new ResourceClaim();
    c.setMetadata(
        new ObjectMetaBuilder()
            .withName(name)
            .withNamespace(GangScenario.NAMESPACE)
            .withUid("uid-" + name)
            .withAnnotations(new LinkedHashMap<>())
            .build());
    c.setSpec(Serialization.clone(t.getSpec().getSpec()));
    return c;
  }

  /**
   * Allocates {@code c}'s one request to {@code device} of {@code node}, reserved for {@code p}.
   */
  private static void allocate(ResourceClaim c, String node, String device, Pod p) {
    DeviceRequestAllocationResult r = new DeviceRequestAllocationResult();
    r.setRequest("gpu");
    r.setDriver(AllocFixtures.DRIVER);
    r.setPool(node);
    r.setDevice(device);
    DeviceAllocationResult devices = new DeviceAllocationResult();
    devices.setResults(List.of(r));
    AllocationResult a = new AllocationResult();
    a.setDevices(devices);
    a.setNodeSelector(
        new io.fabric8.kubernetes.api.model.NodeSelectorBuilder()
            .addNewNodeSelectorTerm()
            .addNewMatchField()
            .withKey("metadata.name")
            .withOperator("In")
            .withValues(node)
            .endMatchField()
            .endNodeSelectorTerm()
            .build());
    ResourceClaimConsumerReference ref = new ResourceClaimConsumerReference();
    ref.setResource("pods");
    ref.setName(p.getMetadata().getName());
    ref.setUid(p.getMetadata().getUid());
    ResourceClaimStatus status = new ResourceClaimStatus();
    status.setAllocation(a);
    status.setReservedFor(List.of(ref));
    c.setStatus(status);
  }

  /** PodGroup {@link #GROUP}: a gang of {@code minCount}, with the shared claim if not null. */
  private static GenericKubernetesResource podGroup(
      int minCount, String sharedClaim, boolean topology) {
    Map<String, Object> spec = new LinkedHashMap<>();
    spec.put("schedulingPolicy", Map.of("gang", Map.of("minCount", minCount)));
    if (topology) {
      spec.put("schedulingConstraints", Map.of("topology", List.of(Map.of("key", "rack"))));
    }
    Map<String, Object> status = new LinkedHashMap<>();
    if (sharedClaim != null) {
      spec.put(
          "resourceClaims",
          List.of(Map.of("name", SHARED, "resourceClaimTemplateName", "one-gpu")));
      status.put(
          "resourceClaimStatuses",
          List.of(Map.of("name", SHARED, "resourceClaimName", sharedClaim)));
    }
    GenericKubernetesResource g = new GenericKubernetesResource();
    g.setApiVersion("scheduling.k8s.io/v1beta1");
    g.setKind("PodGroup");
    g.setMetadata(
        new ObjectMetaBuilder()
            .withName(GROUP)
            .withNamespace(GangScenario.NAMESPACE)
            .withUid("uid-" + GROUP)
            .build());
    g.setAdditionalProperty("spec", spec);
    g.setAdditionalProperty("status", status);
    return g;
  }
}
