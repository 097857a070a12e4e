package io.kdra.it.demo;

import io.kdra.it.nodes.SimulatedNode;
import io.kdra.it.support.TestFiles;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.stream.Stream;

/**
 * The demo's two nodes with simulated GPUs (node-a: two 24Gi L4s, node-b: one 40Gi A100), on real
 * nodes and on test kubelets alike, and what stays of a real node's directory when it stops.
 */
final class DemoNodes {

  private DemoNodes() {}

  /**
   * Harmless device nodes of this machine that stand in for the simulated GPUs' on real nodes (the
   * machine has no GPU): a container given one through CDI lists it in its /dev.
   */
  private static final List<String> STAND_IN_DEVICE_NODES =
      List.of(
          "/dev/fuse",
          "/dev/vsock",
          "/dev/hwrng",
          "/dev/loop-control",
          "/dev/userfaultfd",
          "/dev/cpu_dma_latency");

  /** For test kubelets: no container runs, so no device node is needed. */
  static List<SimulatedNode> simulated() {
    return List.of(SimulatedNode.twoL4s("node-a"), SimulatedNode.oneA100("node-b"));
  }

  /**
   * For real nodes: the same simulated GPUs, each with a device node of this machine and its uuid
   * in its CDI edits, so that the containers show that they got them.
   */
  static List<SimulatedNode> withDeviceNodes() {
    List<String> nodes =
        STAND_IN_DEVICE_NODES.stream().filter(n -> Files.exists(Path.of(n))).limit(3).toList();
    if (nodes.size() < 3) {
      throw new IllegalStateException(
          "real nodes stand in three of "
              + STAND_IN_DEVICE_NODES
              + " for the simulated GPUs' device nodes; this machine has "
              + nodes
              + ": run bin/demo --test-kubelet");
    }
    return List.of(
        SimulatedNode.l4sWithDeviceNodes("node-a", nodes.get(0), nodes.get(1)),
        SimulatedNode.a100WithDeviceNode("node-b", nodes.get(2)));
  }

  /**
   * The real nodes' directories under {@code base}, but for their logs (kubelet, containerd,
   * containers'): their configuration holds kubeconfigs, the rest is runtime state.
   */
  static void removeAllButLogs(Path base) {
    if (!Files.isDirectory(base)) {
      return;
    }
    try (Stream<Path> nodes = Files.list(base)) {
      for (Path node : nodes.toList()) {
        if (!Files.isDirectory(node)) {
          TestFiles.deleteRecursively(node);
          continue;
        }
        try (Stream<Path> entries = Files.list(node)) {
          for (Path e : entries.toList()) {
            if (!Demo.KEPT_NODE_FILES.contains(e.getFileName().toString())) {
              TestFiles.deleteRecursively(e);
            }
          }
        }
      }
    } catch (IOException | UncheckedIOException e) {
      System.out.println("[demo] removing the real nodes' files: " + e);
    }
  }
}
