package io.kdra.devicedriver.sharing;

import java.io.IOException;
import java.io.OutputStream;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.concurrent.TimeUnit;
import org.jboss.logging.Logger;

/** Runs commands as processes on the node (real GPUs). */
public final class ProcessCommandRunner implements CommandRunner {
  private static final Logger LOG = Logger.getLogger(ProcessCommandRunner.class);

  private final Duration timeout;

  public ProcessCommandRunner(Duration timeout) {
    this.timeout = timeout;
  }

  @Override
  public Output run(Command command) throws CommandException {
    ProcessBuilder pb = new ProcessBuilder(command.argv()).redirectErrorStream(true);
    pb.environment().putAll(command.env());
    LOG.infof("running %s", command);
    try {
      Process p = pb.start();
      try (OutputStream in = p.getOutputStream()) {
        in.write(command.stdin().getBytes(StandardCharsets.UTF_8));
      }
      // A daemonising command (nvidia-cuda-mps-control -d) returns once its child has forked;
      // the child does not keep our pipe open.
      byte[] out = p.getInputStream().readAllBytes();
      if (!p.waitFor(timeout.toMillis(), TimeUnit.MILLISECONDS)) {
        p.destroyForcibly();
        throw new CommandException(command + ": did not finish within " + timeout);
      }
      String text = new String(out, StandardCharsets.UTF_8);
      if (p.exitValue() != 0) {
        throw new CommandException(
            command
                + ": exited with "
                + p.exitValue()
                + ": "
                + text.strip().lines().findFirst().orElse("(no output)"));
      }
      return new Output(0, text);
    } catch (IOException e) {
      throw new CommandException(command + ": cannot run: " + e.getMessage());
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new CommandException(command + ": interrupted");
    }
  }
}
