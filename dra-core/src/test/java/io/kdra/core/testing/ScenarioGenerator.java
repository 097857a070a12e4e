package io.kdra.core.testing;

import static io.kdra.core.testing.Fixtures.boolAttribute;
import static io.kdra.core.testing.Fixtures.intAttribute;
import static io.kdra.core.testing.Fixtures.stringAttribute;
import static io.kdra.core.testing.Fixtures.versionAttribute;

import io.fabric8.kubernetes.api.model.Container;
import io.fabric8.kubernetes.api.model.Node;
import io.fabric8.kubernetes.api.model.NodeSelector;
import io.fabric8.kubernetes.api.model.NodeSelectorBuilder;
import io.fabric8.kubernetes.api.model.NodeSelectorRequirementBuilder;
import io.fabric8.kubernetes.api.model.ObjectMeta;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.PodResourceClaim;
import io.fabric8.kubernetes.api.model.PodSpec;
import io.fabric8.kubernetes.api.model.Quantity;
import io.fabric8.kubernetes.api.model.resource.v1.AllocationResult;
import io.fabric8.kubernetes.api.model.resource.v1.CapacityRequestPolicy;
import io.fabric8.kubernetes.api.model.resource.v1.CapacityRequestPolicyRange;
import io.fabric8.kubernetes.api.model.resource.v1.CapacityRequirements;
import io.fabric8.kubernetes.api.model.resource.v1.Counter;
import io.fabric8.kubernetes.api.model.resource.v1.CounterSet;
import io.fabric8.kubernetes.api.model.resource.v1.Device;
import io.fabric8.kubernetes.api.model.resource.v1.DeviceAllocationResult;
import io.fabric8.kubernetes.api.model.resource.v1.DeviceAttribute;
import io.fabric8.kubernetes.api.model.resource.v1.DeviceCapacity;
import io.fabric8.kubernetes.api.model.resource.v1.DeviceClaim;
import io.fabric8.kubernetes.api.model.resource.v1.DeviceClass;
import io.fabric8.kubernetes.api.model.resource.v1.DeviceConstraint;
import io.fabric8.kubernetes.api.model.resource.v1.DeviceCounterConsumption;
import io.fabric8.kubernetes.api.model.resource.v1.DeviceRequest;
import io.fabric8.kubernetes.api.model.resource.v1.DeviceRequestAllocationResult;
import io.fabric8.kubernetes.api.model.resource.v1.DeviceSubRequest;
import io.fabric8.kubernetes.api.model.resource.v1.DeviceTaint;
import io.fabric8.kubernetes.api.model.resource.v1.DeviceToleration;
import io.fabric8.kubernetes.api.model.resource.v1.ExactDeviceRequest;
import io.fabric8.kubernetes.api.model.resource.v1.ResourceClaim;
import io.fabric8.kubernetes.api.model.resource.v1.ResourceClaimSpec;
import io.fabric8.kubernetes.api.model.resource.v1.ResourceClaimStatus;
import io.fabric8.kubernetes.api.model.resource.v1.ResourceClaimTemplate;
import io.fabric8.kubernetes.api.model.resource.v1.ResourceClaimTemplateSpec;
import io.fabric8.kubernetes.api.model.resource.v1.ResourcePool;
import io.fabric8.kubernetes.api.model.resource.v1.ResourceSlice;
import io.fabric8.kubernetes.api.model.resource.v1.ResourceSliceSpec;
import java.math.BigDecimal;
import java.util.ArrayList;
import java.util.Collections;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;

/**
 * Seeded random DRA worlds for differential testing against upstream's allocator: a few nodes, each
 * with a GPU pool split over several slices (sometimes incomplete, sometimes with a stale older
 * generation), partitionable GPUs on shared counters, shareable vGPUs with consumable capacity,
 * node-local NICs on the GPUs' PCIe roots and network-attached fabric pools; typed attributes (int,
 * bool, string, version) and capacities; DeviceClasses and request selectors drawn from a grammar
 * of realistic CEL expressions; claims with counts, {@code All}, {@code firstAvailable},
 * tolerations, capacity requests, {@code matchAttribute} and {@code distinctAttribute}; claims
 * allocated before the run; pods with claims and templates.
 *
 * <p>Deterministic: the same seed always yields the same scenario (only {@link Random} with the
 * seed, and ordered collections). Sizes stay small (at most four nodes and a few dozen devices) so
 * that any disagreement can be read by a person.
 *
 * <p>{@link Profile#EXTENDED} adds adminAccess requests, devices with binding conditions (some
 * binding to a node), a pool with per-device node selection, pods with a node name, node selector
 * or required node affinity, and more taints and tolerations (NoExecute, tolerationSeconds, empty
 * values, tolerate-all). Its extra choices come from a second random stream, so the basic stream,
 * and with it every basic seed quoted in the docs, stays as it was: an extended scenario is its
 * basic scenario plus these shapes.
 *
 * <p>{@link Profile#SHARED} is the extended scenario of the same seed plus claim sharing, from a
 * third stream: pods also use claims allocated before the run or claims of other pods, and a few
 * more pods use only such claims (kube-scheduler must keep those claims' allocations and place each
 * pod where their node selectors allow).
 */
public final class ScenarioGenerator {

  public static final String GPU = "gpu.example.com";
  public static final String NIC = "nic.example.com";
  public static final String FABRIC = "fabric.example.com";
  public static final String PCIE = "resource.kubernetes.io/pcieRoot";
  public static final String TAINT_KEY = "example.com/maintenance";

  static final String[] MODELS = {"A100", "H100", "L4", "T4"};
  static final String[] VERSIONS = {"1.2.3", "1.10.0", "2.0.0", "2.1.0-beta.1", "535.104.5"};

  /** Which shapes a scenario may have. */
  public enum Profile {
    /** The original shapes; seeds documented in docs/OPERATIONS.md replay with it. */
    BASIC,
    /** BASIC plus adminAccess, binding conditions, per-device node selection, pod placement. */
    EXTENDED,
    /**
     * EXTENDED plus pods that share claims with other pods and use claims allocated before the run,
     * whose node selectors must restrict where the pods go.
     */
    SHARED;

    /** {@code basic} or {@code extended}, case-insensitive. */
    public static Profile of(String name) {
      return valueOf(name.trim().toUpperCase(java.util.Locale.ROOT));
    }
  }

  public static final String DEGRADED_KEY = "example.com/degraded";

  private final Random r;

  /** The extended profile's own choices (also the shared one's); null in the basic profile. */
  private final Random x;

  /** The shared profile's own choices; null in the others. */
  private final Random y;

  private final long seed;
  private final List<ResourceSlice> slices = new ArrayList<>();
  private final List<Node> nodes = new ArrayList<>();

  /** The extended profile's own slices, placed among the others after the basic shuffle. */
  private final List<ResourceSlice> extraSlices = new ArrayList<>();

  /** Devices that claims allocated before the run may take, in generation order. */
  private final List<Placed> placed = new ArrayList<>();

  private final Map<String, BigDecimal> counterLeft = new HashMap<>();

  /** Shares of each shareable device taken before the run (each takes 8Gi of its 24Gi). */
  private final Map<Device, Integer> shares = new java.util.IdentityHashMap<>();

  private int shareIds;

  /** A device of a current, complete pool, with what an earlier allocation of it needs. */
  private record Placed(
      String driver, String pool, String node, Device device, String counterKey) {}

  private ScenarioGenerator(long seed, Profile profile) {
    this.seed = seed;
    this.r = new Random(seed);
    this.x = profile != Profile.BASIC ? new Random(seed ^ 0x9E3779B97F4A7C15L) : null;
    this.y = profile == Profile.SHARED ? new Random(seed ^ 0xC2B2AE3D27D4EB4FL) : null;
  }

  /** The basic profile's scenario for this seed. */
  public static GeneratedScenario generate(long seed) {
    return generate(seed, Profile.BASIC);
  }

  /** The scenario for this seed and profile. */
  public static GeneratedScenario generate(long seed, Profile profile) {
    return new ScenarioGenerator(seed, profile).build();
  }

  /** True with probability 1/n in the extended profile; never in the basic one. */
  private boolean ext(int n) {
    return x != null && x.nextInt(n) == 0;
  }

  private GeneratedScenario build() {
    int nodeCount = 1 + r.nextInt(4);
    for (int n = 0; n < nodeCount; n++) {
      String name = "node-" + n;
      Node node =
          AllocFixtures.node(
              name, "zone", r.nextBoolean() ? "a" : "b", "kubernetes.io/hostname", name);
      nodes.add(node);
      gpuPool(name);
      if (r.nextInt(2) == 0) {
        nicPool(name);
      }
    }
    int fabrics = r.nextInt(3) == 0 ? 1 + r.nextInt(2) : 0;
    for (int f = 0; f < fabrics; f++) {
      fabricPool("fabric-" + f);
    }
    if (ext(2)) {
      perDevicePool("attach");
    }
    List<ResourceClaim> claims = new ArrayList<>();
    int old = r.nextInt(4);
    for (int i = 0; i < old; i++) {
      ResourceClaim c = allocatedClaim("old-" + i);
      if (c != null) {
        claims.add(c);
      }
    }
    List<ResourceClaim> pending = new ArrayList<>();
    int count = 1 + r.nextInt(6);
    for (int i = 0; i < count; i++) {
      pending.add(claim("claim-" + i, spec()));
    }
    List<ResourceClaimTemplate> templates = new ArrayList<>();
    List<Pod> pods = new ArrayList<>();
    if (r.nextBoolean()) {
      pods(pending, templates, pods);
    }
    if (y != null) {
      shareClaims(claims, pending, templates, pods); // claims: so far those allocated before
    }
    claims.addAll(pending);
    Collections.shuffle(slices, r);
    Collections.shuffle(nodes, r);
    // after the basic shuffle, whose draws depend on the number of slices
    for (ResourceSlice extra : extraSlices) {
      slices.add(x.nextInt(slices.size() + 1), extra);
    }
    return new GeneratedScenario(
        seed,
        classes(),
        List.copyOf(slices),
        List.copyOf(claims),
        List.copyOf(templates),
        List.copyOf(nodes),
        List.copyOf(pods));
  }

  // ---- inventory ----------------------------------------------------------------------------

  private void gpuPool(String node) {
    List<Device> devices = new ArrayList<>();
    Map<String, String> counterKeys = new HashMap<>();
    int gpus = 1 + r.nextInt(5);
    for (int i = 0; i < gpus; i++) {
      devices.add(gpu("gpu-" + i, i, gpus));
    }
    List<CounterSet> counterSets = new ArrayList<>();
    if (r.nextInt(4) == 0) {
      String set = "gpu-" + gpus + "-mem";
      counterSets.add(counterSet(set, "memory", "80Gi"));
      counterLeft.put(node + "/" + set, new BigDecimal(80L << 30));
      for (String[] p :
          new String[][] {
            {"part-full", "80Gi", "full"},
            {"part-half-0", "40Gi", "half"},
            {"part-half-1", "40Gi", "half"}
          }) {
        Device d = gpu(p[0], gpus, gpus + 1);
        attr(d, GPU + "/partition", stringAttribute(p[2]));
        d.getCapacity().put("memory", capacity(p[1], null));
        d.setConsumesCounters(List.of(consumes(set, "memory", p[1])));
        devices.add(d);
        counterKeys.put(p[0], node + "/" + set);
      }
    }
    if (r.nextInt(5) == 0) {
      Device v = gpu("vgpu-0", 0, 1);
      v.setAllowMultipleAllocations(true);
      CapacityRequestPolicy policy = new CapacityRequestPolicy();
      policy.setDefault(new Quantity("4Gi"));
      if (r.nextBoolean()) {
        CapacityRequestPolicyRange range = new CapacityRequestPolicyRange();
        range.setMin(new Quantity("2Gi"));
        range.setStep(new Quantity("2Gi"));
        policy.setValidRange(range);
      } else {
        policy.setValidValues(
            List.of(new Quantity("4Gi"), new Quantity("8Gi"), new Quantity("12Gi")));
      }
      v.getCapacity().put("memory", capacity("24Gi", policy));
      v.getCapacity().remove("cores");
      devices.add(v);
    }
    int sliceCount = 1 + r.nextInt(Math.min(3, devices.size()));
    long generation = r.nextInt(6) == 0 ? 2 : 1;
    List<List<Device>> parts = new ArrayList<>();
    for (int s = 0; s < sliceCount; s++) {
      parts.add(new ArrayList<>());
    }
    for (Device d : devices) {
      parts.get(r.nextInt(sliceCount)).add(d);
    }
    int total = sliceCount + (counterSets.isEmpty() ? 0 : 1);
    boolean incomplete = r.nextInt(12) == 0;
    int dropped = incomplete ? r.nextInt(sliceCount) : -1;
    List<String> names = new ArrayList<>();
    for (int s = 0; s < sliceCount; s++) {
      names.add(node + "-gpu-" + (char) ('a' + s));
    }
    Collections.shuffle(names, r);
    for (int s = 0; s < sliceCount; s++) {
      if (s == dropped) {
        continue;
      }
      ResourceSlice slice = slice(names.get(s), GPU, node, generation, total, parts.get(s));
      slice.getSpec().setNodeName(node);
      slices.add(slice);
      if (!incomplete) {
        for (Device d : parts.get(s)) {
          placed.add(new Placed(GPU, node, node, d, counterKeys.get(d.getName())));
        }
      }
    }
    if (!counterSets.isEmpty()) {
      ResourceSlice counters =
          slice(node + "-gpu-counters", GPU, node, generation, total, List.of());
      counters.getSpec().setDevices(null);
      counters.getSpec().setNodeName(node);
      counters.getSpec().setSharedCounters(counterSets);
      slices.add(counters);
    }
    if (generation == 2) {
      // a stale slice of the previous generation that a driver has not cleaned up yet
      ResourceSlice stale =
          slice(node + "-gpu-old", GPU, node, 1, 1, List.of(gpu("gpu-stale", 0, 1)));
      stale.getSpec().setNodeName(node);
      slices.add(stale);
    }
  }

  private Device gpu(String name, int index, int of) {
    String model = MODELS[r.nextInt(MODELS.length)];
    Device d = new Device();
    d.setName(name);
    d.setAttributes(new LinkedHashMap<>());
    d.setCapacity(new LinkedHashMap<>());
    // drivers write their own domain either bare or qualified; both must mean the same
    String prefix = r.nextInt(5) == 0 ? GPU + "/" : "";
    attr(d, prefix + "model", stringAttribute(model));
    attr(d, prefix + "numa", intAttribute(index * 2L / Math.max(1, of)));
    attr(d, prefix + "healthy", boolAttribute(r.nextInt(10) != 0));
    attr(d, prefix + "driverVersion", versionAttribute(VERSIONS[r.nextInt(VERSIONS.length)]));
    if (r.nextBoolean()) {
      attr(d, prefix + "mig", boolAttribute(r.nextBoolean()));
    }
    attr(d, PCIE, stringAttribute("pci-" + (index % 2)));
    String memory =
        switch (model) {
          case "A100" -> r.nextBoolean() ? "40Gi" : "80Gi";
          case "H100" -> "80Gi";
          case "L4" -> "24Gi";
          default -> "16Gi";
        };
    d.getCapacity().put("memory", capacity(memory, null));
    d.getCapacity().put("cores", capacity(String.valueOf(40 + 8 * r.nextInt(12)), null));
    if (r.nextInt(14) == 0) {
      DeviceTaint t = new DeviceTaint();
      t.setKey(TAINT_KEY);
      t.setValue("true");
      t.setEffect(r.nextInt(3) == 0 ? "NoExecute" : "NoSchedule");
      d.setTaints(List.of(t));
    }
    if (ext(8)) {
      bindingConditions(d, GPU);
    }
    if (ext(8)) {
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
    return d;
  }

  private void nicPool(String node) {
    List<Device> devices = new ArrayList<>();
    int nics = 1 + r.nextInt(2);
    for (int i = 0; i < nics; i++) {
      Device d = new Device();
      d.setName("nic-" + i);
      d.setAttributes(new LinkedHashMap<>());
      attr(d, "speed", intAttribute(new long[] {100, 200, 400}[r.nextInt(3)]));
      attr(d, "rdma", boolAttribute(r.nextBoolean()));
      attr(d, PCIE, stringAttribute("pci-" + (r.nextInt(3) == 0 ? 1 - i % 2 : i % 2)));
      devices.add(d);
    }
    ResourceSlice s = slice(node + "-nic", NIC, node, 1, 1, devices);
    s.getSpec().setNodeName(node);
    slices.add(s);
    devices.forEach(d -> placed.add(new Placed(NIC, node, node, d, null)));
  }

  private void fabricPool(String pool) {
    List<Device> devices = new ArrayList<>();
    int links = 1 + r.nextInt(3);
    for (int i = 0; i < links; i++) {
      Device d = new Device();
      d.setName("link-" + i);
      d.setAttributes(new LinkedHashMap<>());
      attr(d, "bandwidth", intAttribute(new long[] {50, 100, 200}[r.nextInt(3)]));
      attr(d, "generation", versionAttribute(r.nextBoolean() ? "3.0.0" : "4.1.0"));
      if (ext(4)) {
        bindingConditions(d, FABRIC);
      }
      devices.add(d);
    }
    ResourceSlice s = slice(pool, FABRIC, null, 1, 1, devices);
    if (r.nextBoolean()) {
      s.getSpec().setAllNodes(true);
    } else {
      s.getSpec().setNodeSelector(AllocFixtures.labelSelector("zone", "a"));
    }
    slices.add(s);
    devices.forEach(d -> placed.add(new Placed(FABRIC, pool, null, d, null)));
  }

  /**
   * Extended profile: network-attached links in a slice with {@code perDeviceNodeSelection}, each
   * link reachable from one node by name, from nodes by selector, or from all nodes; some with
   * binding conditions. Not offered to claims allocated before the run.
   */
  private void perDevicePool(String pool) {
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
    ResourceSlice s = slice(pool, FABRIC, null, 1, 1, devices);
    s.getSpec().setPerDeviceNodeSelection(true);
    extraSlices.add(s);
  }

  /** Binding conditions (both lists, as the API requires), bound to the node half the time. */
  private void bindingConditions(Device d, String domain) {
    d.setBindingConditions(List.of(domain + "/attached"));
    d.setBindingFailureConditions(List.of(domain + "/attach-failed"));
    if (x.nextBoolean()) {
      d.setBindsToNode(true);
    }
  }

  private static ResourceSlice slice(
      String name, String driver, String node, long generation, long count, List<Device> devices) {
    ResourceSlice s = new ResourceSlice();
    ObjectMeta m = new ObjectMeta();
    m.setName(name);
    s.setMetadata(m);
    ResourceSliceSpec spec = new ResourceSliceSpec();
    spec.setDriver(driver);
    ResourcePool pool = new ResourcePool();
    pool.setName(node == null ? name : node);
    pool.setGeneration(generation);
    pool.setResourceSliceCount(count);
    spec.setPool(pool);
    spec.setDevices(new ArrayList<>(devices));
    s.setSpec(spec);
    return s;
  }

  // ---- classes and selectors ------------------------------------------------------------------

  private static String attr(String domain, String id) {
    return "device.attributes[\"" + domain + "\"]." + id;
  }

  private static String cap(String id) {
    return "device.capacity[\"" + GPU + "\"]." + id;
  }

  static final String IS_GPU = "device.driver == \"" + GPU + "\"";

  /** The same classes in every scenario: claims pick among them. */
  static List<DeviceClass> classes() {
    return List.of(
        AllocFixtures.deviceClass("gpu", IS_GPU),
        AllocFixtures.deviceClass(
            "gpu-big", IS_GPU, cap("memory") + ".compareTo(quantity(\"40Gi\")) >= 0"),
        AllocFixtures.deviceClass(
            "gpu-a100", IS_GPU + " && " + attr(GPU, "model") + " == \"A100\""),
        AllocFixtures.deviceClass("gpu-healthy", IS_GPU + " && " + attr(GPU, "healthy")),
        // unguarded: devices without the optional mig attribute make evaluation fail
        AllocFixtures.deviceClass("gpu-mig", IS_GPU, attr(GPU, "mig") + " == true"),
        AllocFixtures.deviceClass("vgpu", IS_GPU + " && device.allowMultipleAllocations"),
        AllocFixtures.deviceClass(
            "partition", IS_GPU, "\"partition\" in device.attributes[\"" + GPU + "\"]"),
        AllocFixtures.deviceClass("nic", "device.driver == \"" + NIC + "\""),
        AllocFixtures.deviceClass("fabric", "device.driver == \"" + FABRIC + "\""));
  }

  private String gpuAtom() {
    String model = MODELS[r.nextInt(MODELS.length)];
    String version = VERSIONS[r.nextInt(3)];
    String mem = new String[] {"16Gi", "24Gi", "40Gi", "80Gi", "30000Mi"}[r.nextInt(5)];
    return switch (r.nextInt(16)) {
      case 0 -> attr(GPU, "model") + " == \"" + model + "\"";
      case 1 -> attr(GPU, "model") + " != \"" + model + "\"";
      case 2 ->
          attr(GPU, "model")
              + " in [\""
              + model
              + "\", \""
              + MODELS[r.nextInt(MODELS.length)]
              + "\"]";
      case 3 -> cap("memory") + ".compareTo(quantity(\"" + mem + "\")) >= 0";
      case 4 -> cap("memory") + ".isLessThan(quantity(\"" + mem + "\"))";
      case 5 -> attr(GPU, "numa") + " == " + r.nextInt(2);
      case 6 -> attr(GPU, "healthy");
      case 7 -> "!" + attr(GPU, "healthy");
      case 8 -> attr(GPU, "driverVersion") + ".isGreaterThan(semver(\"" + version + "\"))";
      case 9 -> attr(GPU, "driverVersion") + ".compareTo(semver(\"" + version + "\")) <= 0";
      case 10 -> "has(" + attr(GPU, "mig") + ") && " + attr(GPU, "mig");
      case 11 -> "!(\"mig\" in device.attributes[\"" + GPU + "\"])";
      case 12 ->
          r.nextBoolean()
              ? attr(GPU, "model") + ".startsWith(\"" + model.charAt(0) + "\")"
              : attr(GPU, "model") + ".matches(\"^[AH]100$\")";
      case 13 -> cap("cores") + ".isGreaterThan(quantity(\"" + (40 + 8 * r.nextInt(10)) + "\"))";
      case 14 ->
          "device.attributes[\"resource.kubernetes.io\"].pcieRoot == \"pci-" + r.nextInt(2) + "\"";
      default ->
          r.nextInt(4) == 0
              ? attr(GPU, "mig") // unguarded: may fail to evaluate
              : attr(GPU, "numa") + " * 2 + 1 >= " + (1 + 2 * r.nextInt(2));
    };
  }

  private String nicAtom() {
    return switch (r.nextInt(3)) {
      case 0 -> attr(NIC, "speed") + " >= " + new int[] {100, 200, 400}[r.nextInt(3)];
      case 1 -> attr(NIC, "rdma");
      default ->
          "device.attributes[\"resource.kubernetes.io\"].pcieRoot == \"pci-" + r.nextInt(2) + "\"";
    };
  }

  private String fabricAtom() {
    return r.nextBoolean()
        ? attr(FABRIC, "bandwidth") + " > " + (r.nextBoolean() ? 50 : 100)
        : attr(FABRIC, "generation") + ".isGreaterThan(semver(\"3.5.0\"))";
  }

  private String selector(String className) {
    java.util.function.Supplier<String> atom =
        switch (className) {
          case "nic" -> this::nicAtom;
          case "fabric" -> this::fabricAtom;
          default -> this::gpuAtom;
        };
    int shape = r.nextInt(10);
    if (shape < 2) {
      return atom.get() + " || " + atom.get();
    }
    if (shape < 3) {
      return "!(" + atom.get() + ")";
    }
    if (shape < 4) {
      return atom.get() + " && " + atom.get();
    }
    return atom.get();
  }

  // ---- claims --------------------------------------------------------------------------------

  private String className() {
    int x = r.nextInt(100);
    if (x < 35) {
      return "gpu";
    }
    if (x < 45) {
      return "gpu-big";
    }
    if (x < 52) {
      return "gpu-a100";
    }
    if (x < 57) {
      return "gpu-healthy";
    }
    if (x < 68) {
      return "nic";
    }
    if (x < 75) {
      return "fabric";
    }
    if (x < 84) {
      return "vgpu";
    }
    if (x < 93) {
      return "partition";
    }
    if (x < 98) {
      return "gpu-mig";
    }
    return "no-such-class";
  }

  private ResourceClaimSpec spec() {
    int requests = r.nextInt(7) == 0 ? 3 : 1 + r.nextInt(2);
    List<DeviceRequest> list = new ArrayList<>();
    for (int i = 0; i < requests; i++) {
      DeviceRequest req = new DeviceRequest();
      req.setName("r" + i);
      if (r.nextInt(4) == 0) {
        List<DeviceSubRequest> subs = new ArrayList<>();
        int n = 2 + r.nextInt(2);
        for (int s = 0; s < n; s++) {
          DeviceSubRequest sub = new DeviceSubRequest();
          sub.setName("s" + s);
          String cls = className();
          sub.setDeviceClassName(cls);
          fill(
              cls,
              sub::setSelectors,
              sub::setAllocationMode,
              sub::setCount,
              sub::setTolerations,
              sub::setCapacity);
          subs.add(sub);
        }
        req.setFirstAvailable(subs);
      } else {
        ExactDeviceRequest e = new ExactDeviceRequest();
        String cls = className();
        e.setDeviceClassName(cls);
        fill(
            cls,
            e::setSelectors,
            e::setAllocationMode,
            e::setCount,
            e::setTolerations,
            e::setCapacity);
        if (ext(8)) {
          // subrequests have no adminAccess in resource.k8s.io/v1
          e.setAdminAccess(true);
        }
        req.setExactly(e);
      }
      list.add(req);
    }
    DeviceClaim devices = new DeviceClaim();
    devices.setRequests(list);
    List<DeviceConstraint> constraints = new ArrayList<>();
    if (r.nextInt(10) < 3) {
      DeviceConstraint c = new DeviceConstraint();
      int x = r.nextInt(20);
      c.setMatchAttribute(
          x < 10
              ? PCIE
              : x < 15 ? GPU + "/model" : x < 18 ? GPU + "/numa" : GPU + "/driverVersion");
      c.setRequests(constraintRequests(list));
      constraints.add(c);
    }
    if (r.nextInt(14) == 0) {
      DeviceConstraint c = new DeviceConstraint();
      c.setDistinctAttribute(r.nextBoolean() ? PCIE : GPU + "/numa");
      c.setRequests(constraintRequests(list));
      constraints.add(c);
    }
    devices.setConstraints(constraints);
    ResourceClaimSpec spec = new ResourceClaimSpec();
    spec.setDevices(devices);
    return spec;
  }

  /** Empty (all requests), or some request names; a subrequest by its full name at times. */
  private List<String> constraintRequests(List<DeviceRequest> requests) {
    if (r.nextBoolean() || requests.size() < 2) {
      return List.of();
    }
    List<String> names = new ArrayList<>();
    for (DeviceRequest q : requests) {
      if (r.nextInt(3) == 0) {
        continue;
      }
      if (!q.getFirstAvailable().isEmpty() && r.nextBoolean()) {
        names.add(q.getName() + "/" + q.getFirstAvailable().get(0).getName());
      } else {
        names.add(q.getName());
      }
    }
    return names.isEmpty() ? List.of(requests.get(0).getName()) : names;
  }

  private void fill(
      String cls,
      java.util.function.Consumer<List<io.fabric8.kubernetes.api.model.resource.v1.DeviceSelector>>
          selectors,
      java.util.function.Consumer<String> mode,
      java.util.function.Consumer<Long> count,
      java.util.function.Consumer<List<DeviceToleration>> tolerations,
      java.util.function.Consumer<CapacityRequirements> capacity) {
    int n = r.nextInt(20);
    int sel = n < 10 ? 0 : n < 17 ? 1 : 2;
    List<String> exprs = new ArrayList<>();
    for (int i = 0; i < sel; i++) {
      exprs.add(selector(cls));
    }
    if (!exprs.isEmpty()) {
      selectors.accept(AllocFixtures.selectors(exprs.toArray(new String[0])));
    }
    if (!cls.equals("vgpu") && r.nextInt(14) == 0) {
      mode.accept("All");
    } else {
      mode.accept("ExactCount");
      int c = r.nextInt(10);
      count.accept(c < 6 ? 1L : c < 9 ? 2L : 3L);
    }
    if (r.nextInt(8) == 0) {
      DeviceToleration t = new DeviceToleration();
      t.setKey(TAINT_KEY);
      if (r.nextBoolean()) {
        t.setOperator("Exists");
      } else {
        t.setOperator("Equal");
        t.setValue("true");
        t.setEffect("NoSchedule");
      }
      tolerations.accept(List.of(t));
    }
    if (ext(5)) {
      tolerations.accept(extendedTolerations());
    }
    if (cls.equals("vgpu") && r.nextInt(10) < 7) {
      CapacityRequirements req = new CapacityRequirements();
      req.setRequests(
          Map.of(
              "memory",
              new Quantity(new String[] {"1Gi", "4Gi", "6Gi", "10Gi", "30Gi"}[r.nextInt(5)])));
      capacity.accept(req);
    }
  }

  /** Extended profile: one or two tolerations of the NoExecute, tolerationSeconds kind and more. */
  private List<DeviceToleration> extendedTolerations() {
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
    return out;
  }

  private static ResourceClaim claim(String name, ResourceClaimSpec spec) {
    ResourceClaim c = new ResourceClaim();
    ObjectMeta m = new ObjectMeta();
    m.setName(name);
    m.setNamespace("default");
    m.setUid("uid-" + name);
    c.setMetadata(m);
    c.setSpec(spec);
    return c;
  }

  /** A claim that holds one or two free devices before the run; null when none is free. */
  private ResourceClaim allocatedClaim(String name) {
    List<DeviceRequestAllocationResult> results = new ArrayList<>();
    String node = null;
    int want = 1 + r.nextInt(2);
    for (int attempt = 0; attempt < 6 && results.size() < want && !placed.isEmpty(); attempt++) {
      Placed p = placed.get(r.nextInt(placed.size()));
      if (p.node() != null && node != null && !node.equals(p.node())) {
        continue;
      }
      DeviceRequestAllocationResult res = new DeviceRequestAllocationResult();
      res.setRequest("req");
      res.setDriver(p.driver());
      res.setPool(p.pool());
      res.setDevice(p.device().getName());
      if (Boolean.TRUE.equals(p.device().getAllowMultipleAllocations())) {
        if (shares.merge(p.device(), 1, Integer::sum) >= 3) {
          placed.remove(p);
        }
        res.setShareID(String.format("00000000-0000-4000-8000-%012d", ++shareIds));
        res.setConsumedCapacity(Map.of("memory", new Quantity("8Gi")));
      } else {
        placed.remove(p);
        if (p.counterKey() != null) {
          BigDecimal need =
              new BigDecimal(
                  Long.parseLong(
                      p.device().getName().equals("part-full") ? "85899345920" : "42949672960"));
          BigDecimal left = counterLeft.get(p.counterKey());
          if (left.compareTo(need) < 0) {
            continue;
          }
          counterLeft.put(p.counterKey(), left.subtract(need));
        }
      }
      if (p.node() != null) {
        node = p.node();
      }
      results.add(res);
    }
    if (results.isEmpty()) {
      return null;
    }
    ResourceClaim c = claim(name, spec());
    DeviceRequest req = new DeviceRequest();
    req.setName("req");
    ExactDeviceRequest e = new ExactDeviceRequest();
    e.setDeviceClassName("gpu");
    e.setCount((long) results.size());
    e.setAllocationMode("ExactCount");
    req.setExactly(e);
    c.getSpec().getDevices().setRequests(List.of(req));
    c.getSpec().getDevices().setConstraints(List.of());
    AllocationResult a = new AllocationResult();
    DeviceAllocationResult devices = new DeviceAllocationResult();
    devices.setResults(results);
    a.setDevices(devices);
    if (node != null) {
      a.setNodeSelector(nodeName(node));
    }
    ResourceClaimStatus status = new ResourceClaimStatus();
    status.setAllocation(a);
    c.setStatus(status);
    return c;
  }

  static NodeSelector nodeName(String node) {
    return new NodeSelectorBuilder()
        .addNewNodeSelectorTerm()
        .addToMatchFields(
            new NodeSelectorRequirementBuilder()
                .withKey("metadata.name")
                .withOperator("In")
                .withValues(node)
                .build())
        .endNodeSelectorTerm()
        .build();
  }

  // ---- pods ----------------------------------------------------------------------------------

  /** Pods for most pending claims (one or two each), some from a template; the rest stay alone. */
  private void pods(
      List<ResourceClaim> pending, List<ResourceClaimTemplate> templates, List<Pod> pods) {
    if (r.nextInt(3) == 0) {
      ResourceClaimTemplate t = new ResourceClaimTemplate();
      ObjectMeta m = new ObjectMeta();
      m.setName("tmpl-0");
      m.setNamespace("default");
      t.setMetadata(m);
      ResourceClaimTemplateSpec ts = new ResourceClaimTemplateSpec();
      ts.setSpec(spec());
      t.setSpec(ts);
      templates.add(t);
    }
    int next = 0;
    int podIndex = 0;
    while (next < pending.size() || (!templates.isEmpty() && podIndex < 2)) {
      List<PodResourceClaim> refs = new ArrayList<>();
      int take = next < pending.size() ? (r.nextInt(3) == 0 ? 2 : 1) : 0;
      if (next < pending.size() && r.nextInt(5) == 0) {
        next++; // this claim stays without a pod and is allocated after the pods
        continue;
      }
      for (int i = 0; i < take && next < pending.size(); i++, next++) {
        PodResourceClaim prc = new PodResourceClaim();
        prc.setName("c" + i);
        prc.setResourceClaimName(pending.get(next).getMetadata().getName());
        refs.add(prc);
      }
      if (!templates.isEmpty() && (take == 0 || r.nextInt(3) == 0)) {
        PodResourceClaim prc = new PodResourceClaim();
        prc.setName("t");
        prc.setResourceClaimTemplateName(templates.get(0).getMetadata().getName());
        refs.add(prc);
      }
      if (refs.isEmpty()) {
        continue;
      }
      Pod pod = pod("pod-" + podIndex++, refs);
      if (x != null) {
        placement(pod.getSpec(), x);
      }
      pods.add(pod);
    }
  }

  private static Pod pod(String name, List<PodResourceClaim> refs) {
    Pod pod = new Pod();
    ObjectMeta m = new ObjectMeta();
    m.setName(name);
    m.setNamespace("default");
    pod.setMetadata(m);
    PodSpec spec = new PodSpec();
    Container c = new Container();
    c.setName("app");
    c.setImage("registry.k8s.io/pause:3.10");
    spec.setContainers(List.of(c));
    spec.setResourceClaims(new ArrayList<>(refs));
    pod.setSpec(spec);
    return pod;
  }

  /**
   * Shared profile: one in two pods also uses another claim (allocated before the run, or pending:
   * another pod's, or one no pod used), and one to three more pods, placed among the others, use
   * one or two such claims (at times beside a claim from the template), some with node constraints
   * of their own.
   */
  private void shareClaims(
      List<ResourceClaim> old,
      List<ResourceClaim> pending,
      List<ResourceClaimTemplate> templates,
      List<Pod> pods) {
    for (Pod pod : pods) {
      if (y.nextBoolean()) {
        share(pod, old, pending);
      }
    }
    int more = 1 + y.nextInt(3);
    for (int i = 0; i < more; i++) {
      Pod pod = pod("share-" + i, List.of());
      int uses = 1 + y.nextInt(2);
      for (int j = 0; j < uses; j++) {
        share(pod, old, pending);
      }
      if (!templates.isEmpty() && y.nextInt(3) == 0) {
        PodResourceClaim prc = new PodResourceClaim();
        prc.setName("t");
        prc.setResourceClaimTemplateName(templates.get(0).getMetadata().getName());
        pod.getSpec().getResourceClaims().add(prc);
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

  /**
   * Extended and shared profiles: a pod's own node constraints, drawn from {@code rnd}, sometimes
   * none that any node meets.
   */
  private void placement(PodSpec spec, Random rnd) {
    // at times a node that is not there
    String someNode = "node-" + rnd.nextInt(nodes.size() + 1);
    switch (rnd.nextInt(6)) {
      case 0 -> spec.setNodeName(someNode);
      case 1 -> spec.setNodeSelector(Map.of("zone", rnd.nextBoolean() ? "a" : "b"));
      case 2 ->
          spec.setAffinity(
              new io.fabric8.kubernetes.api.model.AffinityBuilder()
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
              new io.fabric8.kubernetes.api.model.AffinityBuilder()
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

  // ---- small builders ------------------------------------------------------------------------

  private static void attr(Device d, String name, DeviceAttribute a) {
    d.getAttributes().put(name, a);
  }

  private static DeviceCapacity capacity(String value, CapacityRequestPolicy policy) {
    DeviceCapacity c = new DeviceCapacity();
    c.setValue(new Quantity(value));
    c.setRequestPolicy(policy);
    return c;
  }

  private static CounterSet counterSet(String name, String counter, String value) {
    CounterSet s = new CounterSet();
    s.setName(name);
    Counter c = new Counter();
    c.setValue(new Quantity(value));
    s.setCounters(Map.of(counter, c));
    return s;
  }

  private static DeviceCounterConsumption consumes(String set, String counter, String value) {
    DeviceCounterConsumption c = new DeviceCounterConsumption();
    c.setCounterSet(set);
    Counter q = new Counter();
    q.setValue(new Quantity(value));
    c.setCounters(Map.of(counter, q));
    return c;
  }
}
