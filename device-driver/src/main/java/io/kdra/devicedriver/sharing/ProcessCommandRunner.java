package io.kdra.devicedriver.sharing;

import io.kdra.devicedriver.process.BoundedProcess;
import java.io.IOException;
import java.time.Duration;
import org.jboss.logging.Logger;

/**
 * Runs commands as processes on the node (real GPUs). A command that runs past the timeout is
 * killed with every process it started, and fails: a hung {@code nvidia-smi} must not hold a
 * prepare (and the node's setup lock) forever.
 */
public final class ProcessCommandRunner implements CommandRunner {
  private static final Logger LOG = Logger.getLogger(ProcessCommandRunner.class);

  private final Duration timeout;

  public ProcessCommandRunner(Duration timeout) {
    this.timeout = timeout;
  }

  @Override
  public Output run(Command command) throws CommandException {
    LOG.infof("running %s", command);
    try {
      // A daemonising command (nvidia-cuda-mps-control -d) returns once its child has forked; the
      // child keeps running.
      BoundedProcess.Result r =
          BoundedProcess.run(command.argv(), command.env(), command.stdin(), timeout);
      if (r.exitCode() != 0) {
        throw new CommandException(
            command
                + ": exited with "
                + r.exitCode()
                + ": "
                + r.output().strip().lines().findFirst().orElse("(no output)"));
      }
      return new Output(0, r.output());
    } catch (BoundedProcess.TimedOut e) {
      throw new CommandException(command + ": " + e.getMessage());
    } catch (IOException e) {
      throw new CommandException(command + ": cannot run: " + e.getMessage());
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new CommandException(command + ": interrupted");
    }
  }
}
