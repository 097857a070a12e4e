package io.kdra.devicedriver.sharing;

import java.util.List;
import java.util.Map;
import java.util.Objects;

/**
 * Runs the host commands that configure a GPU (nvidia-smi, the MPS control daemon). Two kinds:
 * {@link ProcessCommandRunner} on a node with real GPUs, {@link RecordingCommandRunner} on
 * simulated hardware, where the commands are only recorded (and logged) so that tests can check
 * exactly what a real node would run.
 */
public interface CommandRunner {

  /** One command line. */
  record Command(List<String> argv, Map<String, String> env, String stdin) {
    public Command {
      argv = List.copyOf(argv);
      env = Map.copyOf(env);
      stdin = Objects.requireNonNullElse(stdin, "");
    }

    public static Command of(String... argv) {
      return new Command(List.of(argv), Map.of(), "");
    }

    /** The command as a shell would show it, environment first. */
    @Override
    public String toString() {
      StringBuilder b = new StringBuilder();
      env.entrySet().stream()
          .sorted(Map.Entry.comparingByKey())
          .forEach(e -> b.append(e.getKey()).append('=').append(e.getValue()).append(' '));
      b.append(String.join(" ", argv));
      if (!stdin.isEmpty()) {
        b.append(" <<< ").append(stdin.strip());
      }
      return b.toString();
    }
  }

  /** What a command printed (stdout and stderr together) and its exit status. */
  record Output(int exitCode, String text) {
    public boolean ok() {
      return exitCode == 0;
    }
  }

  /** A command that could not run or failed; the message says which and why. */
  final class CommandException extends Exception {
    public CommandException(String message) {
      super(message);
    }
  }

  /**
   * Runs the command and waits for it.
   *
   * @throws CommandException when it cannot be started, times out or exits non-zero
   */
  Output run(Command command) throws CommandException;
}
