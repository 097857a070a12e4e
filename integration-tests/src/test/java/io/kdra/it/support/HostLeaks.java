package io.kdra.it.support;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * What a killed run left on the machine after the clean-up: the comparison of three views of the
 * host ({@link HostSnapshot}: before the run, while it ran, after its clean-up) and of the run's
 * own processes ({@link RunTrace}). Other runs on the machine (tests of other checkouts) make and
 * remove things at the same time, so a thing counts only when it is the killed run's: its
 * processes, their namespaces and the temporary files they named, or a host-wide thing that
 * appeared while it ran and is not another run's by its name.
 */
public final class HostLeaks {

  /** A multi-node cluster's bridge and host veths: its slot. */
  private static final Pattern RUN_LINK = Pattern.compile("kdramn(\\d+)(v\\d+)?");

  /** A node cgroup's name carries its owner's pid. */
  private static final Pattern NODE_CGROUP = Pattern.compile("(^|/)kdra-node\\.(\\d+)\\.");

  private HostLeaks() {}

  /**
   * Every leftover, one line each ("process 123 (kubelet)", "link kdramn3v0", ...); empty when the
   * clean-up left nothing. The shared mount points count only when no other run's node is left
   * (they are its own then).
   */
  public static List<String> find(
      HostSnapshot before, HostSnapshot during, HostSnapshot after, RunTrace run) {
    boolean otherNodesLive =
        after.cgroups().stream()
            .anyMatch(c -> ownerOf(c).map(pid -> pid != run.pid()).orElse(false));
    List<String> leaks = new ArrayList<>();
    run.processes()
        .forEach(
            (pid, p) -> {
              if (p.started().equals(after.processes().get(pid))) {
                leaks.add("process " + pid + " (" + p.command() + ")");
              }
            });
    for (String ns : minus(run.namespaces(), before.namespaces().keySet())) {
      // a namespace number is reused once free: only a process that ran already while the run
      // did can hold the run's own namespace
      for (long holder : after.namespaces().getOrDefault(ns, Set.of())) {
        Long started = after.processes().get(holder);
        if (started != null && started.equals(during.processes().get(holder))) {
          leaks.add("namespace " + ns + " held by process " + holder);
        }
      }
    }
    for (String link : appearedAndStayed(before.links(), during.links(), after.links())) {
      if (!anotherRunsLink(link, run.bridge())) {
        leaks.add("link " + link);
      }
    }
    for (String rule : minus(after.firewall(), before.firewall())) {
      leaks.add("host firewall " + rule);
    }
    for (String mount : appearedAndStayed(before.mounts(), during.mounts(), after.mounts())) {
      leaks.add("mount " + mount);
    }
    for (String cgroup : after.cgroups()) {
      boolean runs = ownerOf(cgroup).map(pid -> pid == run.pid()).orElse(false);
      boolean appeared = during.cgroups().contains(cgroup) && !before.cgroups().contains(cgroup);
      if (runs || (appeared && ownerOf(cgroup).isEmpty())) {
        leaks.add("cgroup " + cgroup);
      }
    }
    for (String entry : minus(run.tempEntries(), before.tempEntries())) {
      if (after.tempEntries().contains(entry)) {
        leaks.add("temporary file " + entry);
      }
    }
    for (String setting : minus(after.sysctls(), before.sysctls())) {
      leaks.add("kernel setting " + setting);
    }
    if (!otherNodesLive) {
      for (String path : minus(after.mountPoints(), before.mountPoints())) {
        leaks.add("mount point " + path);
      }
    }
    return leaks;
  }

  /** Whether {@code link} is a bridge or veth of another run's network (another slot). */
  static boolean anotherRunsLink(String link, String runBridge) {
    Matcher m = RUN_LINK.matcher(link);
    Matcher own = RUN_LINK.matcher(runBridge);
    if (!m.matches()) {
      return false;
    }
    return !own.matches() || !m.group(1).equals(own.group(1));
  }

  /** The pid of the JVM that owns the node cgroup {@code path} is in, if it is one's. */
  static java.util.Optional<Long> ownerOf(String path) {
    Matcher m = NODE_CGROUP.matcher(path);
    return m.find()
        ? java.util.Optional.of(Long.parseLong(m.group(2)))
        : java.util.Optional.empty();
  }

  private static Set<String> appearedAndStayed(
      Set<String> before, Set<String> during, Set<String> after) {
    Set<String> s = minus(during, before);
    s.retainAll(after);
    return s;
  }

  private static Set<String> minus(Set<String> a, Set<String> b) {
    Set<String> s = new TreeSet<>(a);
    s.removeAll(b);
    return s;
  }

  /** A process of the run: when it started (clock ticks after boot) and what it ran. */
  public record RunProcess(Long started, String command) {}

  /**
   * The killed run as seen while it ran.
   *
   * @param pid the run's JVM
   * @param bridge its cluster's bridge
   * @param processes its JVM and every process it started, by pid
   * @param namespaces the namespaces those processes were in ({@code net:[4026532...]})
   * @param tempEntries the entries of the temporary directory they named
   */
  public record RunTrace(
      long pid,
      String bridge,
      Map<Long, RunProcess> processes,
      Set<String> namespaces,
      Set<String> tempEntries) {}
}
