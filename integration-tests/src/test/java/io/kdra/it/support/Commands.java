package io.kdra.it.support;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.TimeUnit;

/**
 * Short commands the harness runs and waits for ({@code ip}, {@code crictl}, {@code getconf}, ...):
 * stdout and stderr together, a time limit, the process ended when it runs past it.
 */
public final class Commands {

  private Commands() {}

  /**
   * How a command ended: its exit status (-1: it did not start, ran too long or was interrupted).
   */
  public record Result(int exitCode, String output) {}

  /**
   * Runs {@code command} and waits up to {@code timeout} for it. The output is read beside the
   * wait, so that the limit holds while the command still writes or keeps its output open.
   */
  public static Result run(Duration timeout, List<String> command) {
    Process p;
    try {
      p = new ProcessBuilder(command).redirectErrorStream(true).start();
    } catch (IOException e) {
      return new Result(-1, e.toString());
    }
    ByteArrayOutputStream out = new ByteArrayOutputStream();
    Thread reader =
        new Thread(
            () -> {
              try (InputStream in = p.getInputStream()) {
                in.transferTo(out);
              } catch (IOException e) {
                // the process is gone: what was read stays
              }
            },
            "command-output");
    reader.setDaemon(true);
    reader.start();
    try {
      boolean ended = p.waitFor(timeout.toMillis(), TimeUnit.MILLISECONDS);
      if (!ended) {
        p.destroyForcibly();
      }
      // a child the command left behind may hold the output open: read what came, not forever
      reader.join(Duration.ofSeconds(ended ? 5 : 1).toMillis());
      String text = out.toString(StandardCharsets.UTF_8);
      return ended ? new Result(p.exitValue(), text) : new Result(-1, text + "\n(timed out)");
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      p.destroyForcibly();
      return new Result(-1, "interrupted");
    }
  }

  /** Runs {@code command}; its output, or an exception with it where it did not exit with 0. */
  public static String check(Duration timeout, List<String> command) {
    Result r = run(timeout, command);
    if (r.exitCode() != 0) {
      throw new IllegalStateException(
          String.join(" ", command) + ": exit " + r.exitCode() + "\n" + r.output());
    }
    return r.output();
  }
}
