package io.kdra.it.sched;

import io.fabric8.kubernetes.api.model.Container;
import io.fabric8.kubernetes.api.model.ContainerBuilder;
import io.fabric8.kubernetes.api.model.ContainerPort;
import io.fabric8.kubernetes.api.model.ContainerPortBuilder;
import io.fabric8.kubernetes.api.model.LabelSelector;
import io.fabric8.kubernetes.api.model.LabelSelectorBuilder;
import io.fabric8.kubernetes.api.model.Namespace;
import io.fabric8.kubernetes.api.model.NamespaceBuilder;
import io.fabric8.kubernetes.api.model.Node;
import io.fabric8.kubernetes.api.model.NodeBuilder;
import io.fabric8.kubernetes.api.model.NodeSelectorRequirement;
import io.fabric8.kubernetes.api.model.NodeSelectorRequirementBuilder;
import io.fabric8.kubernetes.api.model.NodeSelectorTerm;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.PodAffinityTerm;
import io.fabric8.kubernetes.api.model.PodAffinityTermBuilder;
import io.fabric8.kubernetes.api.model.PodBuilder;
import io.fabric8.kubernetes.api.model.Quantity;
import io.fabric8.kubernetes.api.model.Taint;
import io.fabric8.kubernetes.api.model.TaintBuilder;
import io.fabric8.kubernetes.api.model.Toleration;
import io.fabric8.kubernetes.api.model.TolerationBuilder;
import io.fabric8.kubernetes.api.model.TopologySpreadConstraint;
import io.fabric8.kubernetes.api.model.TopologySpreadConstraintBuilder;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;

/**
 * Draws scheduling scenarios from a seed: a few nodes (zones, labels, taints, cordons, allocatable
 * CPU, memory and pod count), pods already on them (requests, host ports, labels, required
 * anti-affinity, some terminal or being deleted) and a pod to place with any mix of node selector,
 * required node affinity (matchExpressions and matchFields), tolerations, host ports, CPU and
 * memory requests over containers, init containers, sidecars and overhead, required pod affinity
 * and anti-affinity (namespaces, namespace selectors) and topology spread constraints (maxSkew,
 * minDomains, matchLabelKeys, nodeAffinityPolicy, nodeTaintsPolicy, both whenUnsatisfiable). The
 * value sets are small on purpose, so that the rules collide often. From a second stream of the
 * same seed (so that the draws above stay as they were): nodes that are not Ready, most with the
 * node lifecycle controller's {@code not-ready} or {@code unreachable} taint, some not yet
 * (kube-scheduler has no readiness filter, only those taints), pods that tolerate the {@code
 * not-ready} taint, and pods with {@code spec.nodeName} set. From a third stream, in about a third
 * of the scenarios: volumes ({@link SchedulingVolumes}), from a fourth their storage requests,
 * CSIDriver and CSIStorageCapacities, and from a fifth existing PersistentVolumes for the claims
 * that wait for their first consumer. Same seed, same scenarios.
 */
public final class SchedulingScenarioGenerator {

  static final String HOSTNAME = "kubernetes.io/hostname";
  static final String ZONE = "topology.kubernetes.io/zone";
  static final String UNSCHEDULABLE_TAINT = "node.kubernetes.io/unschedulable";

  private static final List<String> NAMESPACES = List.of("default", "team-a", "team-b");
  private static final List<String> ZONES = List.of("z1", "z2", "z3");
  private static final List<String> APPS = List.of("web", "db", "cache");
  private static final List<String> TIERS = List.of("fe", "be");
  private static final List<String> HASHES = List.of("h1", "h2");
  private static final List<String> CPUS = List.of("1", "2", "3500m", "4", "8");
  private static final List<String> MEMORIES = List.of("2Gi", "4Gi", "6000Mi", "8Gi", "16Gi");
  private static final List<String> POD_COUNTS = List.of("2", "3", "4", "110");
  private static final List<String> CPU_REQUESTS =
      List.of("100m", "250m", "0.5", "1", "1500m", "1.25");
  private static final List<String> MEMORY_REQUESTS =
      List.of("128Mi", "256Mi", "500M", "1Gi", "1G", "1.5Gi", "3Gi");

  private static final List<Taint> TAINTS =
      List.of(
          taint("dedicated", "gpu", "NoSchedule"),
          taint("special", null, "NoExecute"),
          taint("spot", "true", "PreferNoSchedule"),
          taint("maintenance", "yes", "NoSchedule"));

  private final Random random;
  private final Random extra;
  private final Random volumes;
  private final Random storage;
  private final Random existing;
  private final long seed;
  private int index;

  public SchedulingScenarioGenerator(long seed) {
    this.seed = seed;
    this.random = new Random(seed);
    this.extra = new Random(seed * 31 + 17);
    this.volumes = new Random(seed * 53 + 29);
    this.storage = new Random(seed * 71 + 43);
    this.existing = new Random(seed * 97 + 61);
  }

  /** The next scenario. */
  public SchedulingScenario next() {
    String name = "seed" + seed + "-" + index++;
    List<Namespace> namespaces = namespaces();
    List<Node> nodes = new ArrayList<>();
    int nodeCount = 2 + random.nextInt(5);
    for (int i = 0; i < nodeCount; i++) {
      nodes.add(node("node-" + i));
    }
    List<Pod> pods = new ArrayList<>();
    int podCount = random.nextInt(13);
    for (int i = 0; i < podCount; i++) {
      pods.add(placedPod("placed-" + i, pick(nodes).getMetadata().getName()));
    }
    Pod pod = newPod();
    nodes.forEach(this::maybeNotReady);
    if (extra.nextDouble() < 0.08) {
      pod.getSpec()
          .setTolerations(
              pod.getSpec().getTolerations() == null
                  ? new ArrayList<>()
                  : new ArrayList<>(pod.getSpec().getTolerations()));
      pod.getSpec()
          .getTolerations()
          .add(
              new TolerationBuilder()
                  .withKey(NOT_READY_TAINT)
                  .withOperator("Exists")
                  .withEffect("NoSchedule")
                  .build());
    }
    if (extra.nextDouble() < 0.1) {
      pod.getSpec()
          .setNodeName(
              extra.nextDouble() < 0.2
                  ? "node-gone"
                  : nodes.get(extra.nextInt(nodes.size())).getMetadata().getName());
    }
    SchedulingVolumes drawn =
        volumes.nextDouble() < 0.35
            ? SchedulingVolumes.draw(volumes, storage, existing, nodes, pods, pod)
            : SchedulingVolumes.NONE;
    return new SchedulingScenario(name, nodes, pods, namespaces, pod, drawn);
  }

  static final String NOT_READY_TAINT = "node.kubernetes.io/not-ready";
  static final String UNREACHABLE_TAINT = "node.kubernetes.io/unreachable";

  /**
   * One node in ten not Ready: its condition False (not-ready) or Unknown (unreachable), and in
   * three cases of four the node lifecycle controller's matching {@code NoSchedule} taint.
   */
  private void maybeNotReady(Node node) {
    if (extra.nextDouble() >= 0.1) {
      return;
    }
    boolean unknown = extra.nextBoolean();
    node.getStatus().getConditions().get(0).setStatus(unknown ? "Unknown" : "False");
    if (extra.nextDouble() < 0.75) {
      List<Taint> taints =
          node.getSpec().getTaints() == null
              ? new ArrayList<>()
              : new ArrayList<>(node.getSpec().getTaints());
      taints.add(taint(unknown ? UNREACHABLE_TAINT : NOT_READY_TAINT, null, "NoSchedule"));
      node.getSpec().setTaints(taints);
    }
  }

  private List<Namespace> namespaces() {
    List<Namespace> l = new ArrayList<>();
    for (String ns : NAMESPACES) {
      Map<String, String> labels = new LinkedHashMap<>();
      labels.put("kubernetes.io/metadata.name", ns);
      if (!ns.equals("default")) {
        labels.put("team", ns.substring(5));
      }
      if (chance(0.5)) {
        labels.put("env", chance(0.5) ? "prod" : "dev");
      }
      l.add(
          new NamespaceBuilder()
              .withNewMetadata()
              .withName(ns)
              .withLabels(labels)
              .endMetadata()
              .build());
    }
    return l;
  }

  private Node node(String name) {
    Map<String, String> labels = new LinkedHashMap<>();
    labels.put(HOSTNAME, name);
    if (chance(0.85)) {
      labels.put(ZONE, pick(ZONES));
    }
    if (chance(0.5)) {
      labels.put("disk", chance(0.5) ? "ssd" : "hdd");
    }
    if (chance(0.3)) {
      labels.put("gpu", "true");
    }
    if (chance(0.3)) {
      labels.put("cores", String.valueOf(2 + random.nextInt(30)));
    }
    List<Taint> taints = new ArrayList<>();
    if (chance(0.3)) {
      taints.add(pick(TAINTS));
      if (chance(0.3)) {
        Taint second = pick(TAINTS);
        if (!taints.contains(second)) {
          taints.add(second);
        }
      }
    }
    boolean cordoned = chance(0.12);
    if (cordoned && chance(0.7)) {
      // the node lifecycle controller's taint for a cordoned node
      taints.add(taint(UNSCHEDULABLE_TAINT, null, "NoSchedule"));
    }
    return new NodeBuilder()
        .withNewMetadata()
        .withName(name)
        .withUid("uid-" + name)
        .withLabels(labels)
        .endMetadata()
        .withNewSpec()
        .withUnschedulable(cordoned ? Boolean.TRUE : null)
        .withTaints(taints.isEmpty() ? null : taints)
        .endSpec()
        .withNewStatus()
        .addToAllocatable("cpu", new Quantity(pick(CPUS)))
        .addToAllocatable("memory", new Quantity(pick(MEMORIES)))
        .addToAllocatable("pods", new Quantity(pick(POD_COUNTS)))
        .addNewCondition()
        .withType("Ready")
        .withStatus("True")
        .endCondition()
        .endStatus()
        .build();
  }

  private Map<String, String> podLabels() {
    Map<String, String> labels = new LinkedHashMap<>();
    if (chance(0.85)) {
      labels.put("app", pick(APPS));
    }
    if (chance(0.5)) {
      labels.put("tier", pick(TIERS));
    }
    if (chance(0.5)) {
      labels.put("pod-template-hash", pick(HASHES));
    }
    return labels;
  }

  private Pod placedPod(String name, String nodeName) {
    String ns = pick(NAMESPACES);
    PodBuilder b =
        new PodBuilder()
            .withNewMetadata()
            .withName(name)
            .withNamespace(ns)
            .withUid("uid-" + name)
            .withLabels(podLabels())
            .endMetadata()
            .withNewSpec()
            .withNodeName(nodeName)
            .withContainers(container("c", hostPorts(0.25)))
            .endSpec();
    if (chance(0.3)) {
      b.editSpec()
          .withNewAffinity()
          .withNewPodAntiAffinity()
          .withRequiredDuringSchedulingIgnoredDuringExecution(affinityTerm(ns))
          .endPodAntiAffinity()
          .endAffinity()
          .endSpec();
    }
    if (chance(0.08)) {
      b.withNewStatus().withPhase(chance(0.5) ? "Succeeded" : "Failed").endStatus();
    } else {
      b.withNewStatus().withPhase("Running").endStatus();
    }
    if (chance(0.08)) {
      b.editMetadata().withDeletionTimestamp("2026-01-01T00:00:00Z").endMetadata();
    }
    return b.build();
  }

  private Pod newPod() {
    String ns = pick(NAMESPACES);
    PodBuilder b =
        new PodBuilder()
            .withNewMetadata()
            .withName("new-pod")
            .withNamespace(ns)
            .withUid("uid-new-pod")
            .withLabels(podLabels())
            .endMetadata()
            .withNewSpec()
            .withSchedulerName("default-scheduler")
            .endSpec();
    List<Container> containers = new ArrayList<>();
    containers.add(container("main", hostPorts(0.3)));
    if (chance(0.3)) {
      containers.add(container("helper", List.of()));
    }
    b.editSpec().withContainers(containers).endSpec();
    List<Container> init = new ArrayList<>();
    int initCount = chance(0.35) ? 1 + random.nextInt(3) : 0;
    for (int i = 0; i < initCount; i++) {
      Container c = container("init-" + i, chance(0.3) ? hostPorts(1) : List.of());
      if (chance(0.5)) {
        c.setRestartPolicy("Always"); // a sidecar
      }
      init.add(c);
    }
    if (!init.isEmpty()) {
      b.editSpec().withInitContainers(init).endSpec();
    }
    if (chance(0.15)) {
      // pod-level requests (PodLevelResources, on by default): at least the containers' sum
      b.editSpec()
          .withNewResources()
          .addToRequests("cpu", new Quantity(pick(List.of("2", "3", "5"))))
          .addToRequests("memory", new Quantity(pick(List.of("6Gi", "10Gi"))))
          .endResources()
          .endSpec();
    }
    if (chance(0.15)) {
      b.editSpec()
          .addToOverhead("cpu", new Quantity(pick(List.of("100m", "250m"))))
          .addToOverhead("memory", new Quantity(pick(List.of("64Mi", "512Mi"))))
          .endSpec();
    }
    if (chance(0.25)) {
      Map<String, String> selector = new LinkedHashMap<>();
      if (chance(0.5)) {
        selector.put("disk", chance(0.5) ? "ssd" : "hdd");
      }
      if (chance(0.4)) {
        selector.put(ZONE, pick(ZONES));
      }
      if (chance(0.2)) {
        selector.put("gpu", "true");
      }
      b.editSpec().withNodeSelector(selector).endSpec();
    }
    if (chance(0.3)) {
      List<NodeSelectorTerm> terms = new ArrayList<>();
      int n = 1 + random.nextInt(2);
      for (int i = 0; i < n; i++) {
        terms.add(nodeSelectorTerm());
      }
      b.editSpec()
          .withNewAffinity()
          .withNewNodeAffinity()
          .withNewRequiredDuringSchedulingIgnoredDuringExecution()
          .withNodeSelectorTerms(terms)
          .endRequiredDuringSchedulingIgnoredDuringExecution()
          .endNodeAffinity()
          .endAffinity()
          .endSpec();
    }
    if (chance(0.4)) {
      List<Toleration> tolerations = new ArrayList<>();
      int n = 1 + random.nextInt(2);
      for (int i = 0; i < n; i++) {
        tolerations.add(toleration());
      }
      b.editSpec().withTolerations(tolerations).endSpec();
    }
    Pod pod = b.build();
    if (chance(0.3)) {
      podAffinity(pod, ns, false);
    }
    if (chance(0.3)) {
      podAffinity(pod, ns, true);
    }
    if (chance(0.4)) {
      List<TopologySpreadConstraint> spread = new ArrayList<>();
      int n = 1 + random.nextInt(2);
      for (int i = 0; i < n; i++) {
        spread.add(spreadConstraint());
      }
      pod.getSpec().setTopologySpreadConstraints(spread);
    }
    return pod;
  }

  private void podAffinity(Pod pod, String ns, boolean anti) {
    if (pod.getSpec().getAffinity() == null) {
      pod.getSpec().setAffinity(new io.fabric8.kubernetes.api.model.Affinity());
    }
    List<PodAffinityTerm> terms = new ArrayList<>();
    int n = 1 + random.nextInt(2);
    for (int i = 0; i < n; i++) {
      terms.add(affinityTerm(ns));
    }
    if (anti) {
      pod.getSpec()
          .getAffinity()
          .setPodAntiAffinity(
              new io.fabric8.kubernetes.api.model.PodAntiAffinityBuilder()
                  .withRequiredDuringSchedulingIgnoredDuringExecution(terms)
                  .build());
    } else {
      pod.getSpec()
          .getAffinity()
          .setPodAffinity(
              new io.fabric8.kubernetes.api.model.PodAffinityBuilder()
                  .withRequiredDuringSchedulingIgnoredDuringExecution(terms)
                  .build());
    }
  }

  private PodAffinityTerm affinityTerm(String ownNamespace) {
    PodAffinityTermBuilder b =
        new PodAffinityTermBuilder()
            .withTopologyKey(chance(0.6) ? HOSTNAME : chance(0.8) ? ZONE : "disk")
            .withLabelSelector(labelSelector());
    double r = random.nextDouble();
    if (r < 0.2) {
      b.withNamespaces(pick(NAMESPACES));
    } else if (r < 0.3) {
      b.withNamespaces(ownNamespace, pick(NAMESPACES));
    } else if (r < 0.45) {
      b.withNamespaceSelector(
          chance(0.3)
              ? new LabelSelector()
              : new LabelSelectorBuilder()
                  .addToMatchLabels(chance(0.5) ? "team" : "env", chance(0.5) ? "a" : "prod")
                  .build());
    }
    return b.build();
  }

  private LabelSelector labelSelector() {
    LabelSelectorBuilder b = new LabelSelectorBuilder();
    double r = random.nextDouble();
    if (r < 0.6) {
      b.addToMatchLabels("app", pick(APPS));
    } else if (r < 0.75) {
      b.addNewMatchExpression()
          .withKey("app")
          .withOperator(chance(0.5) ? "In" : "NotIn")
          .withValues(pick(APPS), pick(APPS))
          .endMatchExpression();
    } else if (r < 0.9) {
      b.addNewMatchExpression()
          .withKey("tier")
          .withOperator(chance(0.5) ? "Exists" : "DoesNotExist")
          .endMatchExpression();
    } // else: empty, matches every pod
    if (chance(0.2)) {
      b.addToMatchLabels("tier", pick(TIERS));
    }
    return b.build();
  }

  private TopologySpreadConstraint spreadConstraint() {
    TopologySpreadConstraintBuilder b =
        new TopologySpreadConstraintBuilder()
            .withMaxSkew(1 + random.nextInt(2))
            .withTopologyKey(chance(0.5) ? HOSTNAME : ZONE)
            .withWhenUnsatisfiable(chance(0.8) ? "DoNotSchedule" : "ScheduleAnyway")
            .withLabelSelector(labelSelector());
    if (chance(0.25)) {
      b.withMinDomains(2 + random.nextInt(3));
    }
    if (chance(0.25)) {
      b.withMatchLabelKeys(chance(0.5) ? "pod-template-hash" : "tier");
    }
    if (chance(0.25)) {
      b.withNodeAffinityPolicy(chance(0.5) ? "Honor" : "Ignore");
    }
    if (chance(0.25)) {
      b.withNodeTaintsPolicy(chance(0.5) ? "Honor" : "Ignore");
    }
    TopologySpreadConstraint c = b.build();
    if (c.getMinDomains() != null) {
      c.setWhenUnsatisfiable("DoNotSchedule"); // API validation: minDomains needs DoNotSchedule
    }
    return c;
  }

  private NodeSelectorTerm nodeSelectorTerm() {
    List<NodeSelectorRequirement> exprs = new ArrayList<>();
    int n = 1 + random.nextInt(2);
    for (int i = 0; i < n; i++) {
      double r = random.nextDouble();
      NodeSelectorRequirementBuilder e = new NodeSelectorRequirementBuilder();
      if (r < 0.3) {
        e.withKey(ZONE).withOperator(chance(0.6) ? "In" : "NotIn").withValues(pick(ZONES));
      } else if (r < 0.5) {
        e.withKey("disk").withOperator(chance(0.5) ? "Exists" : "DoesNotExist");
      } else if (r < 0.7) {
        e.withKey("cores")
            .withOperator(chance(0.5) ? "Gt" : "Lt")
            .withValues(String.valueOf(2 + random.nextInt(30)));
      } else {
        e.withKey("gpu").withOperator("In").withValues("true");
      }
      exprs.add(e.build());
    }
    NodeSelectorTerm t = new NodeSelectorTerm();
    t.setMatchExpressions(exprs);
    if (chance(0.15)) {
      t.setMatchFields(
          List.of(
              new NodeSelectorRequirementBuilder()
                  .withKey("metadata.name")
                  .withOperator(chance(0.7) ? "In" : "NotIn")
                  .withValues("node-" + random.nextInt(4))
                  .build()));
    }
    return t;
  }

  private Toleration toleration() {
    double r = random.nextDouble();
    if (r < 0.1) {
      return new TolerationBuilder().withOperator("Exists").build();
    }
    if (r < 0.25) {
      return new TolerationBuilder()
          .withKey(UNSCHEDULABLE_TAINT)
          .withOperator("Exists")
          .withEffect("NoSchedule")
          .build();
    }
    Taint t = pick(TAINTS);
    TolerationBuilder b = new TolerationBuilder().withKey(t.getKey());
    if (chance(0.5) || t.getValue() == null) {
      b.withOperator("Exists");
    } else {
      b.withOperator("Equal").withValue(chance(0.8) ? t.getValue() : "other");
    }
    if (chance(0.5)) {
      b.withEffect(chance(0.8) ? t.getEffect() : "NoExecute");
    }
    return b.build();
  }

  private Container container(String name, List<ContainerPort> ports) {
    ContainerBuilder b = new ContainerBuilder().withName(name).withImage("busybox");
    if (chance(0.85)) {
      b.withNewResources()
          .addToRequests("cpu", new Quantity(pick(CPU_REQUESTS)))
          .addToRequests("memory", new Quantity(pick(MEMORY_REQUESTS)))
          .endResources();
    }
    if (!ports.isEmpty()) {
      b.withPorts(ports);
    }
    return b.build();
  }

  private List<ContainerPort> hostPorts(double p) {
    if (!chance(p)) {
      return List.of();
    }
    ContainerPortBuilder b =
        new ContainerPortBuilder()
            .withContainerPort(8080)
            .withHostPort(pick(List.of(80, 8080, 53)));
    if (chance(0.3)) {
      b.withProtocol("UDP");
    }
    if (chance(0.25)) {
      b.withHostIP(chance(0.5) ? "10.0.0.1" : "0.0.0.0");
    }
    return List.of(b.build());
  }

  private static Taint taint(String key, String value, String effect) {
    return new TaintBuilder().withKey(key).withValue(value).withEffect(effect).build();
  }

  private boolean chance(double p) {
    return random.nextDouble() < p;
  }

  private <T> T pick(List<T> l) {
    return l.get(random.nextInt(l.size()));
  }
}
