package io.kdra.it;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;

/**
 * {@code bin/demo} as a script runs it ({@code bin/demo &}), stopped with Ctrl-C's signal: SIGINT
 * to the demo's JVM alone (a terminal would signal the children too; here the demo must stop them
 * itself). It
 * exits promptly, nothing it started still runs (services, kube-apiserver, etcd, their
 * children), and its temporary directory is gone with all it held (Helm's library, the control
 * plane's keys, etcd's data, the services' caches), as are its kubeconfigs, tokens and sockets.
 * About a minute on two cores, most of it the demo's start; it uses no control plane of the
 * test run's.
 */
class DemoIT {

  private static final Duration STARTUP = Duration.ofSeconds(240);
  /** The services get 10 s of SIGTERM before SIGKILL; the rest is quick. */
  private static final long STOP_SECONDS = 30;

  @Test
  void ctrlCStopsEverythingAndLeavesNothingInItsTemporaryDirectory() throws Exception {
    Path root = ServiceProcess.moduleDir("bin").getParent();
    Path logDir = Files.createDirectories(Path.of("target", "it-logs").toAbsolutePath());
    Path log = logDir.resolve("demo-it.log");
    // bin/demo makes its own directory under TMPDIR: an empty one of this test's, to look into
    Path tmp = Files.createTempDirectory(logDir, "demo-tmp");
    // as a script starts it: in the background of a non-interactive shell, which starts it with
    // SIGINT ignored (POSIX), a disposition the JVM would keep
    ProcessBuilder builder = new ProcessBuilder("bash", "-c", "\"$0\" & wait $!",
        root.resolve("bin/demo").toString())
        .directory(root.toFile()).redirectErrorStream(true)
        .redirectOutput(log.toFile());
    builder.environment().put("TMPDIR", tmp.toString());
    Process shell = builder.start();
    ProcessHandle demo = await().atMost(Duration.ofSeconds(30))
        .until(() -> shell.children().findFirst().orElse(null), java.util.Objects::nonNull);
    try {
      await().atMost(STARTUP).pollInterval(Duration.ofMillis(500)).until(() -> {
        assertThat(demo.isAlive()).as("demo running; its output:\n%s", read(log)).isTrue();
        return read(log).contains(Demo.RUNNING);
      });
      List<ProcessHandle> started = demo.descendants().toList();
      assertThat(started).as("the demo's processes").hasSizeGreaterThanOrEqualTo(6);
      List<Path> demoDirs = list(tmp);
      assertThat(demoDirs).singleElement().satisfies(d -> {
        assertThat(d.getFileName().toString()).startsWith("kdra-demo.");
        assertThat(list(d)).as("what the demo keeps in %s", d).isNotEmpty();
      });
      Path kubeconfig = root.resolve("target/demo-kubeconfig.yaml");
      assertThat(kubeconfig).exists();

      long signalled = System.nanoTime();
      new ProcessBuilder("kill", "-INT", Long.toString(demo.pid())).inheritIO().start()
          .waitFor();
      // the shell waits for the demo and exits with its status
      assertThat(shell.waitFor(STOP_SECONDS, TimeUnit.SECONDS))
          .as("the demo exits within %d s of SIGINT; its output:\n%s", STOP_SECONDS, read(log))
          .isTrue();
      System.out.printf("[it] demo stopped %d ms after SIGINT, exit status %d%n",
          (System.nanoTime() - signalled) / 1_000_000, shell.exitValue());
      assertThat(shell.exitValue()).as("128 + SIGINT").isEqualTo(130);
      assertThat(read(log)).contains("[demo]", "stopped");
      assertThat(started).as("still running after the demo stopped")
          .noneMatch(ProcessHandle::isAlive);
      assertThat(list(tmp)).as("left in the temporary directory").isEmpty();
      assertThat(kubeconfig).doesNotExist();
      Path it = root.resolve("integration-tests/target");
      assertThat(it.resolve("n")).as("the nodes' tokens and sockets").doesNotExist();
      assertThat(it.resolve("it-kubeconfigs/demo")).doesNotExist();
    } finally {
      shell.descendants().forEach(ProcessHandle::destroyForcibly);
      shell.destroyForcibly();
      Stack.deleteRecursively(tmp);
    }
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
