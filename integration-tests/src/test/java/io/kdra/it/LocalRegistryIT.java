package io.kdra.it;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.kdra.it.registry.LocalRegistry;
import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/** The tests' registry: started and stopped, and reaped after its test JVM was killed. */
class LocalRegistryIT {

  @BeforeEach
  void installed() {
    Assumptions.assumeTrue(
        LocalRegistry.executable() != null, "Debian's docker-registry is not installed: skipped");
  }

  @Test
  void closingStopsTheRegistryAndDeletesItsStorage() {
    LocalRegistry registry = LocalRegistry.start();
    assertThat(registry.serving()).isTrue();
    assertThat(registry.address).startsWith("127.0.0.1:");
    registry.close();
    assertThat(LocalRegistry.serving(registry.address)).isFalse();
    assertThat(registry.dir).doesNotExist();
  }

  /**
   * A JVM killed with SIGKILL leaves its registry running (nothing ends it); the next start in this
   * checkout ends it and deletes its storage.
   */
  @Test
  void aRegistryLeftByAKilledJvmIsReapedByTheNext() throws Exception {
    Process jvm =
        new ProcessBuilder(
                Path.of(System.getProperty("java.home"), "bin", "java").toString(),
                "-cp",
                System.getProperty("java.class.path"),
                LocalRegistry.class.getName())
            .redirectError(ProcessBuilder.Redirect.INHERIT)
            .start();
    String line;
    try (BufferedReader out =
        new BufferedReader(new InputStreamReader(jvm.getInputStream(), StandardCharsets.UTF_8))) {
      do {
        line = out.readLine(); // after the registry's own "[registry] serving on" line
      } while (line != null && line.startsWith("["));
      assertThat(line).as("the child's registry").isNotNull();
      String[] parts = line.split(" ");
      String address = parts[0];
      Path storage = Path.of(parts[1]);
      List<ProcessHandle> registries = jvm.descendants().toList();
      jvm.destroyForcibly();
      jvm.waitFor();
      assertThat(LocalRegistry.serving(address)).as("left running").isTrue();
      assertThat(storage).exists();

      LocalRegistry.reapLeftovers();

      await().atMost(Duration.ofSeconds(60)).until(() -> !LocalRegistry.serving(address));
      assertThat(registries).noneMatch(ProcessHandle::isAlive);
      assertThat(Files.exists(storage)).isFalse();
    } finally {
      jvm.descendants().forEach(ProcessHandle::destroyForcibly);
      jvm.destroyForcibly();
    }
  }
}
