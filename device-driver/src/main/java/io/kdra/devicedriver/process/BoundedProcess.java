package io.kdra.devicedriver.process;

import java.io.IOException;
import java.io.OutputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;

/**
 * Runs a host command with a deadline that holds even when the command hangs (an {@code nvidia-smi}
 * stuck on a GPU that fell off the bus never closes its output). The output goes to a temporary
 * file rather than a pipe, so waiting for the process is the only blocking step: a pipe read would
 * block until EOF, before any timeout could start, and a daemon the command forks ({@code
 * nvidia-cuda-mps-control -d}) may keep an inherited descriptor open. On timeout the command and
 * every process it started are killed.
 */
public final class BoundedProcess {
  /** How long to wait for a killed command to be gone before reporting the timeout anyway. */
  private static final Duration KILL_GRACE = Duration.ofSeconds(5);

  private BoundedProcess() {}

  /** What a finished command printed (stdout and stderr together) and its exit status. */
  public record Result(int exitCode, String output) {}

  /** The command did not finish in time; it and its descendants were killed. */
  public static final class TimedOut extends Exception {
    TimedOut(String message) {
      super(message);
    }
  }

  /**
   * Starts {@code argv} with {@code env} added to this process's environment, writes {@code stdin}
   * to it, and waits at most {@code timeout} for it to exit.
   *
   * @throws IOException when it cannot be started
   * @throws TimedOut when it ran past {@code timeout} (it is killed, with its descendants)
   * @throws InterruptedException when interrupted while waiting (it is killed, as on timeout)
   */
  public static Result run(
      List<String> argv, Map<String, String> env, String stdin, Duration timeout)
      throws IOException, TimedOut, InterruptedException {
    Path out = Files.createTempFile("kdra-command-", ".out");
    try {
      ProcessBuilder pb =
          new ProcessBuilder(argv).redirectErrorStream(true).redirectOutput(out.toFile());
      pb.environment().putAll(env);
      Process p = pb.start();
      boolean exited;
      try {
        try (OutputStream in = p.getOutputStream()) {
          in.write(stdin.getBytes(StandardCharsets.UTF_8));
        } catch (IOException e) {
          // the command exited (or closed its input) without reading it: its status tells
        }
        exited = p.waitFor(timeout.toMillis(), TimeUnit.MILLISECONDS);
      } catch (InterruptedException e) {
        killTree(p);
        throw e;
      }
      if (!exited) {
        int killed = killTree(p);
        throw new TimedOut(
            "did not finish within "
                + timeout
                + "; killed it"
                + (killed == 0 ? "" : " and " + killed + " process(es) it started"));
      }
      // not Files.readString: that refuses malformed UTF-8, where a lossy decode still says enough
      return new Result(p.exitValue(), new String(Files.readAllBytes(out), StandardCharsets.UTF_8));
    } finally {
      Files.deleteIfExists(out);
    }
  }

  /**
   * Kills the process and its descendants (listed first: once the parent is gone they are
   * re-parented and no longer found through it), then waits briefly for the parent to be reaped.
   *
   * @return how many descendants were killed
   */
  private static int killTree(Process p) throws InterruptedException {
    List<ProcessHandle> descendants = p.descendants().toList();
    p.destroyForcibly();
    descendants.forEach(ProcessHandle::destroyForcibly);
    p.waitFor(KILL_GRACE.toMillis(), TimeUnit.MILLISECONDS);
    return descendants.size();
  }
}
