package io.kdra.it.controlplane;

import io.kdra.it.support.Leftovers;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.Supplier;

/**
 * One control-plane process (kube-apiserver, etcd) that a test stops and starts again with the same
 * command line, so that every client finds it where it was. The first stop goes through
 * kube-api-test's own stop (it then takes the exit for intended); later stops end the process
 * started here. The process started again is recorded for the next run's reaper and ended with the
 * control plane ({@link #endRestarted}).
 */
final class RestartedProcess {

  private final String name;
  private final Path log;
  private final AtomicReference<Process> restarted = new AtomicReference<>();

  RestartedProcess(String name, Path log) {
    this.name = name;
    this.log = log;
  }

  /**
   * Stops the process that runs now, the one started here or else kube-api-test's ({@code
   * original}, stopped by {@code stopOriginal}); returns its command line.
   */
  List<String> stop(Supplier<ProcessHandle> original, Runnable stopOriginal) {
    Process again = restarted.getAndSet(null);
    ProcessHandle running = again != null ? again.toHandle() : original.get();
    List<String> command = commandLine(running);
    if (again != null) {
      again.destroyForcibly();
      waitFor(again.toHandle());
    } else {
      stopOriginal.run();
    }
    return command;
  }

  /** Starts {@code command} again, its output appended to this process's log. */
  void start(List<String> command) {
    try {
      Process p =
          new ProcessBuilder(command)
              .redirectErrorStream(true)
              .redirectOutput(ProcessBuilder.Redirect.appendTo(log.toFile()))
              .start();
      restarted.set(p);
      // with etcd's data and WAL directories, as the first one was recorded
      Leftovers.entry(p.toHandle(), ControlPlaneProcesses.directories(p.toHandle()))
          .ifPresent(e -> ControlPlaneProcesses.leftovers().record(List.of(e)));
    } catch (IOException e) {
      throw new UncheckedIOException("starting " + name + " again", e);
    }
  }

  Path log() {
    return log;
  }

  /** Ends the process started again, if any (the control plane stops). */
  void endRestarted() {
    Process p = restarted.getAndSet(null);
    if (p != null) {
      p.destroyForcibly();
      waitFor(p.toHandle());
    }
  }

  private static List<String> commandLine(ProcessHandle process) {
    ProcessHandle.Info info = process.info();
    List<String> command = new ArrayList<>();
    command.add(info.command().orElseThrow(() -> new IllegalStateException("no command")));
    command.addAll(
        List.of(info.arguments().orElseThrow(() -> new IllegalStateException("no args"))));
    return command;
  }

  private void waitFor(ProcessHandle p) {
    try {
      p.onExit().get(15, TimeUnit.SECONDS);
    } catch (Exception e) {
      throw new IllegalStateException(name + " " + p.pid() + " still runs", e);
    }
  }
}
