package io.kdra.it.nodes;

import io.kdra.it.support.PrivateTmpfs;
import java.util.Map;

/**
 * A simulated node: its name, the device-driver's simulated inventory (the YAML format of {@code
 * kdra.device-driver.inventory-file}; attribute names as docs/user/device-driver.md lists them) and
 * the properties its driver gets beyond the stack's (its sharing strategy, MIG mode), and the
 * private mount namespace its driver runs in, if any.
 */
public record SimulatedNode(
    String name, String inventory, Map<String, String> driverProperties, PrivateTmpfs driverMount) {

  public SimulatedNode {
    driverProperties = Map.copyOf(driverProperties);
  }

  public SimulatedNode(String name, String inventory, Map<String, String> driverProperties) {
    this(name, inventory, driverProperties, null);
  }

  public SimulatedNode(String name, String inventory) {
    this(name, inventory, Map.of());
  }

  /** This node with {@code properties} for its driver only. */
  public SimulatedNode withDriverProperties(Map<String, String> properties) {
    return new SimulatedNode(name, inventory, properties, driverMount);
  }

  /**
   * This node with its driver inside {@code mount}'s private mount namespace ({@link PrivateTmpfs}:
   * a small disk the test fills); null: none.
   */
  public SimulatedNode withDriverMount(PrivateTmpfs mount) {
    return new SimulatedNode(name, inventory, driverProperties, mount);
  }

  /** Two NVIDIA L4s with 24Gi each. */
  public static SimulatedNode twoL4s(String name) {
    return new SimulatedNode(
        name,
        "devices:\n"
            + gpu(name, 0, L4, "0000:3b:00.0", "pci0000:3a")
            + gpu(name, 1, L4, "0000:5e:00.0", "pci0000:5d"));
  }

  /** One NVIDIA A100 with 40Gi. */
  public static SimulatedNode oneA100(String name) {
    return new SimulatedNode(
        name, "devices:\n" + gpu(name, 0, A100_40GB, "0000:07:00.0", "pci0000:00"));
  }

  /** {@code count} NVIDIA L4s with 24Gi each, on distinct PCIe roots. */
  public static SimulatedNode l4s(String name, int count) {
    StringBuilder devices = new StringBuilder("devices:\n");
    for (int i = 0; i < count; i++) {
      devices.append(l4OnOwnRoot(name, i));
    }
    return new SimulatedNode(name, devices.toString());
  }

  /**
   * For a real node ({@link RealNode}): NVIDIA L4s whose CDI edits a container can see, one device
   * node of this machine each ({@code deviceNodes}, harmless ones such as {@code /dev/fuse}: the
   * node has no GPU) and {@code SIMULATED_GPU_UUID} (the device's uuid).
   */
  public static SimulatedNode l4sWithDeviceNodes(String name, String... deviceNodes) {
    StringBuilder devices = new StringBuilder("devices:\n");
    for (int i = 0; i < deviceNodes.length; i++) {
      devices.append(l4OnOwnRoot(name, i)).append(visibleToContainers(name, i, deviceNodes[i]));
    }
    return new SimulatedNode(name, devices.toString());
  }

  /** For a real node: one A100 with 40Gi (as {@link #oneA100}), its CDI edits as above. */
  public static SimulatedNode a100WithDeviceNode(String name, String deviceNode) {
    return new SimulatedNode(
        name,
        "devices:\n"
            + gpu(name, 0, A100_40GB, "0000:07:00.0", "pci0000:00")
            + visibleToContainers(name, 0, deviceNode));
  }

  /** The uuid attribute of device {@code index} of {@code node}. */
  public static String uuid(String node, int index) {
    return "GPU-" + java.util.UUID.nameUUIDFromBytes((node + "/" + index).getBytes());
  }

  /** What tells one GPU model from another in the inventory. */
  private record Model(String product, String architecture, String cuda, String memory) {}

  private static final Model L4 = new Model("NVIDIA L4", "Ada Lovelace", "8.9.0", "24Gi");
  private static final Model A100_40GB =
      new Model("NVIDIA A100-SXM4-40GB", "Ampere", "8.0.0", "40Gi");
  private static final Model H100 = new Model("NVIDIA H100 80GB HBM3", "Hopper", "9.0.0", "80Gi");

  /**
   * {@code count} NVIDIA H100s with 80Gi each, on distinct PCIe roots, numbered from {@code first}
   * (a product no ComputeClass of the tests names).
   */
  public static String h100s(String node, int first, int count) {
    StringBuilder devices = new StringBuilder();
    for (int i = first; i < first + count; i++) {
      devices.append(
          gpu(
              node,
              i,
              H100,
              String.format("0000:%02x:00.0", 0x40 + 2 * i),
              String.format("pci0000:%02x", 0x3f + 2 * i)));
    }
    return devices.toString();
  }

  /** L4 number {@code index} of a node whose GPUs each sit on a PCIe root of their own. */
  private static String l4OnOwnRoot(String node, int index) {
    return gpu(
        node,
        index,
        L4,
        String.format("0000:%02x:00.0", 0x10 + 2 * index),
        String.format("pci0000:%02x", 0x0f + 2 * index));
  }

  /** The CDI edits of a device that a container on a real node can see. */
  private static String visibleToContainers(String node, int index, String deviceNode) {
    return "  deviceNodes: ["
        + deviceNode
        + "]\n"
        + "  env: {SIMULATED_GPU_UUID: "
        + uuid(node, index)
        + "}\n";
  }

  private static String gpu(String node, int index, Model model, String busId, String pcieRoot) {
    return "- name: gpu-"
        + index
        + "\n"
        + "  attributes:\n"
        + "    type: gpu\n"
        + "    index: "
        + index
        + "\n"
        + "    minor: "
        + index
        + "\n"
        + "    uuid: "
        + uuid(node, index)
        + "\n"
        + "    productName: "
        + model.product()
        + "\n"
        + "    architecture: "
        + model.architecture()
        + "\n"
        + "    driverVersion: {version: 550.127.5}\n"
        + "    cudaComputeCapability: {version: "
        + model.cuda()
        + "}\n"
        + "    migEnabled: false\n"
        + "    resource.kubernetes.io/pciBusID: \""
        + busId
        + "\"\n"
        + "    resource.kubernetes.io/pcieRoot: "
        + pcieRoot
        + "\n"
        + "  capacity: {memory: "
        + model.memory()
        + "}\n";
  }

  /**
   * One MIG-enabled A100-40GB as the nvidia backend publishes it with {@code
   * kdra.device-driver.mig-mode= dynamic} (docs/user/mig.md): every placement of 1g.5gb, 2g.10gb,
   * 3g.20gb, 4g.20gb and 7g.40gb, and the whole GPU, on one counter set of eight memory slices and
   * 98 multiprocessors.
   */
  public static SimulatedNode migA100(String name) {
    return new SimulatedNode(name, "devices:\n" + migGpu(name, "NVIDIA A100-SXM4-40GB"));
  }

  /**
   * The devices of {@link #migA100} (without the {@code devices:} line) under another product name
   * ({@code productName} of the partitions and of the whole GPU).
   */
  public static String migGpu(String name, String product) {
    StringBuilder d = new StringBuilder();
    String[][] profiles = {
      {"1g.5gb", "19", "1", "14", "0,1,2,3,4,5,6"}, {"2g.10gb", "14", "2", "28", "0,2,4"},
      {"3g.20gb", "9", "4", "42", "0,4"}, {"4g.20gb", "5", "4", "56", "0"},
      {"7g.40gb", "0", "8", "98", "0"}
    };
    for (String[] p : profiles) {
      int size = Integer.parseInt(p[2]);
      for (String startText : p[4].split(",")) {
        int start = Integer.parseInt(startText);
        d.append("- name: gpu-0-mig-")
            .append(p[0].replace(".", ""))
            .append('-')
            .append(start)
            .append("\n  attributes:\n    type: mig\n    profile: ")
            .append(p[0])
            .append("\n    migProfileId: ")
            .append(p[1])
            .append("\n    placementStart: ")
            .append(start)
            .append("\n    parentIndex: 0\n    parentUuid: ")
            .append(uuid(name, 0))
            .append("\n    productName: ")
            .append(product)
            .append("\n")
            .append("  capacity: {multiprocessors: ")
            .append(p[3])
            .append("}\n")
            .append("  consumesCounters:\n  - counterSet: gpu-0-mig\n    counters: {")
            .append("multiprocessors: ")
            .append(p[3]);
        for (int s = start; s < start + size; s++) {
          d.append(", memory-slice-").append(s).append(": 1");
        }
        d.append("}\n");
      }
    }
    StringBuilder all = new StringBuilder("multiprocessors: 98");
    for (int s = 0; s < 8; s++) {
      all.append(", memory-slice-").append(s).append(": 1");
    }
    d.append(
            gpu(name, 0, A100_40GB, "0000:07:00.0", "pci0000:00")
                .replace("migEnabled: false", "migEnabled: true")
                .replace("productName: " + A100_40GB.product(), "productName: " + product))
        .append("  consumesCounters:\n  - counterSet: gpu-0-mig\n    counters: {")
        .append(all)
        .append("}\n")
        .append("sharedCounters:\n- name: gpu-0-mig\n  counters: {")
        .append(all)
        .append("}\n");
    return d.toString();
  }
}
