package io.kdra.it;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.resource.v1.ResourceClaim;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.kdra.it.chart.KdraChart;
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
 * claim is unprepared. A driver restart with a claim prepared starts the daemon, which died with
 * the driver, again for the claims that follow. A second namespace's MPS pod waits until the first
 * namespace's claim is gone.
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
    long startsBefore = driverLogLines(START);
    long quitsBefore = driverLogLines(QUIT);

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
    // the daemon enforces the share too, whatever the container does with its variables
    assertThat(driverLogLines("<<< set_default_active_thread_percentage 25")).isPositive();
    assertThat(driverLogLines("<<< set_default_device_pinned_mem_limit 0 6144M")).isPositive();
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
    assertThat(driverLogLines(START)).isEqualTo(startsBefore + 1);

    // the first claim unprepared: the daemon stays for the second
    client.resource(first).delete();
    await()
        .atMost(RealPods.POD_TIMEOUT)
        .untilAsserted(
            () -> {
              assertThat(Dra.get(client, first)).isNull();
              assertThat(RealPods.spec(stack, NODE, firstClaim)).doesNotExist();
            });
    assertThat(driverLogLines(QUIT)).isEqualTo(quitsBefore);

    client.resource(second).delete();
    await()
        .atMost(RealPods.POD_TIMEOUT)
        .untilAsserted(
            () -> {
              assertThat(Dra.get(client, second)).isNull();
              assertThat(RealPods.specFiles(stack, NODE)).isEmpty();
              assertThat(driverLogLines(QUIT)).isEqualTo(quitsBefore + 1);
            });
    assertThat(driverLogLines(START)).isEqualTo(startsBefore + 1);
  }

  /**
   * The driver is killed while an MPS claim is prepared, and started again (a driver pod's
   * restart). The daemon died with it and left its {@code control} socket file on the host path:
   * the restarted driver starts the daemon again for the prepared claim, a second claim on the GPU
   * is prepared on that daemon, and both unprepare, the last one telling the daemon to quit.
   */
  @Test
  void aDriverRestartWithAPreparedMpsClaimStartsTheDaemonAgainForTheNextClaims() throws Exception {
    String ns = stack.namespace;
    Path control = stack.nodes.mpsRoot(NODE).resolve("gpu-0/pipe/control");
    client.resource(Dra.template(ns, "gpu-share-restart", CLASS, 1)).create();
    long startsBefore = driverLogLines(START);
    long quitsBefore = driverLogLines(QUIT);

    Pod first =
        client
            .resource(showingMps(Dra.podWithTemplate(ns, "restart-a", "gpu-share-restart")))
            .create();
    RealPods.awaitListed(stack, first);
    ResourceClaim firstClaim = Dra.claimOf(client, first, "gpu");
    assertThat(Dra.devices(firstClaim)).containsExactly(NODE + "/gpu-0");
    assertThat(driverLogLines(START)).isEqualTo(startsBefore + 1);
    assertThat(control).exists();

    stack.services.crashAndRestart("device-driver-" + NODE);
    // the daemon died with the old process; the new one starts it again for the prepared claim
    assertThat(driverLogLines(START)).isEqualTo(startsBefore + 2);
    assertThat(driverLogLines(QUIT)).isEqualTo(quitsBefore);

    Pod second =
        client
            .resource(showingMps(Dra.podWithTemplate(ns, "restart-b", "gpu-share-restart")))
            .create();
    List<String> secondLog = RealPods.awaitListed(stack, second);
    ResourceClaim secondClaim = Dra.claimOf(client, second, "gpu");
    assertThat(Dra.devices(secondClaim)).containsExactly(NODE + "/gpu-0");
    assertThat(secondLog).contains("CUDA_MPS_PIPE_DIRECTORY=/tmp/nvidia-mps");
    assertThat(driverLogLines(START))
        .as("the restarted daemon serves it")
        .isEqualTo(startsBefore + 2);

    client.resource(first).delete();
    client.resource(second).delete();
    await()
        .atMost(RealPods.POD_TIMEOUT)
        .untilAsserted(
            () -> {
              assertThat(Dra.get(client, first)).isNull();
              assertThat(Dra.get(client, second)).isNull();
              assertThat(RealPods.specFiles(stack, NODE)).isEmpty();
              assertThat(driverLogLines(QUIT)).isEqualTo(quitsBefore + 1);
            });
    assertThat(control).doesNotExist();
  }

  /**
   * MPS claims of two namespaces on one node: the second namespace's pod is refused while the
   * first's MPS claim is prepared (its clients would share the node's /dev/shm with the first's),
   * with the reason in its FailedPrepareDynamicResources Event, and starts once that claim is
   * unprepared.
   */
  @Test
  void anMpsPodOfASecondNamespaceWaitsUntilTheFirstNamespacesClaimIsGone() throws Exception {
    String ns = stack.namespace;
    // the stack's second namespace where pods can run (its ServiceAccount and CA are published)
    String other = KdraChart.NAMESPACE;
    client.resource(Dra.template(ns, "gpu-share-tenant", CLASS, 1)).create();
    client.resource(Dra.template(other, "gpu-share-tenant", CLASS, 1)).create();
    Pod first =
        client
            .resource(showingMps(Dra.podWithTemplate(ns, "tenant-a", "gpu-share-tenant")))
            .create();
    RealPods.awaitListed(stack, first);

    Pod second =
        client
            .resource(showingMps(Dra.podWithTemplate(other, "tenant-b", "gpu-share-tenant")))
            .create();
    await()
        .atMost(RealPods.POD_TIMEOUT)
        .untilAsserted(
            () ->
                assertThat(
                        client.v1().events().inNamespace(other).list().getItems().stream()
                            .filter(
                                e ->
                                    "Pod".equals(e.getInvolvedObject().getKind())
                                        && "tenant-b".equals(e.getInvolvedObject().getName())))
                    .anySatisfy(
                        e -> {
                          assertThat(e.getReason()).isEqualTo("FailedPrepareDynamicResources");
                          assertThat(e.getMessage())
                              .contains("MPS on this node serves claim " + ns + "/")
                              .contains("not of namespace " + other)
                              .contains("mps-across-namespaces");
                        }));
    assertThat(Dra.get(client, second).getStatus().getPhase()).isEqualTo("Pending");

    client.resource(first).delete();
    List<String> secondLog = RealPods.awaitListed(stack, second);
    assertThat(secondLog).contains("pipe: /tmp/nvidia-mps");

    client.resource(second).delete();
    await()
        .atMost(RealPods.POD_TIMEOUT)
        .untilAsserted(
            () -> {
              assertThat(Dra.get(client, first)).isNull();
              assertThat(Dra.get(client, second)).isNull();
              assertThat(RealPods.specFiles(stack, NODE)).isEmpty();
            });
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
