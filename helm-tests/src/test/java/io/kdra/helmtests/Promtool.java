package io.kdra.helmtests;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;

/**
 * Prometheus's promtool, built from its Go module by helm-tests/scripts/build-promtool.sh into the
 * kdra cache on first use (several minutes cold, then reused).
 */
final class Promtool {

  static final Path SCRIPT = Path.of("scripts", "build-promtool.sh").toAbsolutePath();
  private static Path binary;

  private Promtool() {}

  /** What promtool printed and how it exited. */
  record Result(int exitCode, String output) {}

  /** Runs promtool with these arguments in {@code dir}. */
  static Result run(Path dir, String... args) {
    List<String> command = new ArrayList<>();
    command.add(binary().toString());
    command.addAll(List.of(args));
    return exec(new ProcessBuilder(command).directory(dir.toFile()));
  }

  private static synchronized Path binary() {
    if (binary == null) {
      // the build logs to stderr, which goes to the test's output; the path comes on stdout
      ProcessBuilder pb =
          new ProcessBuilder("bash", SCRIPT.toString())
              .redirectError(ProcessBuilder.Redirect.INHERIT);
      Result r = exec(pb);
      if (r.exitCode() != 0) {
        throw new AssertionError(
            SCRIPT
                + " failed (exit "
                + r.exitCode()
                + "), see its messages"
                + " above; it needs Go and the Go module proxy on a first run");
      }
      binary = Path.of(r.output().strip().lines().reduce((a, b) -> b).orElseThrow());
    }
    return binary;
  }

  private static Result exec(ProcessBuilder pb) {
    try {
      if (pb.redirectError() != ProcessBuilder.Redirect.INHERIT) {
        pb.redirectErrorStream(true);
      }
      Process p = pb.start();
      p.getOutputStream().close();
      String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
      // the output ends when the process does
      return new Result(p.waitFor(), out);
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new AssertionError(e);
    }
  }
}
