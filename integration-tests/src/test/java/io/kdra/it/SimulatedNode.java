package io.kdra.it;

/**
 * A simulated node: its name and the device-driver's simulated inventory (the YAML format of
 * {@code driver.inventory-file}; attribute names as docs/OPERATIONS.md lists them).
 */
record SimulatedNode(String name, String inventory) {

  /** Two NVIDIA L4s with 24Gi each. */
  static SimulatedNode twoL4s(String name) {
    return new SimulatedNode(name, "devices:\n"
        + gpu(name, 0, "NVIDIA L4", "Ada Lovelace", "8.9.0", "24Gi", "0000:3b:00.0", "pci0000:3a")
        + gpu(name, 1, "NVIDIA L4", "Ada Lovelace", "8.9.0", "24Gi", "0000:5e:00.0", "pci0000:5d"));
  }

  /** One NVIDIA A100 with 40Gi. */
  static SimulatedNode oneA100(String name) {
    return new SimulatedNode(name, "devices:\n"
        + gpu(name, 0, "NVIDIA A100-SXM4-40GB", "Ampere", "8.0.0", "40Gi", "0000:07:00.0",
            "pci0000:00"));
  }

  /** {@code count} NVIDIA L4s with 24Gi each, on distinct PCIe roots. */
  static SimulatedNode l4s(String name, int count) {
    StringBuilder devices = new StringBuilder("devices:\n");
    for (int i = 0; i < count; i++) {
      devices.append(gpu(name, i, "NVIDIA L4", "Ada Lovelace", "8.9.0", "24Gi",
          String.format("0000:%02x:00.0", 0x10 + 2 * i), String.format("pci0000:%02x", 0x0f + 2 * i)));
    }
    return new SimulatedNode(name, devices.toString());
  }

  /**
   * For a real node ({@link RealNode}): NVIDIA L4s whose CDI edits a container can see, one
   * device node of this machine each ({@code deviceNodes}, harmless ones such as
   * {@code /dev/fuse}: the node has no GPU) and {@code SIMULATED_GPU_UUID} (the device's uuid).
   */
  static SimulatedNode l4sWithDeviceNodes(String name, String... deviceNodes) {
    StringBuilder devices = new StringBuilder("devices:\n");
    for (int i = 0; i < deviceNodes.length; i++) {
      devices.append(gpu(name, i, "NVIDIA L4", "Ada Lovelace", "8.9.0", "24Gi",
          String.format("0000:%02x:00.0", 0x10 + 2 * i), String.format("pci0000:%02x", 0x0f + 2 * i)))
          .append("  deviceNodes: [").append(deviceNodes[i]).append("]\n")
          .append("  env: {SIMULATED_GPU_UUID: ").append(uuid(name, i)).append("}\n");
    }
    return new SimulatedNode(name, devices.toString());
  }

  /** For a real node: one A100 with 40Gi (as {@link #oneA100}), its CDI edits as above. */
  static SimulatedNode a100WithDeviceNode(String name, String deviceNode) {
    return new SimulatedNode(name, "devices:\n"
        + gpu(name, 0, "NVIDIA A100-SXM4-40GB", "Ampere", "8.0.0", "40Gi", "0000:07:00.0",
            "pci0000:00")
        + "  deviceNodes: [" + deviceNode + "]\n"
        + "  env: {SIMULATED_GPU_UUID: " + uuid(name, 0) + "}\n");
  }

  /** The uuid attribute of device {@code index} of {@code node}. */
  static String uuid(String node, int index) {
    return "GPU-" + java.util.UUID.nameUUIDFromBytes((node + "/" + index).getBytes());
  }

  private static String gpu(String node, int index, String product, String architecture, String cuda,
      String memory, String busId, String pcieRoot) {
    return "- name: gpu-" + index + "\n"
        + "  attributes:\n"
        + "    type: gpu\n"
        + "    index: " + index + "\n"
        + "    minor: " + index + "\n"
        + "    uuid: " + uuid(node, index) + "\n"
        + "    productName: " + product + "\n"
        + "    architecture: " + architecture + "\n"
        + "    driverVersion: {version: 550.127.5}\n"
        + "    cudaComputeCapability: {version: " + cuda + "}\n"
        + "    migEnabled: false\n"
        + "    resource.kubernetes.io/pciBusID: \"" + busId + "\"\n"
        + "    resource.kubernetes.io/pcieRoot: " + pcieRoot + "\n"
        + "  capacity: {memory: " + memory + "}\n";
  }
}
