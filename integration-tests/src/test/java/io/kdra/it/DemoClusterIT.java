package io.kdra.it;

import static org.assertj.core.api.Assertions.assertThat;

import io.kdra.it.demo.Demo;
import io.kdra.it.demo.DemoReport;
import io.kdra.it.nodes.MultiNodeCluster;
import io.kdra.it.services.BuiltImages;
import io.kdra.it.support.ServiceProcess;
import io.kdra.it.support.TestFiles;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.Test;

/**
 * {@code bin/demo --cluster --once} as root: the chart installed with its defaults on the
 * multi-node cluster tells the same story as the demo on processes (DemoIT's report: trainer on
 * node-b's A100, inference on node-a's two L4s, too-big pending, what each container saw), with two
 * publishers and two controllers on the pod network and each node's driver from its own release; a
 * pod resolves the publisher's Service through CoreDNS; {@code kubectl dra} answers from outside.
 * Then it exits 0 and leaves only the nodes' logs: no kubeconfig, values or temporary files.
 */
class DemoClusterIT {

  /** A two-node cluster, eight JVMs of the chart, three pods: on 2 loaded cores. */
  private static final Duration RUN = Duration.ofSeconds(540);

  private final Path root = ServiceProcess.moduleDir("bin").getParent();
  private final Path it = root.resolve("integration-tests/target");

  @Test
  void theChartsDefaultsOnRealNodesTellTheDemosStory() throws Exception {
    BuiltImages.assumeBuilt(BuiltImages.SERVICES);
    Assumptions.assumeTrue(
        MultiNodeCluster.available(), "a multi-node cluster needs root, ip and nsenter");
    Path logs = Files.createDirectories(Path.of("target", "it-logs").toAbsolutePath());
    Path log = logs.resolve("demo-cluster-it.log");
    Path tmp = Files.createTempDirectory(logs, "demo-tmp");
    ProcessBuilder builder =
        new ProcessBuilder(
                "bash", "-c", "exec \"$0\" --once --cluster", root.resolve("bin/demo").toString())
            .directory(root.toFile())
            .redirectErrorStream(true)
            .redirectOutput(log.toFile());
    builder.environment().put("TMPDIR", tmp.toString());
    long started = System.nanoTime();
    Process demo = builder.start();
    try {
      assertThat(demo.waitFor(RUN.toSeconds(), TimeUnit.SECONDS))
          .as("bin/demo --cluster --once exits; its output:\n%s", read(log))
          .isTrue();
      System.out.printf(
          "[it] bin/demo --cluster --once: %d s, exit status %d%n",
          (System.nanoTime() - started) / 1_000_000_000, demo.exitValue());
      String output = read(log);
      assertThat(demo.exitValue()).as("exit status; output:\n%s", output).isZero();
      DemoIT.assertPods(output, true);
      List<String> lines = Arrays.asList(output.split("\n"));
      assertThat(lines)
          .as("the chart's defaults: two publishers, two controllers, a driver per node")
          .contains("The chart's pods (namespace kdra-system, on the pod network):")
          .filteredOn(l -> l.matches("  kdra-slice-publisher-\\S+ +node-[ab] +\\d+\\.\\S+"))
          .hasSize(2);
      assertThat(lines)
          .filteredOn(l -> l.matches("  kdra-claim-controller-\\S+ +node-[ab] +\\d+\\.\\S+"))
          .hasSize(2);
      assertThat(lines)
          .anyMatch(l -> l.matches("  kdra-device-driver-\\S+ +node-a +\\d+\\.\\S+"))
          .anyMatch(l -> l.matches("  kdra-a100-device-driver-\\S+ +node-b +\\d+\\.\\S+"));
      assertThat(output)
          .containsPattern(
              "\\n  kdra-slice-publisher\\.kdra-system\\.svc\\.cluster\\.local resolves to \\d+\\.")
          .contains("$ kubectl dra devices")
          .contains("$ kubectl dra why pod/too-big -n demo")
          .contains(DemoReport.ONCE)
          .doesNotContain("[demo] failed", "[demo] stopping the", "[demo] removing");
      assertThat(output)
          .as("kubectl dra's answers: both nodes' GPUs, and why too-big waits")
          .containsPattern("\\n  node-a +gpu\\.kdra\\.io +node-a +gpu-1 ")
          .containsPattern("\\n  node-b +gpu\\.kdra\\.io +node-b +gpu-0 ")
          .contains("\n  pod/too-big is pending");
      assertThat(root.resolve("target/demo-kubeconfig.yaml")).doesNotExist();
      assertThat(it.resolve("demo-cluster")).as("the values and Helm's kubeconfig").doesNotExist();
      for (Path node : list(it.resolve("dmc"))) {
        assertThat(list(node))
            .as("left of real node %s", node)
            .allMatch(p -> Demo.KEPT_NODE_FILES.contains(p.getFileName().toString()));
      }
      assertThat(Files.readString(Path.of("/proc/self/mountinfo")))
          .as("mounts of the nodes' directories")
          .doesNotContain(it.resolve("dmc").toString());
      assertThat(list(tmp)).as("left in the temporary directory").isEmpty();
    } finally {
      demo.descendants().forEach(ProcessHandle::destroyForcibly);
      demo.destroyForcibly();
      TestFiles.deleteRecursively(tmp);
    }
  }

  private static String read(Path file) throws IOException {
    return Files.exists(file) ? Files.readString(file) : "";
  }

  private static List<Path> list(Path dir) {
    if (!Files.isDirectory(dir)) {
      return List.of();
    }
    try (Stream<Path> files = Files.list(dir)) {
      return files.toList();
    } catch (IOException e) {
      throw new java.io.UncheckedIOException(e);
    }
  }
}
