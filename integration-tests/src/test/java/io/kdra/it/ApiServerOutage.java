package io.kdra.it;

import io.fabric8.kubeapitest.KubeAPIServer;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.lang.reflect.Field;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;

/**
 * An outage of the control plane's kube-apiserver: the process is killed (as an OOM kill or a
 * failed node would end it) and later started again on the same address, etcd, certificates and
 * flags, so that every client reconnects to the address it knows. kube-api-test can only start a
 * new one on a new port; this starts the same command line again instead. The restarted process is
 * recorded for the next run's reaper and ended with the control plane ({@link #endRestarted}).
 */
final class ApiServerOutage {

  /** The kube-apiserver started again, if any: the one that runs now instead of kube-api-test's. */
  private static final AtomicReference<Process> RESTARTED = new AtomicReference<>();

  private static final Path LOG =
      Path.of("target", "kube-apiserver-restarted.log").toAbsolutePath();

  private final ControlPlane.Running controlPlane;
  private final List<String> command;

  private ApiServerOutage(ControlPlane.Running controlPlane, List<String> command) {
    this.controlPlane = controlPlane;
    this.command = command;
  }

  /** Kills the running kube-apiserver; etcd stays. {@link #end} starts it again. */
  static ApiServerOutage begin(ControlPlane.Running controlPlane) {
    Process restarted = RESTARTED.getAndSet(null);
    ProcessHandle running =
        restarted != null ? restarted.toHandle() : kubeApiTestsProcess(controlPlane.server());
    List<String> command = commandLine(running);
    if (restarted != null) {
      restarted.destroyForcibly();
      waitFor(restarted.toHandle());
    } else {
      // kube-api-test's own stop: it then takes the exit for intended, not for a crash that would
      // stop etcd too
      apiServerProcessOf(controlPlane.server()).stopApiServer();
    }
    return new ApiServerOutage(controlPlane, command);
  }

  /** Starts the same kube-apiserver again; returns once it answers {@code /readyz}. */
  void end(Duration timeout) {
    try {
      Process p =
          new ProcessBuilder(command)
              .redirectErrorStream(true)
              .redirectOutput(ProcessBuilder.Redirect.appendTo(LOG.toFile()))
              .start();
      RESTARTED.set(p);
      Leftovers.entry(p.toHandle(), List.of())
          .ifPresent(e -> ControlPlaneProcesses.leftovers().record(List.of(e)));
    } catch (IOException e) {
      throw new UncheckedIOException("starting kube-apiserver again", e);
    }
    long deadline = System.nanoTime() + timeout.toNanos();
    while (true) {
      try {
        if ("ok".equals(controlPlane.client().raw("/readyz"))) {
          return;
        }
      } catch (RuntimeException notYet) {
        // refused while it starts
      }
      if (System.nanoTime() > deadline) {
        throw new IllegalStateException(
            "kube-apiserver not ready " + timeout + " after its restart; log " + LOG);
      }
      ServiceProcess.sleep(200);
    }
  }

  /** Ends a kube-apiserver started again (the control plane stops). */
  static void endRestarted() {
    Process p = RESTARTED.getAndSet(null);
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

  private static void waitFor(ProcessHandle p) {
    try {
      p.onExit().get(15, TimeUnit.SECONDS);
    } catch (Exception e) {
      throw new IllegalStateException("kube-apiserver " + p.pid() + " still runs", e);
    }
  }

  private static ProcessHandle kubeApiTestsProcess(KubeAPIServer server) {
    try {
      Object holder = apiServerProcessOf(server);
      Field f = holder.getClass().getDeclaredField("apiServerProcess");
      f.setAccessible(true);
      return ((Process) f.get(holder)).toHandle();
    } catch (ReflectiveOperationException e) {
      throw new IllegalStateException("kube-api-test's API server process", e);
    }
  }

  private static io.fabric8.kubeapitest.process.KubeAPIServerProcess apiServerProcessOf(
      KubeAPIServer server) {
    try {
      Field f = KubeAPIServer.class.getDeclaredField("kubeApiServerProcess");
      f.setAccessible(true);
      return (io.fabric8.kubeapitest.process.KubeAPIServerProcess) f.get(server);
    } catch (ReflectiveOperationException e) {
      throw new IllegalStateException("kube-api-test's API server process", e);
    }
  }
}
