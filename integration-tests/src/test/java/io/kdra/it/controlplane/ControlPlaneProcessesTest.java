package io.kdra.it.controlplane;

import static org.assertj.core.api.Assertions.assertThat;

import io.kdra.it.support.ProcessStart;
import java.nio.file.Path;
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
      ProcessStart.awaitExec(sh);
      assertThat(ControlPlaneProcesses.directories(sh.toHandle()))
          .containsExactly(Path.of("/tmp/etcddata1"), Path.of("/tmp/etcdwal2"));
    } finally {
      sh.descendants().forEach(ProcessHandle::destroyForcibly);
      sh.destroyForcibly();
    }
  }
}
