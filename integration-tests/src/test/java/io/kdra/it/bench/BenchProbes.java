package io.kdra.it.bench;

import io.kdra.it.support.Commands;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * What {@link SchedulingBenchmark} reads of the processes and the API server: CPU time and memory
 * from {@code /proc}, request counters from the API server's {@code /metrics}, the heap after a
 * full GC from {@code jcmd}. Parsing is separate from reading, so that it is unit-tested.
 */
final class BenchProbes {

  /** Milliseconds per clock tick of {@code /proc/<pid>/stat} (USER_HZ, 100 on Linux). */
  private static final double MS_PER_TICK = 1000.0 / clockTicks();

  private static final Pattern REQUEST =
      Pattern.compile("^apiserver_request_total\\{(.*)}\\s+(\\S+)$");
  private static final Pattern LABEL = Pattern.compile("(\\w+)=\"((?:[^\"\\\\]|\\\\.)*)\"");

  /** A heap line of {@code GC.heap_info} (Serial, Parallel, G1): {@code total NK, used NK}. */
  private static final Pattern HEAP = Pattern.compile("total (\\d+)K, used (\\d+)K");

  private BenchProbes() {}

  /** User plus system CPU time of the process (all its threads) in milliseconds. */
  static double cpuMillis(long pid) {
    try {
      return cpuTicks(Files.readString(Path.of("/proc", Long.toString(pid), "stat"))) * MS_PER_TICK;
    } catch (IOException e) {
      return Double.NaN;
    }
  }

  /** utime + stime (fields 14 and 15) of a {@code /proc/<pid>/stat} line. */
  static long cpuTicks(String stat) {
    // the command (field 2) may hold spaces and parentheses: fields count from its last ')'
    String[] rest = stat.substring(stat.lastIndexOf(')') + 2).trim().split(" ");
    return Long.parseLong(rest[11]) + Long.parseLong(rest[12]);
  }

  /** {@code VmRSS} and {@code VmHWM} (peak) of the process in MiB; NaN when gone. */
  static double[] rssAndPeakMib(long pid) {
    try {
      return rssAndPeakMib(Files.readString(Path.of("/proc", Long.toString(pid), "status")));
    } catch (IOException e) {
      return new double[] {Double.NaN, Double.NaN};
    }
  }

  static double[] rssAndPeakMib(String status) {
    double rss = Double.NaN;
    double peak = Double.NaN;
    for (String line : status.split("\n")) {
      if (line.startsWith("VmRSS:")) {
        rss = kib(line) / 1024.0;
      } else if (line.startsWith("VmHWM:")) {
        peak = kib(line) / 1024.0;
      }
    }
    return new double[] {rss, peak};
  }

  private static long kib(String line) {
    return Long.parseLong(line.replaceAll("[^0-9]", ""));
  }

  /**
   * The resource requests of an API server's {@code /metrics}, by {@code VERB
   * resource[/subresource]} (summed over codes, scopes and components). Non-resource requests
   * ({@code /metrics}, {@code /healthz}, discovery) are left out.
   */
  static Map<String, Double> requests(String metrics) {
    Map<String, Double> byKind = new TreeMap<>();
    for (String line : metrics.split("\n")) {
      Matcher m = REQUEST.matcher(line);
      if (!m.matches()) {
        continue;
      }
      Map<String, String> labels = new LinkedHashMap<>();
      Matcher l = LABEL.matcher(m.group(1));
      while (l.find()) {
        labels.put(l.group(1), l.group(2));
      }
      String resource = labels.getOrDefault("resource", "");
      if (resource.isEmpty()) {
        continue;
      }
      String sub = labels.getOrDefault("subresource", "");
      String key =
          labels.getOrDefault("verb", "?") + " " + resource + (sub.isEmpty() ? "" : "/" + sub);
      byKind.merge(key, Double.parseDouble(m.group(2)), Double::sum);
    }
    return byKind;
  }

  /** {@code after - before}, by key, without the keys that did not change. */
  static Map<String, Double> delta(Map<String, Double> before, Map<String, Double> after) {
    Map<String, Double> delta = new TreeMap<>();
    after.forEach(
        (k, v) -> {
          double d = v - before.getOrDefault(k, 0.0);
          if (d != 0) {
            delta.put(k, d);
          }
        });
    return delta;
  }

  /**
   * The Java heap in use after a full collection, in MiB: {@code jcmd GC.run}, then the sum of the
   * {@code used} of the heap lines of {@code GC.heap_info}; NaN when jcmd fails.
   */
  static double heapAfterGcMib(long pid) {
    String jcmd = Path.of(System.getProperty("java.home"), "bin", "jcmd").toString();
    if (run(List.of(jcmd, Long.toString(pid), "GC.run")) == null) {
      return Double.NaN;
    }
    String info = run(List.of(jcmd, Long.toString(pid), "GC.heap_info"));
    return info == null ? Double.NaN : heapUsedMib(info);
  }

  static double heapUsedMib(String heapInfo) {
    long used = 0;
    boolean found = false;
    for (String line : heapInfo.split("\n")) {
      // the generations' lines (Serial, Parallel) or the whole heap's (G1); Metaspace's differ
      Matcher m = HEAP.matcher(line);
      if (m.find() && !line.contains("Metaspace")) {
        used += Long.parseLong(m.group(2));
        found = true;
      }
    }
    return found ? used / 1024.0 : Double.NaN;
  }

  /** The 1-minute load average. */
  static double loadAverage() {
    try {
      return Double.parseDouble(Files.readString(Path.of("/proc/loadavg")).split(" ")[0]);
    } catch (IOException | RuntimeException e) {
      return Double.NaN;
    }
  }

  /** The {@code q}-quantile (0..1) of sorted values, nearest rank; NaN when empty. */
  static double quantile(List<Double> sorted, double q) {
    if (sorted.isEmpty()) {
      return Double.NaN;
    }
    int rank = (int) Math.ceil(q * sorted.size());
    return sorted.get(Math.min(sorted.size() - 1, Math.max(0, rank - 1)));
  }

  private static String run(List<String> command) {
    Commands.Result r = Commands.run(Duration.ofSeconds(60), command);
    return r.exitCode() == 0 ? r.output() : null;
  }

  private static long clockTicks() {
    String out = run(List.of("getconf", "CLK_TCK"));
    try {
      return out == null ? 100 : Long.parseLong(out.trim());
    } catch (NumberFormatException e) {
      return 100;
    }
  }
}
