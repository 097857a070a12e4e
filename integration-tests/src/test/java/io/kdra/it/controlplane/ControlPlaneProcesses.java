package io.kdra.it.controlplane;

import io.kdra.it.support.Leftovers;
import io.kdra.it.support.ServiceProcess;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.regex.Pattern;

/**
 * kube-apiserver and etcd as kube-api-test starts them: children of the test JVM, which stop only
 * when the JVM stops them. A JVM killed with SIGKILL leaves them running with etcd's temporary data
 * and WAL directories, so their pids and directories are recorded at start ({@link
 * Leftovers#machineWide}: a next run in another checkout, or after {@code mvn clean}, finds them
 * too), and {@link #reapLeftovers()} ends and deletes them before the next control plane starts (as
 * {@link ServiceProcess#killLeftovers()} does for the services). A shutdown hook covers an ordinary
 * JVM exit that skips the JUnit clean-up.
 */
public final class ControlPlaneProcesses {

  private static final Path RECORDS = Leftovers.machineWide("control-plane");

  /** The prefix of the control plane's own directory (keys, link to the binaries). */
  static final String PRIVATE_DIR_PREFIX = "kdra-control-plane";

  /**
   * kube-api-test's etcd directories ({@code Files.createTempDirectory("etcddata"|"etcdwal")}) and
   * the control plane's own directory.
   */
  private static final Pattern DIRECTORIES =
      Pattern.compile("etcd(data|wal)[0-9]+|" + PRIVATE_DIR_PREFIX + "[0-9]+");

  private ControlPlaneProcesses() {}

  static Leftovers leftovers() {
    return new Leftovers(RECORDS, DIRECTORIES);
  }

  /**
   * Records a process this JVM started beside the control plane (Karpenter, say) and the
   * directories it uses: a killed run's are ended by the next run's {@link #reapLeftovers}.
   */
  public static void record(Process process, List<Path> directories) {
    Leftovers.entry(process.toHandle(), directories).ifPresent(e -> leftovers().record(List.of(e)));
  }

  /** What is recorded now, of runs still going and of killed ones. */
  public static List<Leftovers.Entry> recorded() {
    return leftovers().recorded();
  }

  /** Ends what a killed test JVM left running, before a new control plane starts. */
  public static void reapLeftovers() {
    for (Leftovers.Entry e : leftovers().reap()) {
      System.out.printf(
          "[control-plane] ended leftover %s (pid %d) of a killed test run%n",
          Path.of(e.executable()).getFileName(), e.pid());
    }
  }

  /**
   * A new directory of this JVM's own (0700, in {@code java.io.tmpdir}) for a control plane's keys
   * and data, recorded at once: a JVM killed before the processes that use it are recorded leaves
   * none.
   */
  public static Path privateDirectory() {
    try {
      Path dir = java.nio.file.Files.createTempDirectory(PRIVATE_DIR_PREFIX);
      leftovers().record(List.of(Leftovers.directoriesOf(ProcessHandle.current(), List.of(dir))));
      return dir;
    } catch (java.io.IOException e) {
      throw new java.io.UncheckedIOException(e);
    }
  }

  /**
   * Records the JVM's children that run a binary from {@code binaries} (kube-apiserver, etcd), with
   * etcd's data and WAL directories from its command line and the control plane's own directory
   * {@code privateDir}.
   */
  static void record(Path binaries, Path privateDir) {
    String dir = binaries.toAbsolutePath().normalize() + "/";
    List<Leftovers.Entry> entries = new ArrayList<>();
    List<ProcessHandle> found = new ArrayList<>();
    ProcessHandle.current()
        .children()
        .filter(h -> h.info().command().map(c -> c.startsWith(dir)).orElse(false))
        .forEach(
            h ->
                Leftovers.entry(h, withPrivate(directories(h), privateDir))
                    .ifPresent(
                        e -> {
                          entries.add(e);
                          found.add(h);
                        }));
    leftovers().record(entries);
    // the services first: stopping gracefully, they still call the API server
    Runtime.getRuntime()
        .addShutdownHook(
            new Thread(
                () -> {
                  ServiceProcess.endAll();
                  found.forEach(ProcessHandle::destroyForcibly);
                },
                "control-plane-reaper"));
  }

  private static List<Path> withPrivate(List<Path> dirs, Path privateDir) {
    List<Path> all = new ArrayList<>(dirs);
    all.add(privateDir.toAbsolutePath());
    return all;
  }

  /** The values of {@code -data-dir} and {@code -wal-dir} (one or two dashes). */
  public static List<Path> directories(ProcessHandle process) {
    String[] args = process.info().arguments().orElse(new String[0]);
    List<Path> dirs = new ArrayList<>();
    for (int i = 0; i + 1 < args.length; i++) {
      if (args[i].matches("--?(data|wal)-dir")) {
        dirs.add(Path.of(args[i + 1]));
      }
    }
    return dirs;
  }
}
