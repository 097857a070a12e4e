package io.kdra.it.upstream;

import io.kdra.it.support.GoPrograms;
import java.io.ByteArrayInputStream;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;

/**
 * The two implementations behind one command line: {@code bin/dra-alloc} (its Java entry point, in
 * process) and {@code dra-alloc-upstream}, upstream's allocator built by {@code
 * integration-tests/scripts/build-upstream-alloc.sh} (a process).
 */
public final class UpstreamAlloc {

  /** The k8s.io/dynamic-resource-allocation version the reference program is built from. */
  public static final String VERSION = "v0.37.2";

  private UpstreamAlloc() {}

  /** One run: exit status, stdout, stderr. */
  public record Result(int exit, String out, String err) {}

  /**
   * The reference binary: system property {@code kdra.upstream.alloc} if set, else {@code
   * $KDRA_CACHE_DIR/upstream-alloc/v0.37.2-linux-<arch>/<stamp>/dra-alloc-upstream}, where the
   * stamp identifies this checkout's sources as {@code build-upstream-alloc.sh} computes it (so
   * that worktrees sharing the cache never run each other's build).
   */
  public static Path binary() {
    String configured = System.getProperty("kdra.upstream.alloc");
    if (configured != null && !configured.isBlank()) {
      return Path.of(configured);
    }
    return GoPrograms.cached("upstream", "upstream-alloc", VERSION, "dra-alloc-upstream");
  }

  /** Runs {@code dra-alloc-upstream args...}; fails when the binary is missing or hangs. */
  public static Result upstream(List<String> args) {
    Path binary = binary();
    if (!Files.isExecutable(binary)) {
      throw new IllegalStateException(
          "dra-alloc-upstream not found at "
              + binary
              + "; build it with integration-tests/scripts/build-upstream-alloc.sh");
    }
    List<String> command = new ArrayList<>();
    command.add(binary.toString());
    command.addAll(args);
    try {
      Path out = Files.createTempFile("upstream-alloc", ".out");
      Path err = Files.createTempFile("upstream-alloc", ".err");
      try {
        Process p =
            new ProcessBuilder(command)
                .redirectOutput(out.toFile())
                .redirectError(err.toFile())
                .start();
        p.getOutputStream().close();
        if (!p.waitFor(5, TimeUnit.MINUTES)) {
          p.destroyForcibly();
          throw new IllegalStateException(
              "dra-alloc-upstream did not finish in 5 minutes: " + command);
        }
        return new Result(p.exitValue(), Files.readString(out), Files.readString(err));
      } finally {
        Files.deleteIfExists(out);
        Files.deleteIfExists(err);
      }
    } catch (IOException e) {
      throw new IllegalStateException("cannot run " + command, e);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new IllegalStateException("interrupted running " + command, e);
    }
  }

  /**
   * {@code dra-alloc-upstream version}: the Go release and module versions the binary was built
   * from, as the golden files' headers record them.
   */
  public static com.fasterxml.jackson.databind.JsonNode version() {
    Result r = upstream(List.of("version"));
    if (r.exit() != 0) {
      throw new IllegalStateException(
          "dra-alloc-upstream version: exit " + r.exit() + ": " + r.out());
    }
    try {
      return new com.fasterxml.jackson.databind.ObjectMapper().readTree(r.out());
    } catch (IOException e) {
      throw new IllegalStateException("dra-alloc-upstream version: " + r.out(), e);
    }
  }

  /** Runs {@code bin/dra-alloc args...} in this JVM through its entry point. */
  public static Result kdra(List<String> args) {
    ByteArrayOutputStream out = new ByteArrayOutputStream();
    ByteArrayOutputStream err = new ByteArrayOutputStream();
    int exit;
    try (PrintStream o = new PrintStream(out, true, StandardCharsets.UTF_8);
        PrintStream e = new PrintStream(err, true, StandardCharsets.UTF_8)) {
      exit =
          io.kdra.alloc.cli.Main.run(
              args.toArray(String[]::new), new ByteArrayInputStream(new byte[0]), o, e);
    }
    return new Result(
        exit, out.toString(StandardCharsets.UTF_8), err.toString(StandardCharsets.UTF_8));
  }
}
