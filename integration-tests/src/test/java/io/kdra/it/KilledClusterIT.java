package io.kdra.it;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.kdra.it.nodes.MultiNodeCluster;
import io.kdra.it.nodes.MultiNodeClusterMain;
import io.kdra.it.nodes.NodeCgroups;
import io.kdra.it.support.HostLeaks;
import io.kdra.it.support.HostSnapshot;
import io.kdra.it.support.TestFiles;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.Test;

/**
 * A JVM killed with SIGKILL while it holds a multi-node cluster (kubelets, containerd, pods on the
 * CNI plugins, kube-proxy's rules, CoreDNS, kube-network-policies, mounts, network namespaces)
 * leaves nothing system-wide once the next start has cleaned up ({@link
 * MultiNodeCluster#reapLeftovers}, what {@link MultiNodeCluster#start} does first): no process,
 * namespace, link, host firewall rule, host mount, cgroup, temporary file or well-known mount point
 * of the killed run is left ({@link HostLeaks}). Other runs on this machine keep going meanwhile;
 * what is theirs does not count. The killed JVM ran in another working directory: the next start
 * may be in another checkout, or after {@code mvn clean}.
 */
class KilledClusterIT {

  private static final int NODES = 2;
  private static final Duration CLUSTER_TIMEOUT = Duration.ofMinutes(8);

  @Test
  void aJvmKilledWhileItHoldsAClusterLeavesNothingOnceTheNextStartCleansUp() throws Exception {
    Assumptions.assumeTrue(
        MultiNodeCluster.available(), "a multi-node cluster needs root, ip and nsenter");
    // short: the nodes' unix sockets must fit 107 bytes
    Path dir = Path.of("target", "kc").toAbsolutePath();
    TestFiles.deleteRecursively(dir);
    Files.createDirectories(dir);
    Path log = Path.of("target", "it-dumps", "killed-cluster.log").toAbsolutePath();
    Files.createDirectories(log.getParent());
    HostSnapshot before = HostSnapshot.take();

    List<String> command = new ArrayList<>();
    command.add(Path.of(System.getProperty("java.home"), "bin", "java").toString());
    // no /tmp/hsperfdata_<user>/<pid>: the JVM's own, which its next start removes
    command.add("-XX:-UsePerfData");
    // the versions and recipes of the cached binaries, as the build gave them to this JVM
    System.getProperties().stringPropertyNames().stream()
        .filter(n -> n.startsWith("kdra."))
        .sorted()
        .forEach(n -> command.add("-D" + n + "=" + System.getProperty(n)));
    command.addAll(
        List.of(
            "-cp",
            System.getProperty("java.class.path"),
            MultiNodeClusterMain.class.getName(),
            dir.toString(),
            Integer.toString(NODES)));
    // in a directory of its own, as a run of another checkout, or one before a `mvn clean`: what
    // it records must be found wherever the next run starts
    Path elsewhere = Files.createDirectories(dir.resolve("elsewhere"));
    Process jvm =
        new ProcessBuilder(command)
            .directory(elsewhere.toFile())
            .redirectErrorStream(true)
            .redirectOutput(ProcessBuilder.Redirect.to(log.toFile()))
            .start();
    Path ready = dir.resolve("ready");
    try {
      await()
          .atMost(CLUSTER_TIMEOUT)
          .pollInterval(Duration.ofSeconds(1))
          .until(
              () -> {
                assertThat(jvm.isAlive()).as("the cluster's JVM; its output: " + log).isTrue();
                return Files.exists(ready);
              });
    } catch (Throwable e) {
      jvm.destroyForcibly().waitFor();
      MultiNodeCluster.reapLeftovers();
      throw e;
    }
    String bridge = TestFiles.read(ready).trim();
    List<Long> nodeProcesses =
        NodeCgroups.ownedBy(jvm.pid()).stream()
            .flatMap(n -> NodeCgroups.processesOf(n).stream())
            .toList();
    HostSnapshot during = HostSnapshot.take();
    HostLeaks.RunTrace run = HostSnapshot.trace(jvm.toHandle(), nodeProcesses, bridge);
    // what the probes see of the live run: without a clean-up, all of it would be left
    assertThat(run.processes().values())
        .extracting(p -> Path.of(p.command()).getFileName().toString())
        .contains("kubelet", "containerd", "kube-proxy", "etcd-server", "kube-apiserver")
        .anyMatch(c -> c.startsWith("containerd-shim"))
        .anyMatch(c -> c.contains("coredns"))
        .anyMatch(c -> c.contains("kube-network-policies"));
    assertThat(HostLeaks.find(before, during, during, run))
        .as("the run as the probes see it")
        .anyMatch(l -> l.equals("link " + bridge))
        .anyMatch(l -> l.startsWith("cgroup ") && l.contains("kdra-node." + jvm.pid() + "."))
        .anyMatch(l -> l.startsWith("temporary file kdra-control-plane"))
        .anyMatch(l -> l.startsWith("namespace net:"));

    jvm.destroyForcibly();
    assertThat(jvm.waitFor()).isEqualTo(137);
    MultiNodeCluster.reapLeftovers();

    // the kernel dismantles a network namespace (and the host's end of its veth) in the
    // background once its last process is gone: wait for that state
    await()
        .atMost(Duration.ofSeconds(60))
        .pollInterval(Duration.ofSeconds(1))
        .untilAsserted(
            () ->
                assertThat(HostLeaks.find(before, during, HostSnapshot.take(), run))
                    .as("left by the killed run after the next start's clean-up")
                    .isEmpty());
  }
}
