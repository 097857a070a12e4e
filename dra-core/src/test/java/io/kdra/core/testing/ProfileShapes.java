package io.kdra.core.testing;

import static io.kdra.core.testing.DeviceParts.attr;
import static io.kdra.core.testing.DeviceParts.slice;
import static io.kdra.core.testing.Fixtures.intAttribute;
import static io.kdra.core.testing.Fixtures.versionAttribute;
import static io.kdra.core.testing.ScenarioGenerator.DEGRADED_KEY;
import static io.kdra.core.testing.ScenarioGenerator.FABRIC;
import static io.kdra.core.testing.ScenarioGenerator.GPU;
import static io.kdra.core.testing.ScenarioGenerator.TAINT_KEY;

import io.fabric8.kubernetes.api.model.AffinityBuilder;
import io.fabric8.kubernetes.api.model.Node;
import io.fabric8.kubernetes.api.model.NodeSelectorRequirementBuilder;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.PodResourceClaim;
import io.fabric8.kubernetes.api.model.PodSpec;
import io.fabric8.kubernetes.api.model.Quantity;
import io.fabric8.kubernetes.api.model.resource.v1.CapacityRequestPolicy;
import io.fabric8.kubernetes.api.model.resource.v1.CapacityRequestPolicyRange;
import io.fabric8.kubernetes.api.model.resource.v1.CapacityRequirements;
import io.fabric8.kubernetes.api.model.resource.v1.Device;
import io.fabric8.kubernetes.api.model.resource.v1.DeviceConstraint;
import io.fabric8.kubernetes.api.model.resource.v1.DeviceRequest;
import io.fabric8.kubernetes.api.model.resource.v1.DeviceSubRequest;
import io.fabric8.kubernetes.api.model.resource.v1.DeviceTaint;
import io.fabric8.kubernetes.api.model.resource.v1.DeviceToleration;
import io.fabric8.kubernetes.api.model.resource.v1.ExactDeviceRequest;
import io.fabric8.kubernetes.api.model.resource.v1.ResourceClaim;
import io.fabric8.kubernetes.api.model.resource.v1.ResourceClaimTemplate;
import io.fabric8.kubernetes.api.model.resource.v1.ResourceSlice;
import io.kdra.core.model.NewerFields;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.function.Consumer;

/**
 * What the extended and shared profiles add to a basic scenario, each from its own stream (so the
 * basic draws stay as they were): adminAccess, binding conditions, a pool with per-device node
 * selection, degraded taints and richer tolerations, pods with their own node constraints, and, in
 * the shared profile, pods that share claims. In the basic profile every method is a no-op that
 * draws nothing.
 */
final class ProfileShapes {

  private final DrawStreams streams;

  /** The extended stream; null in the basic profile. */
  private final Random x;

  /** The shared stream; null unless shared. */
  private final Random y;

  /** The alpha stream; null unless alpha. */
  private final Random z;

  /** The newer stream; null unless newer. */
  private final Random w;

  /** The cluster's nodes, filled by the cluster draw before any shape needs them. */
  private final List<Node> nodes;

  /** The extended profile's own slices, placed among the others after the basic shuffle. */
  private final List<ResourceSlice> extraSlices = new ArrayList<>();

  ProfileShapes(DrawStreams streams, List<Node> nodes) {
    this.streams = streams;
    this.x = streams.extended;
    this.y = streams.shared;
    this.z = streams.alpha;
    this.w = streams.newer;
    this.nodes = nodes;
  }

  // ---- devices -------------------------------------------------------------------------------

  /** Extended: at times binding conditions, at times a degraded taint beside any other. */
  void gpu(Device d) {
    if (streams.extendedOneIn(8)) {
      bindingConditions(d, GPU);
    }
    if (streams.extendedOneIn(8)) {
      DeviceTaint t = new DeviceTaint();
      t.setKey(DEGRADED_KEY);
      if (x.nextBoolean()) {
        t.setValue("high");
      }
      t.setEffect(x.nextBoolean() ? "NoExecute" : "NoSchedule");
      List<DeviceTaint> taints = new ArrayList<>(d.getTaints() == null ? List.of() : d.getTaints());
      taints.add(t);
      d.setTaints(taints);
    }
  }

  /** Extended: a fabric link has binding conditions one time in four. */
  void fabricLink(Device d) {
    if (streams.extendedOneIn(4)) {
      bindingConditions(d, FABRIC);
    }
  }

  /**
   * Extended, one time in two: network-attached links in a slice with {@code
   * perDeviceNodeSelection}, each link reachable from one node by name, from nodes by selector, or
   * from all nodes; some with binding conditions. Not offered to claims allocated before the run.
   */
  void perDevicePool() {
    if (!streams.extendedOneIn(2)) {
      return;
    }
    List<Device> devices = new ArrayList<>();
    int links = 2 + x.nextInt(3);
    for (int i = 0; i < links; i++) {
      Device d = new Device();
      d.setName("link-" + i);
      d.setAttributes(new LinkedHashMap<>());
      attr(d, "bandwidth", intAttribute(new long[] {50, 100, 200}[x.nextInt(3)]));
      attr(d, "generation", versionAttribute(x.nextBoolean() ? "3.0.0" : "4.1.0"));
      switch (x.nextInt(4)) {
        case 0, 1 -> d.setNodeName(nodes.get(x.nextInt(nodes.size())).getMetadata().getName());
        case 2 ->
            d.setNodeSelector(
                x.nextBoolean()
                    ? AllocFixtures.labelSelector("zone", x.nextBoolean() ? "a" : "b")
                    : AllocFixtures.labelSelector(
                        "kubernetes.io/hostname",
                        nodes.get(x.nextInt(nodes.size())).getMetadata().getName()));
        default -> d.setAllNodes(true);
      }
      if (x.nextInt(4) == 0) {
        bindingConditions(d, FABRIC);
      }
      devices.add(d);
    }
    ResourceSlice s = slice("attach", FABRIC, null, 1, 1, devices);
    s.getSpec().setPerDeviceNodeSelection(true);
    extraSlices.add(s);
  }

  /** Places the extended profile's own slices among the (already shuffled) basic ones. */
  void placeExtraSlices(List<ResourceSlice> slices) {
    for (ResourceSlice extra : extraSlices) {
      slices.add(x.nextInt(slices.size() + 1), extra);
    }
  }

  /** Binding conditions (both lists, as the API requires), bound to the node half the time. */
  private void bindingConditions(Device d, String domain) {
    d.setBindingConditions(List.of(domain + "/attached"));
    d.setBindingFailureConditions(List.of(domain + "/attach-failed"));
    if (x.nextBoolean()) {
      d.setBindsToNode(true);
    }
  }

  /**
   * Alpha: a partition's counter consumption in no group, one or two of a few (so that some halves
   * go together and some do not).
   */
  void partition(Device d) {
    if (z == null) {
      return;
    }
    List<String> groups =
        switch (z.nextInt(6)) {
          case 0 -> List.of();
          case 1, 2 -> List.of("a");
          case 3 -> List.of("b");
          case 4 -> List.of("a", "b");
          default -> List.of("c");
        };
    NewerFields.setCompatibilityGroups(d.getConsumesCounters().get(0), groups);
  }

  /**
   * Fractional ranges (min, step, max; null: none), each valid as the API server checks them
   * (default and max a whole number of steps from min), in the formats drivers write.
   */
  private static final String[][] FRACTIONAL_RANGES = {
    {"100m", "50m", null}, {"0.1", "0.25", "1.85"}, {"250m", "125m", "1500m"}
  };

  /** Requests for a vGPU's cores: below min, off step, on step, whole, above max. */
  private static final String[] CORES_REQUESTS = {
    "30m", "100m", "130m", "0.3", "275m", "1", "1600m"
  };

  /**
   * Shared, one vGPU in two: a compute share {@code cores} of 2 whose request policy is a
   * fractional range ({@code DRAFractionalCapacityRange}, beta and on in 1.37: requests are rounded
   * up in milli-units).
   */
  void fractionalCores(Device vgpu) {
    if (y == null || !y.nextBoolean()) {
      return;
    }
    String[] bounds = FRACTIONAL_RANGES[y.nextInt(FRACTIONAL_RANGES.length)];
    CapacityRequestPolicyRange range = new CapacityRequestPolicyRange();
    range.setMin(new Quantity(bounds[0]));
    range.setStep(new Quantity(bounds[1]));
    if (bounds[2] != null) {
      range.setMax(new Quantity(bounds[2]));
    }
    CapacityRequestPolicy policy = new CapacityRequestPolicy();
    policy.setDefault(new Quantity(bounds[0]));
    policy.setValidRange(range);
    vgpu.getCapacity().put("cores", DeviceParts.capacity("2", policy));
  }

  /** The operations a slice may skip, as drivers would list them. */
  private static final List<List<String>> SKIPPED =
      List.of(
          List.of("*"),
          List.of("NodePrepareResources", "NodeUnprepareResources"),
          List.of("NodeUnprepareResources"));

  /**
   * Newer profile: the 1.37 fields of slices, devices and nodes, drawn over the final cluster (so
   * that no other draw moves), and the gates the scenario is decided with; the profile's gates
   * elsewhere. One node in two declares DRAOptionalNodeOperations; one slice with devices in three
   * skips node operations; a slice with partitions names their partition attribute half the time;
   * one GPU in five maps node resources. Gates: DRAOptionalNodeOperations on (half the seeds),
   * DRADerivedAttributes alone on (a quarter: the experimental allocator with the gate off), none
   * (a quarter: the incubating allocator).
   */
  String newerFields(List<ResourceSlice> slices, List<Node> nodes, String profileGates) {
    if (w == null) {
      return profileGates;
    }
    for (Node n : nodes) {
      if (w.nextBoolean()) {
        NewerFields.setDeclaredFeatures(n, List.of("DRAOptionalNodeOperations"));
      }
    }
    for (ResourceSlice s : slices) {
      List<Device> devices =
          s.getSpec().getDevices() == null ? List.of() : s.getSpec().getDevices();
      if (devices.isEmpty()) {
        continue;
      }
      if (w.nextInt(3) == 0) {
        NewerFields.setSkipNodeOperations(s.getSpec(), SKIPPED.get(w.nextInt(SKIPPED.size())));
      }
      if (devices.stream().anyMatch(d -> d.getConsumesCounters() != null) && w.nextBoolean()) {
        NewerFields.setPartitionTypeAttribute(s.getSpec(), GPU + "/partition");
      }
      for (Device d : devices) {
        if (d.getCapacity() != null && d.getCapacity().containsKey("memory") && w.nextInt(5) == 0) {
          NewerFields.setNodeAllocatableResources(d, nodeResources());
        }
      }
    }
    return switch (w.nextInt(4)) {
      case 0, 1 -> "DRAOptionalNodeOperations=true";
      case 2 -> "DRADerivedAttributes=true";
      default -> "";
    };
  }

  /** A GPU's node resources: its memory as node memory, per-pod overhead, or both. */
  private Map<String, NewerFields.NodeAllocatableResource> nodeResources() {
    io.kdra.core.model.Quantity gi = io.kdra.core.model.Quantity.parse("1Gi");
    return switch (w.nextInt(3)) {
      case 0 ->
          Map.of(
              "memory",
              new NewerFields.NodeAllocatableResource(
                  new NewerFields.Mapping("memory", io.kdra.core.model.Quantity.parse("1"), null),
                  null));
      case 1 ->
          Map.of(
              "cpu",
              new NewerFields.NodeAllocatableResource(
                  null, new NewerFields.Overhead(io.kdra.core.model.Quantity.parse("500m"), null)));
      default ->
          Map.of(
              "hugepages-2Mi",
              new NewerFields.NodeAllocatableResource(
                  new NewerFields.Mapping(null, null, io.kdra.core.model.Quantity.parse("8")),
                  new NewerFields.Overhead(gi, gi)));
    };
  }

  // ---- requests ------------------------------------------------------------------------------

  /** Derived attributes' expressions: typed values, guarded or not, a list, a shadowing one. */
  private static final String[] DERIVED =
      new String[] {
        "device.driver",
        "\"pcieRoot\" in device.attributes[\"resource.kubernetes.io\"] ?"
            + " device.attributes[\"resource.kubernetes.io\"].pcieRoot : \"none\"",
        "has(device.attributes[\"gpu.example.com\"].numa) ?"
            + " device.attributes[\"gpu.example.com\"].numa : -1",
        "\"shared\"",
        "has(device.attributes[\"gpu.example.com\"].driverVersion) ?"
            + " device.attributes[\"gpu.example.com\"].driverVersion : semver(\"0.0.1\")",
        "device.attributes[\"resource.kubernetes.io\"].pcieRoot", // fails on fabric links
        "device.attributes[\"gpu.example.com\"].model", // fails on all but GPUs
        "[device.driver]" // a list (not under distinctAttribute)
      };

  /**
   * Alpha, one claim in two: a {@code matchAttribute} (or one time in four {@code
   * distinctAttribute}) on a derived name, at times one that shadows the PCIe root; most of the
   * requests and subrequests derive it, most of those with the claim's main expression, the others
   * fall back to the device's attribute of that name.
   */
  void derivedAttributes(List<DeviceRequest> requests, List<DeviceConstraint> constraints) {
    if (!streams.alphaOneIn(2)) {
      return;
    }
    String name = z.nextInt(4) == 0 ? ScenarioGenerator.PCIE : "derived/key";
    boolean distinct = z.nextInt(4) == 0;
    DeviceConstraint c = new DeviceConstraint();
    if (distinct) {
      c.setDistinctAttribute(name);
    } else {
      c.setMatchAttribute(name);
    }
    c.setRequests(List.of());
    constraints.add(c);
    // one expression for most requests, so that many claims can be satisfied
    NewerFields.DerivedAttribute main = derived(name, distinct);
    for (DeviceRequest r : requests) {
      if (r.getExactly() != null && z.nextInt(4) != 0) {
        NewerFields.setDerivedAttributes(
            r.getExactly(), List.of(z.nextInt(3) != 0 ? main : derived(name, distinct)));
      }
      for (DeviceSubRequest sub : r.getFirstAvailable()) {
        if (z.nextInt(4) != 0) {
          NewerFields.setDerivedAttributes(
              sub, List.of(z.nextInt(3) != 0 ? main : derived(name, distinct)));
        }
      }
    }
  }

  private NewerFields.DerivedAttribute derived(String name, boolean distinct) {
    int x = z.nextInt(20);
    int i =
        x < 4 ? 0 : x < 8 ? 1 : x < 11 ? 2 : x < 13 ? 3 : x < 15 ? 4 : x < 17 ? 5 : x < 18 ? 6 : 7;
    if (distinct && i == 7) {
      i = 0;
    }
    return new NewerFields.DerivedAttribute(name, DERIVED[i]);
  }

  /**
   * Shared, one vGPU request in two: a fractional {@code cores} request beside the basic memory one
   * (if any). Returns the requirements to set, or null for none.
   */
  CapacityRequirements coresRequest(CapacityRequirements basic) {
    if (y == null || !y.nextBoolean()) {
      return basic;
    }
    CapacityRequirements req = basic != null ? basic : new CapacityRequirements();
    Map<String, Quantity> requests =
        new LinkedHashMap<>(req.getRequests() == null ? Map.of() : req.getRequests());
    requests.put("cores", new Quantity(CORES_REQUESTS[y.nextInt(CORES_REQUESTS.length)]));
    req.setRequests(requests);
    return req;
  }

  /** Extended: adminAccess one time in eight (subrequests have none in resource.k8s.io/v1). */
  void exactRequest(ExactDeviceRequest e) {
    if (streams.extendedOneIn(8)) {
      e.setAdminAccess(true);
    }
  }

  /**
   * Extended, one time in five: one or two tolerations of the NoExecute, tolerationSeconds kind and
   * more, in place of the basic ones.
   */
  void tolerations(Consumer<List<DeviceToleration>> tolerations) {
    if (!streams.extendedOneIn(5)) {
      return;
    }
    List<DeviceToleration> out = new ArrayList<>();
    int n = 1 + x.nextInt(2);
    for (int i = 0; i < n; i++) {
      DeviceToleration t = new DeviceToleration();
      switch (x.nextInt(6)) {
        case 0 -> {
          t.setKey(TAINT_KEY);
          t.setOperator("Equal");
          t.setValue("true");
          t.setEffect("NoExecute");
          t.setTolerationSeconds(new long[] {0, 60, 3600}[x.nextInt(3)]);
        }
        case 1 -> {
          t.setKey(DEGRADED_KEY);
          t.setOperator("Exists");
          t.setEffect(x.nextBoolean() ? "NoExecute" : "NoSchedule");
          if (x.nextBoolean()) {
            t.setTolerationSeconds(300L);
          }
        }
        case 2 -> t.setOperator("Exists"); // no key: tolerates every taint
        case 3 -> {
          t.setKey(TAINT_KEY);
          t.setOperator("Equal");
          t.setValue("false"); // tolerates nothing the generator taints with
        }
        case 4 -> {
          t.setKey(DEGRADED_KEY);
          t.setOperator("Equal");
          t.setValue("high");
        }
        default -> {
          t.setKey(DEGRADED_KEY);
          t.setOperator("Equal"); // empty value: matches only taints without one
        }
      }
      out.add(t);
    }
    tolerations.accept(out);
  }

  // ---- pods ----------------------------------------------------------------------------------

  /** Extended and shared: a basic pod's own node constraints, from the extended stream. */
  void place(PodSpec spec) {
    if (x != null) {
      placement(spec, x);
    }
  }

  /**
   * Shared profile: one in two pods also uses another claim (allocated before the run, or pending:
   * another pod's, or one no pod used), and one to three more pods, placed among the others, use
   * one or two such claims (at times beside a claim from the template), some with node constraints
   * of their own.
   */
  void shareClaims(
      List<ResourceClaim> old,
      List<ResourceClaim> pending,
      List<ResourceClaimTemplate> templates,
      List<Pod> pods) {
    if (y == null) {
      return;
    }
    for (Pod pod : pods) {
      if (y.nextBoolean()) {
        share(pod, old, pending);
      }
    }
    int more = 1 + y.nextInt(3);
    for (int i = 0; i < more; i++) {
      Pod pod = PodDraw.pod("share-" + i, List.of());
      int uses = 1 + y.nextInt(2);
      for (int j = 0; j < uses; j++) {
        share(pod, old, pending);
      }
      if (!templates.isEmpty() && y.nextInt(3) == 0) {
        pod.getSpec().getResourceClaims().add(PodDraw.templateUse(templates.get(0)));
      }
      if (y.nextBoolean()) {
        placement(pod.getSpec(), y);
      }
      pods.add(y.nextInt(pods.size() + 1), pod);
    }
  }

  /** Adds a use of a claim allocated before (one time in two, when there is one) or a pending. */
  private void share(Pod pod, List<ResourceClaim> old, List<ResourceClaim> pending) {
    List<ResourceClaim> from = !old.isEmpty() && y.nextBoolean() ? old : pending;
    String name = from.get(y.nextInt(from.size())).getMetadata().getName();
    List<PodResourceClaim> refs = pod.getSpec().getResourceClaims();
    if (refs.stream().anyMatch(prc -> name.equals(prc.getResourceClaimName()))) {
      return;
    }
    PodResourceClaim prc = new PodResourceClaim();
    prc.setName("s" + refs.size());
    prc.setResourceClaimName(name);
    refs.add(prc);
  }

  /** A pod's own node constraints, drawn from {@code rnd}, sometimes none that any node meets. */
  private void placement(PodSpec spec, Random rnd) {
    // at times a node that is not there
    String someNode = "node-" + rnd.nextInt(nodes.size() + 1);
    switch (rnd.nextInt(6)) {
      case 0 -> spec.setNodeName(someNode);
      case 1 -> spec.setNodeSelector(Map.of("zone", rnd.nextBoolean() ? "a" : "b"));
      case 2 ->
          spec.setAffinity(
              new AffinityBuilder()
                  .withNewNodeAffinity()
                  .withNewRequiredDuringSchedulingIgnoredDuringExecution()
                  .addNewNodeSelectorTerm()
                  .addToMatchExpressions(
                      new NodeSelectorRequirementBuilder()
                          .withKey("kubernetes.io/hostname")
                          .withOperator(rnd.nextBoolean() ? "In" : "NotIn")
                          .withValues(someNode)
                          .build())
                  .endNodeSelectorTerm()
                  .endRequiredDuringSchedulingIgnoredDuringExecution()
                  .endNodeAffinity()
                  .build());
      case 3 ->
          spec.setAffinity(
              new AffinityBuilder()
                  .withNewNodeAffinity()
                  .withNewRequiredDuringSchedulingIgnoredDuringExecution()
                  .addNewNodeSelectorTerm()
                  .addToMatchExpressions(
                      new NodeSelectorRequirementBuilder()
                          .withKey("zone")
                          .withOperator("In")
                          .withValues("a")
                          .build())
                  .endNodeSelectorTerm()
                  .addNewNodeSelectorTerm()
                  .addToMatchFields(
                      new NodeSelectorRequirementBuilder()
                          .withKey("metadata.name")
                          .withOperator("In")
                          .withValues(someNode)
                          .build())
                  .endNodeSelectorTerm()
                  .endRequiredDuringSchedulingIgnoredDuringExecution()
                  .endNodeAffinity()
                  .build());
      default -> {} // no constraint
    }
  }
}
