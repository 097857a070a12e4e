package io.kdra.it.controlplane;

import io.fabric8.kubeapitest.KubeAPIServer;
import io.fabric8.kubeapitest.process.EtcdProcess;
import java.lang.reflect.Field;
import java.nio.file.Path;
import java.util.List;

/**
 * etcd stopped under the running kube-apiserver and started again on the same data, address and
 * flags, as a restarted etcd member would come back. kube-api-test stops the whole control plane
 * when its etcd exits unexpectedly, so the stop goes through its own {@code stopEtcd}, which it
 * then takes for intended; the data directories stay until the control plane stops. The restarted
 * process is recorded for the next run's reaper and ended with the control plane ({@link
 * #endRestarted}).
 */
public final class EtcdRestart {

  private static final RestartedProcess ETCD =
      new RestartedProcess("etcd", Path.of("target", "etcd-restarted.log").toAbsolutePath());

  private final List<String> command;

  private EtcdRestart(List<String> command) {
    this.command = command;
  }

  /** Stops the running etcd; the kube-apiserver stays. {@link #end} starts it again. */
  public static EtcdRestart begin(ControlPlane.Running controlPlane) {
    EtcdProcess etcd = etcdOf(controlPlane.server());
    return new EtcdRestart(ETCD.stop(() -> processOf(etcd).toHandle(), etcd::stopEtcd));
  }

  /** Starts the same etcd again; returns at once (the API server's {@code /readyz} tells when). */
  public void end() {
    ETCD.start(command);
  }

  /** Ends an etcd started again (the control plane stops). */
  static void endRestarted() {
    ETCD.endRestarted();
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
