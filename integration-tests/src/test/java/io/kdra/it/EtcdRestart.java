package io.kdra.it;

import io.fabric8.kubeapitest.KubeAPIServer;
import io.fabric8.kubeapitest.process.EtcdProcess;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.lang.reflect.Field;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;

/**
 * etcd stopped under the running kube-apiserver and started again on the same data, address and
 * flags, as a restarted etcd member would come back. kube-api-test stops the whole control plane
 * when its etcd exits unexpectedly, so the stop goes through its own {@code stopEtcd}, which it
 * then takes for intended; the data directories stay until the control plane stops. The restarted
 * process is recorded for the next run's reaper and ended with the control plane ({@link
 * #endRestarted}).
 */
final class EtcdRestart {

  private static final AtomicReference<Process> RESTARTED = new AtomicReference<>();

  private static final Path LOG = Path.of("target", "etcd-restarted.log").toAbsolutePath();

  private final List<String> command;

  private EtcdRestart(List<String> command) {
    this.command = command;
  }

  /** Stops the running etcd; the kube-apiserver stays. {@link #end} starts it again. */
  static EtcdRestart begin(ControlPlane.Running controlPlane) {
    Process restarted = RESTARTED.getAndSet(null);
    EtcdProcess etcd = etcdOf(controlPlane.server());
    ProcessHandle running = restarted != null ? restarted.toHandle() : processOf(etcd).toHandle();
    List<String> command = commandLine(running);
    if (restarted != null) {
      restarted.destroyForcibly();
      waitFor(restarted.toHandle());
    } else {
      etcd.stopEtcd();
    }
    return new EtcdRestart(command);
  }

  /** Starts the same etcd again; returns at once (the API server's {@code /readyz} tells when). */
  void end() {
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
      throw new UncheckedIOException("starting etcd again", e);
    }
  }

  /** Ends an etcd started again (the control plane stops). */
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
      throw new IllegalStateException("etcd " + p.pid() + " still runs", e);
    }
  }

  private static EtcdProcess etcdOf(KubeAPIServer server) {
    return (EtcdProcess) field(server, KubeAPIServer.class, "etcdProcess");
  }

  private static Process processOf(EtcdProcess etcd) {
    return (Process) field(etcd, EtcdProcess.class, "etcdProcess");
  }

  private static Object field(Object owner, Class<?> type, String name) {
    try {
      Field f = type.getDeclaredField(name);
      f.setAccessible(true);
      return f.get(owner);
    } catch (ReflectiveOperationException e) {
      throw new IllegalStateException("kube-api-test's " + name, e);
    }
  }
}
