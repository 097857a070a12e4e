package io.kdra.helmtests;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;

/**
 * A tool built from its Go module by a script under helm-tests/scripts into the kdra cache on first
 * use, then reused: the script prints the binary's path last on stdout.
 */
final class GoTool {

  /** What the tool printed (stdout and stderr together) and how it exited. */
  record Result(int exitCode, String output) {}

  private final Path script;
  private final String user;
  private Path binary;

  /** {@code script} under helm-tests/scripts; {@code user} names the test that needs the tool. */
  GoTool(String script, String user) {
    this.script = Path.of("scripts", script).toAbsolutePath();
    this.user = user;
  }

  /** Runs the tool with these arguments in {@code dir}. */
  Result run(Path dir, String... args) {
    List<String> command = new ArrayList<>();
    command.add(binary().toString());
    command.addAll(List.of(args));
    return exec(new ProcessBuilder(command).directory(dir.toFile()));
  }

  /** Runs the tool and returns its stdout alone, failing on a non-zero exit. */
  String stdout(Path dir, String... args) {
    List<String> command = new ArrayList<>();
    command.add(binary().toString());
    command.addAll(List.of(args));
    Result r =
        exec(
            new ProcessBuilder(command)
                .directory(dir.toFile())
                .redirectError(ProcessBuilder.Redirect.INHERIT));
    if (r.exitCode() != 0) {
      throw new AssertionError(command + " failed (exit " + r.exitCode() + "): " + r.output());
    }
    return r.output();
  }

  private synchronized Path binary() {
    if (binary == null) {
      // the build logs to stderr, which goes to the test's output; the path comes on stdout
      ProcessBuilder pb =
          new ProcessBuilder("bash", script.toString())
              .redirectError(ProcessBuilder.Redirect.INHERIT);
      Result r = exec(pb);
      if (r.exitCode() != 0) {
        throw new AssertionError(
            script
                + " failed (exit "
                + r.exitCode()
                + "), see its messages above; "
                + user
                + " needs Go and the Go module proxy on a first run");
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
