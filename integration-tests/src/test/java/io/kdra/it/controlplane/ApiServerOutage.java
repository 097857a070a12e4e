package io.kdra.it.controlplane;

import io.fabric8.kubeapitest.KubeAPIServer;
import io.kdra.it.support.ServiceProcess;
import java.lang.reflect.Field;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;

/**
 * An outage of the control plane's kube-apiserver: the process is killed (as an OOM kill or a
 * failed node would end it) and later started again on the same address, etcd, certificates and
 * flags, so that every client reconnects to the address it knows. kube-api-test can only start a
 * new one on a new port; this starts the same command line again instead. The restarted process is
 * recorded for the next run's reaper and ended with the control plane ({@link #endRestarted}).
 */
public final class ApiServerOutage {

  private static final RestartedProcess API_SERVER =
      new RestartedProcess(
          "kube-apiserver", Path.of("target", "kube-apiserver-restarted.log").toAbsolutePath());

  private final ControlPlane.Running controlPlane;
  private final List<String> command;

  private ApiServerOutage(ControlPlane.Running controlPlane, List<String> command) {
    this.controlPlane = controlPlane;
    this.command = command;
  }

  /** Kills the running kube-apiserver; etcd stays. {@link #end} starts it again. */
  public static ApiServerOutage begin(ControlPlane.Running controlPlane) {
    List<String> command =
        API_SERVER.stop(
            () -> kubeApiTestsProcess(controlPlane.server()),
            // kube-api-test's own stop: it then takes the exit for intended, not for a crash that
            // would stop etcd too
            () -> apiServerProcessOf(controlPlane.server()).stopApiServer());
    return new ApiServerOutage(controlPlane, command);
  }

  /** The value of {@code flag} on the stopped kube-apiserver's command line; null when absent. */
  public String flag(String flag) {
    for (int i = 1; i < command.size(); i++) {
      String arg = command.get(i);
      if (arg.equals(flag) && i + 1 < command.size()) {
        return command.get(i + 1);
      }
      if (arg.startsWith(flag + "=")) {
        return arg.substring(flag.length() + 1);
      }
    }
    return null;
  }

  /** Starts the same kube-apiserver again; returns once it answers {@code /readyz}. */
  public void end(Duration timeout) {
    endAs(command, timeout);
  }

  /**
   * Starts the same kube-apiserver again with {@code flag} set to {@code value} instead (the others
   * as they were); returns once it answers {@code /readyz}. Later outages keep the new value.
   */
  public void endWith(String flag, String value, Duration timeout) {
    endAs(withFlag(command, flag, value), timeout);
  }

  /** {@code command} with {@code flag}'s value replaced, in the form it had, or appended. */
  static List<String> withFlag(List<String> command, String flag, String value) {
    List<String> edited = new java.util.ArrayList<>(command);
    for (int i = 1; i < edited.size(); i++) {
      String arg = edited.get(i);
      if (arg.equals(flag) && i + 1 < edited.size()) {
        edited.set(i + 1, value);
        return edited;
      }
      if (arg.startsWith(flag + "=")) {
        edited.set(i, flag + "=" + value);
        return edited;
      }
    }
    edited.add(flag + "=" + value);
    return edited;
  }

  private void endAs(List<String> command, Duration timeout) {
    API_SERVER.start(command);
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
            "kube-apiserver not ready " + timeout + " after its restart; log " + API_SERVER.log());
      }
      ServiceProcess.sleep(200);
    }
  }

  /** Ends a kube-apiserver started again (the control plane stops). */
  static void endRestarted() {
    API_SERVER.endRestarted();
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
