package io.kdra.core.testing;

import static io.kdra.core.testing.DeviceParts.attr;
import static io.kdra.core.testing.DeviceParts.capacity;
import static io.kdra.core.testing.DeviceParts.consumes;
import static io.kdra.core.testing.DeviceParts.counterSet;
import static io.kdra.core.testing.DeviceParts.slice;
import static io.kdra.core.testing.Fixtures.boolAttribute;
import static io.kdra.core.testing.Fixtures.intAttribute;
import static io.kdra.core.testing.Fixtures.stringAttribute;
import static io.kdra.core.testing.Fixtures.versionAttribute;
import static io.kdra.core.testing.ScenarioGenerator.FABRIC;
import static io.kdra.core.testing.ScenarioGenerator.GPU;
import static io.kdra.core.testing.ScenarioGenerator.MODELS;
import static io.kdra.core.testing.ScenarioGenerator.NIC;
import static io.kdra.core.testing.ScenarioGenerator.PCIE;
import static io.kdra.core.testing.ScenarioGenerator.TAINT_KEY;
import static io.kdra.core.testing.ScenarioGenerator.VERSIONS;

import io.fabric8.kubernetes.api.model.Node;
import io.fabric8.kubernetes.api.model.Quantity;
import io.fabric8.kubernetes.api.model.resource.v1.CapacityRequestPolicy;
import io.fabric8.kubernetes.api.model.resource.v1.CapacityRequestPolicyRange;
import io.fabric8.kubernetes.api.model.resource.v1.CounterSet;
import io.fabric8.kubernetes.api.model.resource.v1.Device;
import io.fabric8.kubernetes.api.model.resource.v1.DeviceTaint;
import io.fabric8.kubernetes.api.model.resource.v1.ResourceSlice;
import io.kdra.core.testing.FreeDevices.Placed;
import java.math.BigDecimal;
import java.util.ArrayList;
import java.util.Collections;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;

/**
 * Draws the cluster from the basic stream: up to four nodes, each with a GPU pool split over
 * several slices (sometimes incomplete, sometimes with a stale older generation), partitionable
 * GPUs on shared counters, a shareable vGPU with consumable capacity, node-local NICs on the GPUs'
 * PCIe roots, and network-attached fabric pools. The extended profile's additions to these devices
 * come from {@link ProfileShapes}.
 */
final class ClusterDraw {

  final List<Node> nodes;
  final List<ResourceSlice> slices = new ArrayList<>();

  /** The devices of current, complete pools, for the claims allocated before the run. */
  final FreeDevices free = new FreeDevices();

  private final Random r;
  private final ProfileShapes shapes;

  /** Draws into {@code nodes}, the list that {@code shapes} reads them from. */
  ClusterDraw(DrawStreams streams, List<Node> nodes, ProfileShapes shapes) {
    this.r = streams.basic;
    this.nodes = nodes;
    this.shapes = shapes;
  }

  /** The nodes with their GPU and NIC pools, then the fabric pools. */
  void draw() {
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
  }

  /** Shuffles slices and nodes, last of the basic draws (they depend on the number of slices). */
  void shuffle() {
    Collections.shuffle(slices, r);
    Collections.shuffle(nodes, r);
  }

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
      free.counter(node + "/" + set, new BigDecimal(80L << 30));
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
        shapes.partition(d);
        devices.add(d);
        counterKeys.put(p[0], node + "/" + set);
      }
    }
    if (r.nextInt(5) == 0) {
      devices.add(vgpu());
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
          free.add(new Placed(GPU, node, node, d, counterKeys.get(d.getName())));
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

  /** A shareable vGPU whose memory requests are bounded by a range or a list of values. */
  private Device vgpu() {
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
    shapes.fractionalCores(v);
    return v;
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
    shapes.gpu(d);
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
    devices.forEach(d -> free.add(new Placed(NIC, node, node, d, null)));
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
      shapes.fabricLink(d);
      devices.add(d);
    }
    ResourceSlice s = slice(pool, FABRIC, null, 1, 1, devices);
    if (r.nextBoolean()) {
      s.getSpec().setAllNodes(true);
    } else {
      s.getSpec().setNodeSelector(AllocFixtures.labelSelector("zone", "a"));
    }
    slices.add(s);
    devices.forEach(d -> free.add(new Placed(FABRIC, pool, null, d, null)));
  }
}
