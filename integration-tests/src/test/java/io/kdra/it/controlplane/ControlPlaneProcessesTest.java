package io.kdra.it.controlplane;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Path;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/** What the reaper of a killed run's etcd reads from its command line. */
class ControlPlaneProcessesTest {

  @Test
  void etcdsDirectoriesComeFromItsCommandLine() throws Exception {
    Process sh =
        new ProcessBuilder(
                "sh",
                "-c",
                "sleep 300; :",
                "-data-dir",
                "/tmp/etcddata1",
                "--wal-dir",
                "/tmp/etcdwal2")
            .start();
    try {
      // the command line is readable once exec has happened
      long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
      while (sh.isAlive()
          && !sh.info().command().map(c -> !c.endsWith("/java")).orElse(false)
          && System.nanoTime() < deadline) {
        Thread.sleep(10);
      }
      assertThat(ControlPlaneProcesses.directories(sh.toHandle()))
          .containsExactly(Path.of("/tmp/etcddata1"), Path.of("/tmp/etcdwal2"));
    } finally {
      sh.descendants().forEach(ProcessHandle::destroyForcibly);
      sh.destroyForcibly();
    }
  }
}
