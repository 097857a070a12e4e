package io.kdra.it.nodes;

import io.kdra.it.support.ServiceProcess;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Optional;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;

/**
 * The cgroup of one real node ({@link RealNode}), in every mounted hierarchy: every process of the
 * node (its namespace holder, containerd, the kubelet, the shims and every container, which the
 * kubelet puts below it as its {@code cgroupRoot}) lives in it, so that stopping the node, or
 * reaping what a killed test JVM left, ends exactly the node's processes and nothing else.
 *
 * <p>The name carries the test JVM that owns the node: {@code kdra-node.<pid>.<start ms>.<node>}.
 * {@link #reapLeftovers} ends the nodes of owners that are gone (a run killed with SIGKILL), never
 * those of a run still going, in this checkout or another.
 */
public final class NodeCgroups {

  static final Path ROOT = Path.of("/sys/fs/cgroup");
  private static final Pattern NAME = Pattern.compile("kdra-node\\.(\\d+)\\.(\\d+)\\.([a-z0-9-]+)");

  /** The cgroup's name, also the kubelet's {@code cgroupRoot} (with a leading slash). */
  final String name;

  private NodeCgroups(String name) {
    this.name = name;
  }

  /** The cgroup for {@code node}, owned by this JVM (not created yet). */
  static NodeCgroups forNode(String node) {
    ProcessHandle self = ProcessHandle.current();
    long started = self.info().startInstant().orElse(Instant.EPOCH).toEpochMilli();
    return new NodeCgroups("kdra-node." + self.pid() + "." + started + "." + node);
  }

  /** The owner's pid and start, if {@code name} is a node cgroup's name. */
  record Owner(long pid, long startMillis, String node) {
    boolean alive() {
      return ProcessHandle.of(pid)
          .flatMap(h -> h.info().startInstant())
          .map(i -> i.toEpochMilli() == startMillis)
          .orElse(false);
    }
  }

  static Optional<Owner> owner(String name) {
    Matcher m = NAME.matcher(name);
    if (!m.matches()) {
      return Optional.empty();
    }
    return Optional.of(
        new Owner(Long.parseLong(m.group(1)), Long.parseLong(m.group(2)), m.group(3)));
  }

  /** Mounted hierarchies (v1 controllers and the unified one): directories with cgroup.procs. */
  static List<Path> hierarchies() {
    if (!Files.isDirectory(ROOT)) {
      return List.of();
    }
    if (Files.exists(ROOT.resolve("cgroup.procs"))) {
      return List.of(ROOT); // a pure cgroup v2 host
    }
    try (Stream<Path> dirs = Files.list(ROOT)) {
      return dirs.filter(
              d ->
                  Files.isDirectory(d)
                      && !Files.isSymbolicLink(d)
                      && Files.exists(d.resolve("cgroup.procs")))
          .sorted()
          .toList();
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }

  /** This cgroup in every hierarchy. */
  List<Path> dirs() {
    return hierarchies().stream().map(h -> h.resolve(name)).toList();
  }

  /** Creates the cgroup in every hierarchy (a cpuset needs its parent's cpus and mems first). */
  void create() {
    for (Path dir : dirs()) {
      try {
        Files.createDirectories(dir);
        for (String file : List.of("cpuset.cpus", "cpuset.mems")) {
          Path own = dir.resolve(file);
          if (Files.exists(own) && Files.readString(own).isBlank()) {
            Files.writeString(own, Files.readString(dir.getParent().resolve(file)).trim());
          }
        }
      } catch (IOException e) {
        throw new UncheckedIOException("creating cgroup " + dir, e);
      }
    }
  }

  /** The {@code cgroup.procs} files a process writes its pid to, to join this cgroup. */
  List<Path> procsFiles() {
    return dirs().stream().map(d -> d.resolve("cgroup.procs")).toList();
  }

  /** Pids of every process in the cgroup or below it, in any hierarchy. */
  List<Long> processes() {
    return processes(dirs());
  }

  private static List<Long> processes(List<Path> dirs) {
    List<Long> pids = new ArrayList<>();
    for (Path dir : dirs) {
      if (!Files.isDirectory(dir)) {
        continue;
      }
      try (Stream<Path> walk = Files.walk(dir)) {
        for (Path procs :
            walk.filter(p -> p.getFileName().toString().equals("cgroup.procs")).toList()) {
          for (String line : readLines(procs)) {
            if (!line.isBlank()) {
              long pid = Long.parseLong(line.trim());
              if (!pids.contains(pid)) {
                pids.add(pid);
              }
            }
          }
        }
      } catch (IOException | UncheckedIOException e) {
        // a cgroup removed while walking: its processes are gone
      }
    }
    return pids;
  }

  /**
   * SIGKILL to every process of the cgroup until none is left, then removes it (innermost first) in
   * every hierarchy. Returns how many processes it ended.
   */
  int killAndRemove(Duration timeout) {
    return killAndRemove(dirs(), timeout);
  }

  private static int killAndRemove(List<Path> dirs, Duration timeout) {
    long deadline = System.nanoTime() + timeout.toNanos();
    int killed = 0;
    List<Long> left = processes(dirs);
    while (!left.isEmpty()) {
      for (long pid : left) {
        if (ProcessHandle.of(pid).map(ProcessHandle::destroyForcibly).orElse(false)) {
          killed++;
        }
      }
      if (System.nanoTime() > deadline) {
        throw new IllegalStateException("processes " + left + " survive SIGKILL in " + dirs);
      }
      ServiceProcess.sleep(100);
      left = processes(dirs);
    }
    for (Path dir : dirs) {
      removeTree(dir, deadline);
    }
    return killed;
  }

  /** rmdir of the cgroup and its children, innermost first (a cgroup holds no plain files). */
  private static void removeTree(Path dir, long deadline) {
    if (!Files.isDirectory(dir)) {
      return;
    }
    List<Path> all;
    while (true) {
      try (Stream<Path> walk = Files.walk(dir)) {
        all = walk.filter(Files::isDirectory).sorted(Comparator.reverseOrder()).toList();
        break;
      } catch (IOException | UncheckedIOException e) {
        // removed meanwhile by another stop of the same node (the JVM's shutdown hook and the
        // node's close run at once when a demo is stopped with Ctrl-C): walk what is left
        if (!Files.isDirectory(dir)) {
          return;
        }
        if (System.nanoTime() > deadline) {
          throw new IllegalStateException("walking cgroup " + dir + ": " + e, e);
        }
        ServiceProcess.sleep(100);
      }
    }
    for (Path d : all) {
      // a cgroup whose last task just exited may stay busy for a moment
      while (true) {
        try {
          Files.deleteIfExists(d);
          break;
        } catch (IOException e) {
          if (System.nanoTime() > deadline) {
            throw new UncheckedIOException("removing cgroup " + d, e);
          }
          ServiceProcess.sleep(100);
        }
      }
    }
  }

  /** The names of the node cgroups that the JVM {@code pid} owns, in any hierarchy. */
  public static List<String> ownedBy(long pid) {
    List<String> names = new ArrayList<>();
    for (Path h : hierarchies()) {
      try (Stream<Path> dirs = Files.list(h)) {
        dirs.map(d -> d.getFileName().toString())
            .filter(n -> owner(n).map(o -> o.pid() == pid).orElse(false))
            .filter(n -> !names.contains(n))
            .forEach(names::add);
      } catch (IOException e) {
        throw new UncheckedIOException(e);
      }
    }
    return names;
  }

  /** Pids of every process in the node cgroup {@code name} or below it, in any hierarchy. */
  public static List<Long> processesOf(String name) {
    return new NodeCgroups(name).processes();
  }

  /**
   * Ends and removes the node cgroups whose owning JVM is gone: what a test run killed with SIGKILL
   * left (its nodes' processes, and with them their mount namespaces and mounts). Returns the names
   * of the nodes it reaped.
   */
  public static List<String> reapLeftovers() {
    List<String> names = new ArrayList<>();
    for (Path h : hierarchies()) {
      try (Stream<Path> dirs = Files.list(h)) {
        dirs.map(d -> d.getFileName().toString())
            .filter(n -> owner(n).map(o -> !o.alive()).orElse(false))
            .filter(n -> !names.contains(n))
            .forEach(names::add);
      } catch (IOException e) {
        throw new UncheckedIOException(e);
      }
    }
    for (String n : names) {
      int killed = new NodeCgroups(n).killAndRemove(Duration.ofSeconds(30));
      System.out.printf(
          "[real-node] reaped node %s of a killed run: %d processes ended%n",
          owner(n).map(Owner::node).orElse(n), killed);
    }
    RealNodeFiles.removeMountPoints();
    return names;
  }

  private static List<String> readLines(Path file) {
    try {
      return Files.readAllLines(file);
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }
}
