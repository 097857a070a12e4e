package io.kdra.it;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.resource.v1.ResourceClaim;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.kdra.it.controlplane.ControlPlane;
import io.kdra.it.nodes.RealNode;
import io.kdra.it.nodes.SimulatedNode;
import io.kdra.it.services.Dra;
import io.kdra.it.services.KdraStack;
import io.kdra.it.services.RealPods;
import io.kdra.it.services.Stack;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * MPS on a real node (the real kubelet and containerd, {@link RealNode}; one L4 in four shares):
 * the driver runs with {@code kdra.device-driver.sharing.strategy=mps} on simulated hardware, so
 * its control daemon commands are recorded in its log, not run. Each MPS claim's container gets,
 * through the claim's CDI spec, the GPU's pipe directory at {@code /tmp/nvidia-mps}, its log
 * directory and the node's {@code <mps-root>/shm} at {@code /dev/shm}, in place of the one CRI
 * gives every container: MPS clients reach the daemon's shared memory there. Two pods with claims
 * for one share each see the same {@code /dev/shm}; the daemon is told to quit once, when the last
 * claim is unprepared.
 */
@ExtendWith(ControlPlane.class)
class MpsRealNodeIT {

  private static final String NODE = "rn-mps";
  private static final String CLASS = "mps-gpu";
  private static final String QUIT = "nvidia-cuda-mps-control <<< quit";
  private static final String START = "nvidia-cuda-mps-control -d";

  @RegisterExtension
  static final KdraStack STACK =
      KdraStack.realNodes(SimulatedNode.l4sWithDeviceNodes(NODE, "/dev/fuse"))
          .withProperties(
              Map.of(
                  "kdra.device-driver.sharing.strategy",
                  "mps",
                  "kdra.device-driver.sharing.shares",
                  "4"));

  private static Stack stack;
  private static KubernetesClient client;

  @BeforeAll
  static void slicesPublished() {
    stack = STACK.get();
    client = stack.client;
    stack.createClusterScoped(
        Dra.gpuClass(
            CLASS,
            "device.allowMultipleAllocations && device.attributes[\""
                + Stack.DRIVER
                + "\"].sharing == \"MPS\""));
    await()
        .atMost(Duration.ofSeconds(60))
        .untilAsserted(() -> assertThat(Dra.publishedDevices(client, NODE)).isEqualTo(1));
  }

  @Test
  void twoPodsSharingAGpuThroughMpsSeeThePipesAndOneSharedDevShm() throws Exception {
    String ns = stack.namespace;
    Path mpsRoot = stack.nodes.mpsRoot(NODE);
    Path shm = Files.createDirectories(mpsRoot.resolve("shm"));
    Files.writeString(shm.resolve("from-host"), "written before the pods start\n");
    client.resource(Dra.template(ns, "gpu-share", CLASS, 1)).create();

    Pod first =
        client.resource(showingMps(Dra.podWithTemplate(ns, "client-a", "gpu-share"))).create();
    List<String> firstLog = RealPods.awaitListed(stack, first);
    System.out.println("[MpsRealNodeIT] client-a saw:\n" + String.join("\n", firstLog));
    ResourceClaim firstClaim = Dra.claimOf(client, first, "gpu");
    assertThat(Dra.devices(firstClaim)).containsExactly(NODE + "/gpu-0");
    assertThat(firstLog)
        .contains(
            "CUDA_MPS_PIPE_DIRECTORY=/tmp/nvidia-mps",
            "CUDA_MPS_LOG_DIRECTORY=/var/log/nvidia-mps",
            "CUDA_MPS_ACTIVE_THREAD_PERCENTAGE=25",
            "CUDA_MPS_PINNED_DEVICE_MEM_LIMIT=0=6144M",
            "shm: from-host",
            "pipe: /tmp/nvidia-mps");
    assertThat(mountPoints(firstLog)).contains("/tmp/nvidia-mps", "/var/log/nvidia-mps");
    // the claim's bind in place of the sandbox's shm (a tmpfs): the only mount at /dev/shm
    assertThat(mounts(firstLog, "/dev/shm")).hasSize(1).noneMatch(m -> m.contains(" tmpfs "));
    // what the container wrote went to the node's directories: the binds, not copies
    assertThat(shm.resolve("from-client-a")).exists();
    assertThat(mpsRoot.resolve("gpu-0/pipe/from-client-a")).exists();

    Pod second =
        client.resource(showingMps(Dra.podWithTemplate(ns, "client-b", "gpu-share"))).create();
    List<String> secondLog = RealPods.awaitListed(stack, second);
    ResourceClaim secondClaim = Dra.claimOf(client, second, "gpu");
    assertThat(secondClaim.getMetadata().getUid()).isNotEqualTo(firstClaim.getMetadata().getUid());
    assertThat(Dra.devices(secondClaim)).containsExactly(NODE + "/gpu-0");
    assertThat(secondLog).contains("shm: from-host", "shm: from-client-a", "pipe: /tmp/nvidia-mps");
    assertThat(driverLogLines(START)).isEqualTo(1);

    // the first claim unprepared: the daemon stays for the second
    client.resource(first).delete();
    await()
        .atMost(RealPods.POD_TIMEOUT)
        .untilAsserted(
            () -> {
              assertThat(Dra.get(client, first)).isNull();
              assertThat(RealPods.spec(stack, NODE, firstClaim)).doesNotExist();
            });
    assertThat(driverLogLines(QUIT)).isZero();

    client.resource(second).delete();
    await()
        .atMost(RealPods.POD_TIMEOUT)
        .untilAsserted(
            () -> {
              assertThat(Dra.get(client, second)).isNull();
              assertThat(RealPods.specFiles(stack, NODE)).isEmpty();
              assertThat(driverLogLines(QUIT)).isEqualTo(1);
            });
    assertThat(driverLogLines(START)).isEqualTo(1);
  }

  /**
   * The pod on the real node: busybox printing its environment, what {@code /dev/shm} holds, that
   * {@code /tmp/nvidia-mps} exists, and its mounts; then writing a file into both, so that the test
   * and the next pod see them.
   */
  private static Pod showingMps(Pod pod) {
    Pod p = RealPods.showingDevices(pod);
    String name = pod.getMetadata().getName();
    p.getSpec()
        .getContainers()
        .get(0)
        .setCommand(
            List.of(
                "sh",
                "-c",
                "env | sort; ls /dev/shm | sed 's/^/shm: /'; ls -d /tmp/nvidia-mps | sed"
                    + " 's/^/pipe: /'; sed 's/^/mount: /' /proc/mounts; touch /dev/shm/from-"
                    + name
                    + " /tmp/nvidia-mps/from-"
                    + name
                    + "; echo "
                    + RealPods.LISTED
                    + "; exec sleep 2147483647"));
    return p;
  }

  /** The mount points in a {@link #showingMps} log. */
  private static List<String> mountPoints(List<String> log) {
    return log.stream().filter(l -> l.startsWith("mount: ")).map(l -> l.split(" ")[2]).toList();
  }

  /** The lines of a {@link #showingMps} log for the mounts at {@code mountPoint}. */
  private static List<String> mounts(List<String> log, String mountPoint) {
    return log.stream()
        .filter(l -> l.startsWith("mount: ") && l.split(" ")[2].equals(mountPoint))
        .toList();
  }

  /** How many commands containing {@code text} the node's driver recorded. */
  private static long driverLogLines(String text) throws IOException {
    return Files.readAllLines(stack.services.process("device-driver-" + NODE).log).stream()
        .filter(l -> l.contains("simulated hardware, not running:") && l.contains(text))
        .count();
  }
}
