package io.kdra.devicedriver.sharing;

import java.util.ArrayList;
import java.util.List;
import java.util.function.Function;
import org.jboss.logging.Logger;

/**
 * Records commands instead of running them: simulated hardware, where the driver still goes through
 * every step a real node would take, and tests, which script the answers ({@link #answer}) and
 * assert the recorded sequence. Thread-safe.
 */
public final class RecordingCommandRunner implements CommandRunner {
  private static final Logger LOG = Logger.getLogger(RecordingCommandRunner.class);

  private final List<Command> recorded = new ArrayList<>();
  private Function<Command, Output> answers = c -> new Output(0, "");

  /** Answers commands with {@code answers} (by default: success, no output). */
  public synchronized RecordingCommandRunner answer(Function<Command, Output> newAnswers) {
    this.answers = newAnswers;
    return this;
  }

  @Override
  public synchronized Output run(Command command) throws CommandException {
    recorded.add(command);
    LOG.infof("simulated hardware, not running: %s", command);
    Output out = answers.apply(command);
    if (!out.ok()) {
      throw new CommandException(
          command
              + ": exited with "
              + out.exitCode()
              + ": "
              + out.text().strip().lines().findFirst().orElse("(no output)"));
    }
    return out;
  }

  /** Every command so far, in order. */
  public synchronized List<Command> commands() {
    return List.copyOf(recorded);
  }

  /** Every command so far as text ({@link Command#toString()}), in order. */
  public synchronized List<String> lines() {
    return recorded.stream().map(Command::toString).toList();
  }

  /** Forgets the commands recorded so far. */
  public synchronized void clear() {
    recorded.clear();
  }
}
