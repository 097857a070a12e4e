package io.kdra.it.support;

import io.kdra.it.support.HostLeaks.RunProcess;
import io.kdra.it.support.HostLeaks.RunTrace;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Collection;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.OptionalLong;
import java.util.Set;
import java.util.TreeSet;
import java.util.stream.Stream;

/**
 * What is system-wide on this machine, as seen from the host (the test JVM's namespaces): running
 * processes (pid to start in clock ticks after boot), the namespaces they are in, network links,
 * the host's iptables rules, its mounts, cgroups, the temporary directory's entries, the paths the
 * container runtime and the kubelet hard-code, and the kernel settings they would change. Compared
 * by {@link HostLeaks}.
 */
public record HostSnapshot(
    Map<Long, Long> processes,
    Map<String, Set<Long>> namespaces,
    Set<String> links,
    Set<String> firewall,
    Set<String> mounts,
    Set<String> cgroups,
    Set<String> tempEntries,
    Set<String> mountPoints,
    Set<String> sysctls) {

  private static final Path PROC = Path.of("/proc");
  private static final Path CGROUPS = Path.of("/sys/fs/cgroup");
  private static final List<String> NAMESPACES =
      List.of("net", "mnt", "ipc", "uts", "pid", "cgroup");

  /**
   * The paths a node's containerd, kubelet and CNI plugins use unless told otherwise, and those a
   * DRA driver's chart mounts: none may exist after a run that did not find them.
   */
  static final List<Path> WELL_KNOWN =
      Stream.of(
              "/run/containerd",
              "/run/netns",
              "/run/runc",
              "/var/run/cdi",
              "/etc/cdi",
              "/var/lib/kubelet",
              "/var/lib/containerd",
              "/var/lib/cni",
              "/etc/cni",
              "/opt/cni",
              "/var/log/pods",
              "/var/log/containers")
          .map(Path::of)
          .toList();

  public static Path tempDir() {
    return Path.of(System.getProperty("java.io.tmpdir"));
  }

  public static HostSnapshot take() {
    Map<Long, Long> processes = new HashMap<>();
    for (long pid : pids()) {
      if (!exited(pid)) {
        Leftovers.startTicks(pid).ifPresent(t -> processes.put(pid, t));
      }
    }
    return new HostSnapshot(
        processes,
        namespacesInUse(processes.keySet()),
        readLinks(),
        readFirewall(),
        readMounts(),
        readCgroups(),
        names(tempDir()),
        new TreeSet<>(WELL_KNOWN.stream().filter(Files::exists).map(Path::toString).toList()),
        readSysctls());
  }

  /**
   * The machine-wide kernel settings the kubelet, kube-proxy, the CNI plugins and the harness would
   * set on a real node (each node binds plain files over them, or sets them in its own network
   * namespace): as {@code name=value}.
   */
  static final List<String> SYSCTLS =
      List.of(
          "kernel/panic",
          "kernel/panic_on_oops",
          "kernel/keys/root_maxkeys",
          "kernel/keys/root_maxbytes",
          "vm/overcommit_memory",
          "vm/panic_on_oom",
          "net/ipv4/ip_forward",
          "net/ipv4/conf/all/forwarding",
          "net/ipv4/conf/all/route_localnet",
          "net/ipv6/conf/all/disable_ipv6",
          "net/bridge/bridge-nf-call-iptables",
          "net/bridge/bridge-nf-call-ip6tables",
          "net/netfilter/nf_conntrack_max",
          "net/netfilter/nf_conntrack_tcp_timeout_established",
          "net/netfilter/nf_conntrack_tcp_timeout_close_wait");

  private static Set<String> readSysctls() {
    Set<String> values = new TreeSet<>();
    for (String name : SYSCTLS) {
      try {
        values.add(name + "=" + Files.readString(Path.of("/proc/sys", name)).trim());
      } catch (IOException | UncheckedIOException e) {
        // not on this kernel
      }
    }
    return values;
  }

  /**
   * The run of the JVM {@code jvm}, while it runs: it, every process it started and {@code others}
   * (those of its nodes, which their cgroups hold), their namespaces and the temporary directory's
   * entries they name on their command lines, as working directory or as open files.
   */
  public static RunTrace trace(ProcessHandle jvm, Collection<Long> others, String bridge) {
    Set<Long> pids = new TreeSet<>(others);
    pids.add(jvm.pid());
    jvm.descendants().forEach(h -> pids.add(h.pid()));
    Map<Long, RunProcess> processes = new HashMap<>();
    Set<String> namespaces = new TreeSet<>();
    Set<String> temp = new TreeSet<>();
    String tmp = tempDir().toAbsolutePath().normalize() + "/";
    for (long pid : pids) {
      OptionalLong started = Leftovers.startTicks(pid);
      if (started.isEmpty()) {
        continue; // ended meanwhile
      }
      Path proc = PROC.resolve(Long.toString(pid));
      String command = ProcessHandle.of(pid).flatMap(h -> h.info().command()).orElse("?");
      processes.put(pid, new RunProcess(started.getAsLong(), command));
      namespaces.addAll(namespacesOf(pid));
      for (String named : named(proc)) {
        int at = named.indexOf(tmp);
        if (at >= 0) {
          String rest = named.substring(at + tmp.length());
          String entry = rest.split("[/ =,:]", 2)[0];
          if (!entry.isEmpty()) {
            temp.add(entry);
          }
        }
      }
    }
    return new RunTrace(jvm.pid(), bridge, processes, namespaces, temp);
  }

  /** A process's arguments, working directory and open files. */
  private static List<String> named(Path proc) {
    List<String> named = new java.util.ArrayList<>();
    try {
      named.addAll(List.of(Files.readString(proc.resolve("cmdline")).split("\0")));
      named.add(Files.readSymbolicLink(proc.resolve("cwd")).toString());
      try (Stream<Path> fds = Files.list(proc.resolve("fd"))) {
        for (Path fd : fds.toList()) {
          try {
            named.add(Files.readSymbolicLink(fd).toString());
          } catch (IOException e) {
            // closed meanwhile
          }
        }
      }
    } catch (IOException | UncheckedIOException e) {
      // ended meanwhile
    }
    return named;
  }

  /**
   * Whether the process has exited and waits for its parent to collect its status (a zombie: it
   * holds nothing but its pid; a killed JVM's orphans wait for the machine's init), or is gone.
   */
  static boolean exited(long pid) {
    try {
      String stat = Files.readString(PROC.resolve(pid + "/stat"));
      char state = stat.charAt(stat.lastIndexOf(')') + 2);
      return state == 'Z' || state == 'X';
    } catch (IOException | UncheckedIOException | IndexOutOfBoundsException e) {
      return true;
    }
  }

  private static List<Long> pids() {
    try (Stream<Path> s = Files.list(PROC)) {
      return s.map(p -> p.getFileName().toString())
          .filter(n -> n.chars().allMatch(Character::isDigit))
          .map(Long::parseLong)
          .toList();
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }

  private static Set<String> namespacesOf(long pid) {
    Set<String> ns = new TreeSet<>();
    for (String kind : NAMESPACES) {
      try {
        ns.add(Files.readSymbolicLink(PROC.resolve(pid + "/ns/" + kind)).toString());
      } catch (IOException | UnsupportedOperationException e) {
        // ended meanwhile, or no such namespace kind here
      }
    }
    return ns;
  }

  /** Each namespace some process is in, with the pids of those processes. */
  private static Map<String, Set<Long>> namespacesInUse(Collection<Long> pids) {
    Map<String, Set<Long>> holders = new HashMap<>();
    for (long pid : pids) {
      for (String ns : namespacesOf(pid)) {
        holders.computeIfAbsent(ns, k -> new TreeSet<>()).add(pid);
      }
    }
    return holders;
  }

  private static Set<String> readLinks() {
    Set<String> names = new TreeSet<>();
    for (String line :
        Commands.run(Duration.ofSeconds(30), List.of("ip", "-o", "link", "show"))
            .output()
            .split("\n")) {
      // "<index>: <name>[@<peer>]: ..."; ip also prints warnings ("Peer netns reference is
      // invalid.") among them
      String[] f = line.split(": ", 3);
      if (f.length >= 3 && f[0].matches("\\d+")) {
        names.add(f[1].split("@")[0]);
      }
    }
    return names;
  }

  /** The host's iptables chains and rules (IPv4 and IPv6), without packet counts. */
  private static Set<String> readFirewall() {
    Set<String> rules = new TreeSet<>();
    for (String tool : List.of("iptables-save", "ip6tables-save")) {
      Commands.Result r = Commands.run(Duration.ofSeconds(30), List.of(tool));
      String table = "";
      for (String line : r.output().split("\n")) {
        if (line.startsWith("*")) {
          table = line.substring(1);
        } else if (line.startsWith(":") || line.startsWith("-")) {
          rules.add(tool + " " + table + " " + line.replaceAll(" \\[\\d+:\\d+\\]$", ""));
        }
      }
    }
    return rules;
  }

  /** The host's mounts: mount point, file system type and source. */
  private static Set<String> readMounts() {
    Set<String> mounts = new TreeSet<>();
    for (String line : lines(Path.of("/proc/self/mountinfo"))) {
      String[] f = line.split(" ");
      int dash = List.of(f).indexOf("-");
      if (dash > 4 && dash + 2 < f.length) {
        mounts.add(f[4] + " " + f[dash + 1] + " " + f[dash + 2]);
      }
    }
    return mounts;
  }

  /** Every cgroup in every hierarchy, as {@code <hierarchy>/<path>}. */
  private static Set<String> readCgroups() {
    Set<String> all = new TreeSet<>();
    collectCgroups(CGROUPS, all);
    return all;
  }

  /** Walks by hand: a cgroup removed meanwhile (by another run) must not end the walk. */
  private static void collectCgroups(Path dir, Set<String> all) {
    List<Path> children;
    try (Stream<Path> s = Files.list(dir)) {
      children = s.filter(d -> Files.isDirectory(d) && !Files.isSymbolicLink(d)).toList();
    } catch (IOException | UncheckedIOException e) {
      return; // removed meanwhile
    }
    for (Path child : children) {
      if (Files.exists(child.resolve("cgroup.procs"))) {
        all.add(CGROUPS.relativize(child).toString());
      }
      collectCgroups(child, all);
    }
  }

  private static Set<String> names(Path dir) {
    try (Stream<Path> s = Files.list(dir)) {
      return new TreeSet<>(s.map(p -> p.getFileName().toString()).toList());
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }

  private static List<String> lines(Path file) {
    try {
      return Files.readAllLines(file);
    } catch (IOException | UncheckedIOException e) {
      return List.of();
    }
  }
}
