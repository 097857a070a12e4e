package io.kdra.it;

import io.kdra.it.nodes.SimulatedNode;
import io.kdra.it.support.TestFiles;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Map;

/**
 * A fake {@code nvidia-smi} for one node of the chaos soak, whose driver runs the {@code nvidia}
 * backend on it: it answers the discovery query for one A100-40GB (as the simulated {@link
 * SimulatedNode#oneA100} has it) and hangs, as the tool of a stuck GPU driver does, while its hang
 * file exists (a child {@code sleep}, so that the driver's timeout must end the whole process
 * tree). The soak's hung-nvidia-smi fault creates and removes that file.
 */
final class SoakNvidiaSmi {

  /** How long the driver lets one nvidia-smi run: short, so that a hang costs little. */
  static final String TIMEOUT = "2s";

  private final String node;
  private final Path dir;

  SoakNvidiaSmi(String node) {
    this.node = node;
    this.dir = Path.of("target", "soak-nvidia-smi", node).toAbsolutePath();
  }

  /** The node whose driver runs this tool. */
  String node() {
    return node;
  }

  /** Writes the script (and an empty host root); no hang file. */
  SoakNvidiaSmi create() {
    TestFiles.deleteRecursively(dir);
    try {
      Files.createDirectories(dir.resolve("host"));
      Path script = dir.resolve("nvidia-smi");
      Files.writeString(
          script,
          "#!/bin/sh\n"
              + "if [ -e '"
              + hangFile()
              + "' ]; then sleep 600; fi\n"
              + "case \"$*\" in\n"
              + "  *--query-gpu=*) echo '0, "
              + SimulatedNode.uuid(node, 0)
              + ", NVIDIA A100-SXM4-40GB, 00000000:07:00.0, 40960, 550.127.05, 8.0, Disabled' ;;\n"
              + "esac\n");
      if (!script.toFile().setExecutable(true)) {
        throw new IOException("cannot make " + script + " executable");
      }
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
    return this;
  }

  /**
   * The node driver's properties: the nvidia backend with this tool; the test-only hooks of the
   * simulated backend off (the driver refuses them on another backend).
   */
  Map<String, String> driverProperties() {
    return Map.of(
        "kdra.device-driver.backend",
        "nvidia",
        "kdra.device-driver.nvidia.smi-path",
        dir.resolve("nvidia-smi").toString(),
        "kdra.device-driver.nvidia.host-root",
        dir.resolve("host").toString(),
        "kdra.device-driver.nvidia.timeout",
        TIMEOUT,
        "kdra.device-driver.test-only.prepare-delay",
        "0s",
        "kdra.device-driver.test-only.simulated-gpu-state-file",
        "");
  }

  /** From now on every run hangs. */
  void hang() {
    try {
      Files.writeString(hangFile(), "");
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }

  /** Runs from now on answer again (a run hanging now goes on until the driver ends it). */
  void release() {
    try {
      Files.deleteIfExists(hangFile());
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }

  private Path hangFile() {
    return dir.resolve("hang");
  }
}
