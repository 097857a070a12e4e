package io.kdra.it;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.fabric8.kubernetes.api.model.resource.v1.ResourceClaim;
import io.fabric8.kubernetes.client.Config;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientBuilder;
import io.kdra.it.controlplane.ControlPlane;
import io.kdra.it.demo.Demo;
import io.kdra.it.demo.DemoReport;
import io.kdra.it.karpenter.KarpenterKwok;
import io.kdra.it.karpenter.ScaleOutScenario;
import io.kdra.it.karpenter.ScaleOutWatch;
import io.kdra.it.nodes.NodeCgroups;
import io.kdra.it.nodes.RealNode;
import io.kdra.it.nodes.SimulatedNode;
import io.kdra.it.support.HostLeaks;
import io.kdra.it.support.HostSnapshot;
import io.kdra.it.support.ServiceProcess;
import io.kdra.it.support.TestFiles;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;

/**
 * {@code bin/demo} as a newcomer runs it. As root (CI) on real nodes: the report shows the pods
 * Running on their nodes with their devices and what their containers saw through CDI, the
 * services' ports and the kubectl to use; then, as a script runs it ({@code bin/demo &}), stopped
 * with Ctrl-C's signal: SIGINT to the demo's JVM alone (a terminal would signal the children too;
 * here the demo must stop them itself). It exits promptly, nothing it started still runs (services,
 * kube-apiserver, etcd, their children, and every process of the real nodes' cgroups: kubelet,
 * containerd, shims, containers, and the processes that held their mount namespaces), no cgroup of
 * its nodes is left, of their directories only the logs stay, and its temporary directory is gone
 * with all it held (Helm's library, the control plane's keys, etcd's data, the services' caches),
 * as are its kubeconfigs, tokens and sockets. Not root, the same on test kubelets. A second test
 * runs {@code --once --test-kubelet}: the report, no kubeconfig. A third runs {@code --scale-out}
 * and watches Karpenter's nodes come and go through the demo's kubeconfig. About two minutes on two
 * cores for the first two, most of it the demos' start, and three for the third; it uses no control
 * plane of the test run's.
 */
class DemoIT {

  private static final Duration STARTUP = Duration.ofSeconds(300);

  /** Services get 10 s of SIGTERM before SIGKILL, the nodes' kubelets 15 s; the rest is quick. */
  private static final long STOP_SECONDS = 30;

  /** Up to the scale-out story's end: its start, then Karpenter's launches and removals. */
  private static final Duration SCALE_OUT = Duration.ofSeconds(900);

  private final Path root = ServiceProcess.moduleDir("bin").getParent();
  private final Path kubeconfig = root.resolve("target/demo-kubeconfig.yaml");
  private final Path it = root.resolve("integration-tests/target");

  @Test
  void ctrlCStopsEverythingAndLeavesNothingBehind() throws Exception {
    boolean real = RealNode.runsAsRoot();
    Path log = logDir().resolve("demo-it.log");
    // bin/demo makes its own directory under TMPDIR: an empty one of this test's, to look into
    Path tmp = Files.createTempDirectory(logDir(), "demo-tmp");
    HostSnapshot before = HostSnapshot.take();
    // as a script starts it: in the background of a non-interactive shell, which starts it with
    // SIGINT ignored (POSIX), a disposition the JVM would keep
    Process shell = demo(tmp, log, "\"$0\" & wait $!");
    ProcessHandle demo =
        await()
            .atMost(Duration.ofSeconds(30))
            .until(() -> shell.children().findFirst().orElse(null), java.util.Objects::nonNull);
    try {
      await()
          .atMost(STARTUP)
          .pollInterval(Duration.ofMillis(500))
          .until(
              () -> {
                assertThat(demo.isAlive()).as("demo running; its output:\n%s", read(log)).isTrue();
                return read(log).contains(Demo.RUNNING);
              });
      String output = read(log);
      assertReport(output, real);
      assertThat(output)
          .as("while it runs: the kubeconfig")
          .contains(
              "  export KUBECONFIG=" + kubeconfig,
              "  alias kubectl=" + ControlPlane.kubectl() + "   # v" + ControlPlane.VERSION);
      if (!real) {
        assertThat(output).contains(DemoReport.NOT_ROOT);
      }
      List<ProcessHandle> started = demo.descendants().toList();
      assertThat(started).as("the demo's processes").hasSizeGreaterThanOrEqualTo(6);
      // the real nodes' processes: containers and shims are no descendants of the demo
      List<String> cgroups = NodeCgroups.ownedBy(demo.pid());
      List<ProcessHandle> nodeProcesses =
          cgroups.stream()
              .flatMap(c -> NodeCgroups.processesOf(c).stream())
              .distinct()
              .flatMap(pid -> ProcessHandle.of(pid).stream())
              .toList();
      if (real) {
        assertThat(cgroups).as("the real nodes' cgroups").hasSize(2);
        assertThat(nodeProcesses)
            .as("kubelet, containerd, shims, containers, holders")
            .hasSizeGreaterThanOrEqualTo(2 * 3 + 2 * 2);
      }
      HostSnapshot during = HostSnapshot.take();
      HostLeaks.RunTrace run =
          HostSnapshot.trace(demo, nodeProcesses.stream().map(ProcessHandle::pid).toList(), "");
      List<Path> demoDirs = list(tmp);
      assertThat(demoDirs)
          .singleElement()
          .satisfies(
              d -> {
                assertThat(d.getFileName().toString()).startsWith("kdra-demo.");
                assertThat(list(d)).as("what the demo keeps in %s", d).isNotEmpty();
              });
      assertThat(kubeconfig).exists();

      long signalled = System.nanoTime();
      new ProcessBuilder("kill", "-INT", Long.toString(demo.pid())).inheritIO().start().waitFor();
      // the shell waits for the demo and exits with its status
      assertThat(shell.waitFor(STOP_SECONDS, TimeUnit.SECONDS))
          .as("the demo exits within %d s of SIGINT; its output:\n%s", STOP_SECONDS, read(log))
          .isTrue();
      System.out.printf(
          "[it] demo stopped %d ms after SIGINT, exit status %d%n",
          (System.nanoTime() - signalled) / 1_000_000, shell.exitValue());
      assertThat(shell.exitValue()).as("128 + SIGINT").isEqualTo(130);
      assertThat(read(log))
          .contains("[demo]", "stopped")
          .as("a stop without errors")
          .doesNotContain("[demo] stopping the", "[demo] removing");
      // killed processes whose parent died first are reaped by init a moment later: wait for
      // that state rather than look once
      await()
          .atMost(Duration.ofSeconds(30))
          .untilAsserted(
              () -> {
                assertThat(started)
                    .as("still running after the demo stopped")
                    .noneMatch(ProcessHandle::isAlive);
                assertThat(nodeProcesses)
                    .as("the real nodes' processes after the demo stopped")
                    .noneMatch(ProcessHandle::isAlive);
              });
      assertThat(NodeCgroups.ownedBy(demo.pid())).as("the real nodes' cgroups").isEmpty();
      assertThat(Files.readString(Path.of("/proc/self/mountinfo")))
          .as("mounts of the nodes' directories")
          .doesNotContain(it.resolve("rn").toString());
      assertLeftOnlyLogs();
      assertThat(list(tmp)).as("left in the temporary directory").isEmpty();
      assertThat(kubeconfig).doesNotExist();
      assertThat(it.resolve("n")).as("the nodes' tokens and sockets").doesNotExist();
      assertThat(it.resolve("it-kubeconfigs/demo")).doesNotExist();
      assertThat(HostLeaks.find(before, during, HostSnapshot.take(), run))
          .as("left on the machine after the demo stopped")
          .isEmpty();
      if (real) {
        for (String node : List.of("node-a", "node-b")) {
          // the kubelet's words for the host's iptables chains and its localnet DROP rule, which
          // no run removes (and which a later look cannot tell from those of earlier runs)
          assertThat(read(it.resolve("rn").resolve(node).resolve("logs/kubelet.log")))
              .as("the machine's firewall, written by the kubelet of %s", node)
              .doesNotContain("Initialized iptables rules");
        }
      }
    } finally {
      shell.descendants().forEach(ProcessHandle::destroyForcibly);
      shell.destroyForcibly();
      TestFiles.deleteRecursively(tmp);
    }
  }

  /**
   * {@code --once --test-kubelet}: the test kubelets as asked, the report, and no kubeconfig, which
   * it would delete right away; exit status 0 and nothing left in its directory.
   */
  @Test
  void onceOnTestKubeletsReportsAndStopsWithoutAKubeconfig() throws Exception {
    Path log = logDir().resolve("demo-it-once.log");
    Path tmp = Files.createTempDirectory(logDir(), "demo-tmp");
    Process shell = demo(tmp, log, "exec \"$0\" --once --test-kubelet");
    try {
      assertThat(shell.waitFor(STARTUP.toSeconds(), TimeUnit.SECONDS))
          .as("bin/demo --once exits; its output:\n%s", read(log))
          .isTrue();
      String output = read(log);
      assertThat(shell.exitValue()).as("exit status; output:\n%s", output).isZero();
      assertReport(output, false);
      assertThat(output)
          .contains(DemoReport.ONCE)
          .doesNotContain("KUBECONFIG", Demo.RUNNING, DemoReport.NOT_ROOT, "[real-node]");
      assertThat(kubeconfig).doesNotExist();
      assertThat(list(tmp)).as("left in the temporary directory").isEmpty();
    } finally {
      shell.descendants().forEach(ProcessHandle::destroyForcibly);
      shell.destroyForcibly();
      TestFiles.deleteRecursively(tmp);
    }
  }

  /**
   * {@code bin/demo --scale-out} in the background of a shell, watched through the kubeconfig it
   * writes as soon as its API server is up: Karpenter launches three {@code a100-x1} nodes and the
   * Deployment's three pods are bound one to each, each claim holding its node's A100 for the
   * template's first subrequest; then two {@code l4-x2} nodes, each with one new pod whose claim
   * holds both L4s of that node for the second; when it runs, no Karpenter node, pod or claim is
   * left. SIGTERM then stops everything (Karpenter too) with exit status 143, and nothing stays:
   * its processes, temporary directory (Karpenter's files in it), kubeconfigs, the nodes' tokens
   * and sockets. (No look at the host's cgroups, mounts and links: test kubelets make none, and
   * other runs on the machine make theirs meanwhile.)
   */
  @Test
  void scaleOutLaunchesNodesByPriorityAndRemovesThemAll() throws Exception {
    Path log = logDir().resolve("demo-it-scale-out.log");
    Path tmp = Files.createTempDirectory(logDir(), "demo-tmp");
    // (one an earlier run left, killed, would name its API server, gone)
    Files.deleteIfExists(kubeconfig);
    Process shell = demo(tmp, log, "\"$0\" --scale-out & wait $!");
    ProcessHandle demo =
        await()
            .atMost(Duration.ofSeconds(30))
            .until(() -> shell.children().findFirst().orElse(null), java.util.Objects::nonNull);
    try {
      await()
          .atMost(STARTUP)
          .pollInterval(Duration.ofMillis(200))
          .until(
              () -> {
                assertThat(demo.isAlive()).as("demo running; its output:\n%s", read(log)).isTrue();
                return Files.exists(kubeconfig);
              });
      List<ProcessHandle> started;
      try (KubernetesClient client =
              new KubernetesClientBuilder()
                  .withConfig(Config.fromKubeconfig(Files.readString(kubeconfig)))
                  .build();
          ScaleOutWatch watch = new ScaleOutWatch(client, "demo")) {
        await()
            .atMost(SCALE_OUT)
            .pollInterval(Duration.ofMillis(500))
            .until(
                () -> {
                  assertThat(demo.isAlive())
                      .as("demo running; its output:\n%s", read(log))
                      .isTrue();
                  return read(log).contains(Demo.RUNNING);
                });
        assertThat(watch.nodes().values())
            .as("the instance types of the nodes Karpenter launched")
            .containsExactlyInAnyOrder(
                ScaleOutScenario.A100_TYPE,
                ScaleOutScenario.A100_TYPE,
                ScaleOutScenario.A100_TYPE,
                ScaleOutScenario.L4_TYPE,
                ScaleOutScenario.L4_TYPE);
        assertThat(watch.bindings()).as("pod -> node").hasSize(5);
        assertThat(watch.bindings().values())
            .as("one pod per node, each a node Karpenter launched")
            .doesNotHaveDuplicates()
            .allMatch(watch.nodes()::containsKey);
        assertThat(watch.allocations().keySet())
            .as("the pods whose claim was allocated and reserved")
            .isEqualTo(watch.bindings().keySet());
        watch
            .bindings()
            .forEach(
                (pod, node) -> {
                  boolean a100 = watch.nodes().get(node).equals(ScaleOutScenario.A100_TYPE);
                  ScaleOutWatch.Allocation allocation = watch.allocations().get(pod);
                  assertThat(allocation.devices())
                      .as("devices of %s on %s", pod, node)
                      .hasSize(a100 ? 1 : 2)
                      .allMatch(d -> d.startsWith(node + "/"));
                  assertThat(allocation.requests())
                      .as("requests of %s on %s", pod, node)
                      .containsOnly(
                          a100 ? ScaleOutScenario.A100_REQUEST : ScaleOutScenario.L4_REQUEST);
                });
        assertThat(client.nodes().list().getItems()).as("nodes after scaling to 0").isEmpty();
        assertThat(client.pods().inNamespace("demo").list().getItems()).isEmpty();
        assertThat(client.resources(ResourceClaim.class).inNamespace("demo").list().getItems())
            .isEmpty();
        started = demo.descendants().toList();
        assertThat(started)
            .as("Karpenter runs until the demo stops")
            .anyMatch(
                p ->
                    p.info()
                        .command()
                        .orElse("")
                        .endsWith(KarpenterKwok.binary().getFileName().toString()));
      }
      assertThat(read(log))
          .contains(DemoReport.SCALE_OUT_NODES, "  export KUBECONFIG=" + kubeconfig);

      new ProcessBuilder("kill", "-TERM", Long.toString(demo.pid())).inheritIO().start().waitFor();
      assertThat(shell.waitFor(STOP_SECONDS, TimeUnit.SECONDS))
          .as("the demo exits within %d s of SIGTERM; its output:\n%s", STOP_SECONDS, read(log))
          .isTrue();
      assertThat(shell.exitValue()).as("128 + SIGTERM").isEqualTo(143);
      assertThat(read(log))
          .contains("[demo]", "stopped")
          .as("a stop without errors")
          .doesNotContain("[demo] failed", "[demo] stopping the", "[demo] removing");
      await()
          .atMost(Duration.ofSeconds(30))
          .untilAsserted(
              () ->
                  assertThat(started)
                      .as("still running after the demo stopped")
                      .noneMatch(ProcessHandle::isAlive));
      assertThat(list(tmp)).as("left in the temporary directory").isEmpty();
      assertThat(kubeconfig).doesNotExist();
      assertThat(it.resolve("n")).as("the nodes' tokens and sockets").doesNotExist();
      assertThat(it.resolve("it-kubeconfigs/demo")).doesNotExist();
    } finally {
      shell.descendants().forEach(ProcessHandle::destroyForcibly);
      shell.destroyForcibly();
      TestFiles.deleteRecursively(tmp);
    }
  }

  /** bin/demo through {@code bash -c script} ($0: bin/demo), with its own TMPDIR. */
  private Process demo(Path tmp, Path log, String script) throws IOException {
    ProcessBuilder builder =
        new ProcessBuilder("bash", "-c", script, root.resolve("bin/demo").toString())
            .directory(root.toFile())
            .redirectErrorStream(true)
            .redirectOutput(log.toFile());
    builder.environment().put("TMPDIR", tmp.toString());
    return builder.start();
  }

  /** {@link #assertPods}, and the services' ports. */
  private static void assertReport(String output, boolean real) {
    assertPods(output, real);
    assertThat(output)
        .contains("Services (each on one port: metrics at /q/metrics, health at /q/health):")
        .containsPattern("\\n  claim-controller +http://127\\.0\\.0\\.1:\\d+\\n");
  }

  /**
   * The seed's outcome, on either cluster: trainer on node-b's A100, inference on node-a's two L4s,
   * too-big pending with the allocator's reason; on real nodes each container saw its devices' env
   * vars and device nodes.
   */
  static void assertPods(String output, boolean real) {
    assertThat(output)
        .contains(DemoReport.HEADER)
        .containsPattern(
            "\\ndemo/trainer +node-b +Running +gpu: node-b/gpu-0\\n +CDI k8s\\.gpu\\.kdra\\.io/claim=")
        .containsPattern(
            "\\ndemo/inference +node-a +Running +accelerator/nvidia-l4-x2:"
                + " node-a/gpu-0, node-a/gpu-1\\n")
        .containsPattern(
            "\\ndemo/too-big +- +Pending +Unschedulable: claim too-big-gpu-\\w+:"
                + " request \"gpu\": 0 devices in class \"gpu-80gi\"");
    if (real) {
      assertThat(block(output, "demo/trainer"))
          .contains(
              "saw KDRA_DEVICE_0=gpu-0", "SIMULATED_GPU_UUID=" + SimulatedNode.uuid("node-b", 0))
          .containsPattern(" /dev/\\w");
      String inference = block(output, "demo/inference");
      assertThat(inference).contains("saw KDRA_DEVICE_0=gpu-0", " KDRA_DEVICE_1=gpu-1");
      assertThat(inference.split(" /dev/", -1))
          .as("its two device nodes in:\n%s", inference)
          .hasSize(3);
    } else {
      assertThat(output).doesNotContain(" saw ");
    }
  }

  /** The report's lines of {@code pod}: its own and those indented under it. */
  private static String block(String output, String pod) {
    StringBuilder b = new StringBuilder();
    boolean in = false;
    for (String line : output.split("\n")) {
      if (line.startsWith(pod + " ")) {
        in = true;
      } else if (!line.startsWith(" ")) {
        in = false;
      }
      if (in) {
        b.append(line).append('\n');
      }
    }
    assertThat(b).as("the report's lines of %s in:\n%s", pod, output).isNotEmpty();
    return b.toString();
  }

  /** Of the real nodes' directories only their logs stay (the configuration holds a key). */
  private void assertLeftOnlyLogs() {
    Path nodes = it.resolve("rn");
    if (!Files.isDirectory(nodes)) {
      return;
    }
    for (Path node : list(nodes)) {
      assertThat(list(node))
          .as("left of real node %s", node)
          .allMatch(p -> Demo.KEPT_NODE_FILES.contains(p.getFileName().toString()));
    }
  }

  private static Path logDir() throws IOException {
    return Files.createDirectories(Path.of("target", "it-logs").toAbsolutePath());
  }

  private static String read(Path file) throws IOException {
    return Files.exists(file) ? Files.readString(file) : "";
  }

  private static List<Path> list(Path dir) {
    try (Stream<Path> files = Files.list(dir)) {
      return files.toList();
    } catch (IOException e) {
      throw new java.io.UncheckedIOException(e);
    }
  }
}
