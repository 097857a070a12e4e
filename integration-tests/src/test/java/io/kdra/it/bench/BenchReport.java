package io.kdra.it.bench;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;

/**
 * {@link SchedulingBenchmark}'s results, rewritten after every run: {@code results.md} (one row per
 * run, then ours/upstream ratios per size, workload and phase, then the churn runs' waves), {@code
 * results.csv} (the same runs, every process's CPU and memory, the waves' figures) and {@code
 * requests.csv} (API requests by verb and resource per run).
 */
final class BenchReport {

  private final SchedulingBenchmark.Options options;
  private final List<BenchRun.Result> results = new ArrayList<>();
  private final List<String> failures = new ArrayList<>();

  BenchReport(SchedulingBenchmark.Options options) {
    this.options = options;
  }

  void add(BenchRun.Result r) {
    results.add(r);
    write();
  }

  void failed(String id, RuntimeException e) {
    failures.add(id + ": " + e);
    write();
  }

  private void write() {
    write("results.md", markdown());
    write("results.csv", csv());
    write("requests.csv", requestsCsv());
  }

  String markdown() {
    StringBuilder md = new StringBuilder();
    md.append("Sides: upstream = kube-scheduler + kube-controller-manager (")
        .append(
            options.upstreamQps() > 0
                ? "--kube-api-qps="
                    + options.upstreamQps()
                    + " --kube-api-burst="
                    + 2 * options.upstreamQps()
                : "default QPS")
        .append(", --controllers=resourceclaim-controller); ours = claim-controller, JVM `")
        .append(String.join(" ", options.jvmOptions()))
        .append(
            "`. Load: 1-minute load average"
                + " during the run (mean/max). CPU: ms per pod, by process.\n\n");
    md.append(
        "| side | nodes / pods | workload | phase | round | bound | s (pods created in) | pods/s"
            + " | p50 / p99 ms to bind | CPU ms/pod: apiserver, etcd, scheduler+KCM or controller"
            + " (total) | API requests/pod | controller RSS / peak / heap after GC MiB | load"
            + " | check |\n");
    md.append("|---|---|---|---|---|---|---|---|---|---|---|---|---|---|\n");
    for (BenchRun.Result r : results) {
      double api = r.cpuMs().getOrDefault("kube-apiserver", 0.0) / r.pods();
      double etcd = r.cpuMs().getOrDefault("etcd", 0.0) / r.pods();
      double scheduling = r.cpuMsPerPod() - api - etcd;
      double[] mem = r.memoryMib().get("claim-controller");
      md.append(
          String.format(
              Locale.ROOT,
              "| %s | %d / %d | %s | %s | %d | %d | %.1f (%.1f) | %.1f | %.0f / %.0f"
                  + " | %.0f, %.0f, %.0f (%.0f) | %.1f | %s | %.1f / %.1f | %s |%n",
              r.side().key,
              r.nodes(),
              r.pods(),
              r.workload().key(),
              r.phase().key,
              r.round(),
              r.bound(),
              r.seconds(),
              r.createSeconds(),
              r.podsPerSecond(),
              r.p50Ms(),
              r.p99Ms(),
              api,
              etcd,
              scheduling,
              r.cpuMsPerPod(),
              r.requestsPerPod(),
              mem == null
                  ? "-"
                  : String.format(
                      Locale.ROOT, "%.0f / %.0f / %.0f", mem[0], mem[1], r.heapAfterGcMib()),
              r.loadMean(),
              r.loadMax(),
              (r.problems().isEmpty() ? "ok" : String.join("; ", r.problems()).replace("|", "/"))
                  + (r.notes().isEmpty() ? "" : "; " + r.notes())));
    }
    md.append(ratios());
    md.append(churn());
    if (!failures.isEmpty()) {
      md.append("\nFailed runs:\n\n");
      failures.forEach(f -> md.append("- ").append(f.replace("\n", " ")).append('\n'));
    }
    return md.toString();
  }

  /** Per size, workload and phase: mean pods/s and CPU per pod of each side, and ours/upstream. */
  private String ratios() {
    Map<String, List<BenchRun.Result>> groups = new LinkedHashMap<>();
    for (BenchRun.Result r : results) {
      groups
          .computeIfAbsent(
              r.nodes() + " / " + r.pods() + " | " + r.workload().key() + " | " + r.phase().key,
              k -> new ArrayList<>())
          .add(r);
    }
    StringBuilder md =
        new StringBuilder(
            "\n| nodes / pods | workload | phase | upstream pods/s | ours"
                + " pods/s | ours / upstream | CPU ms/pod upstream / ours | API requests/pod upstream /"
                + " ours |\n|---|---|---|---|---|---|---|---|\n");
    groups.forEach(
        (key, rs) -> {
          double up = mean(rs, BenchRun.Side.UPSTREAM, BenchRun.Result::podsPerSecond);
          double ours = mean(rs, BenchRun.Side.OURS, BenchRun.Result::podsPerSecond);
          md.append(
              String.format(
                  Locale.ROOT,
                  "| %s | %.1f | %.1f | %.2f | %.0f / %.0f | %.1f /" + " %.1f |%n",
                  key,
                  up,
                  ours,
                  ours / up,
                  mean(rs, BenchRun.Side.UPSTREAM, BenchRun.Result::cpuMsPerPod),
                  mean(rs, BenchRun.Side.OURS, BenchRun.Result::cpuMsPerPod),
                  mean(rs, BenchRun.Side.UPSTREAM, BenchRun.Result::requestsPerPod),
                  mean(rs, BenchRun.Side.OURS, BenchRun.Result::requestsPerPod)));
        });
    return md.toString();
  }

  /**
   * The churn runs' waves: pods created and bound, p50/p90/p99 to bind (all waves together) and CPU
   * per wave pod by process; empty without churn runs.
   */
  private String churn() {
    List<BenchRun.Result> churns = results.stream().filter(r -> r.churn() != null).toList();
    if (churns.isEmpty()) {
      return "";
    }
    StringBuilder md =
        new StringBuilder(
            "\nChurn: after the fill (the rows above), waves that each delete 10% of the pods and"
                + " create as many; time to bind of the waves' pods, CPU per wave pod by process.\n"
                + "\n| side | nodes / pods filled | phase | round | waves x pods | bound"
                + " | p50 / p90 / p99 ms to bind | CPU ms/wave pod: apiserver, etcd,"
                + " scheduler+KCM or controller (total) | s |\n|---|---|---|---|---|---|---|---|---|\n");
    for (BenchRun.Result r : churns) {
      ChurnResult c = r.churn();
      double api = c.cpuMs().getOrDefault("kube-apiserver", 0.0) / c.wavePods();
      double etcd = c.cpuMs().getOrDefault("etcd", 0.0) / c.wavePods();
      md.append(
          String.format(
              Locale.ROOT,
              "| %s | %d / %d | %s | %d | %d x %d | %d | %.0f / %.0f / %.0f"
                  + " | %.0f, %.0f, %.0f (%.0f) | %.1f |%n",
              r.side().key,
              r.nodes(),
              r.pods(),
              r.phase().key,
              r.round(),
              c.waves(),
              c.podsPerWave(),
              c.bound(),
              c.latency().p50Ms(),
              c.latency().p90Ms(),
              c.latency().p99Ms(),
              api,
              etcd,
              c.cpuMsPerPod() - api - etcd,
              c.cpuMsPerPod(),
              c.seconds()));
    }
    return md.toString();
  }

  private static double mean(
      List<BenchRun.Result> rs,
      BenchRun.Side side,
      java.util.function.ToDoubleFunction<BenchRun.Result> f) {
    return rs.stream().filter(r -> r.side() == side).mapToDouble(f).average().orElse(Double.NaN);
  }

  String csv() {
    StringBuilder csv =
        new StringBuilder(
            "side,nodes,pods,workload,phase,round,bound,create_seconds,"
                + "seconds,"
                + "pods_per_s,p50_ms,p99_ms,cpu_ms_per_pod,api_requests_per_pod,"
                + "heap_after_gc_mib,load_mean,load_max,process_cpu_ms,process_rss_peak_mib,"
                + "wave_pods,wave_bound,wave_p50_ms,wave_p90_ms,wave_p99_ms,wave_cpu_ms_per_pod,"
                + "problems,notes\n");
    for (BenchRun.Result r : results) {
      StringBuilder cpu = new StringBuilder();
      r.cpuMs()
          .forEach(
              (k, v) ->
                  cpu.append(cpu.isEmpty() ? "" : " ")
                      .append(k)
                      .append('=')
                      .append(String.format(Locale.ROOT, "%.0f", v)));
      StringBuilder mem = new StringBuilder();
      r.memoryMib()
          .forEach(
              (k, v) ->
                  mem.append(mem.isEmpty() ? "" : " ")
                      .append(k)
                      .append('=')
                      .append(String.format(Locale.ROOT, "%.0f/%.0f", v[0], v[1])));
      csv.append(
          String.format(
              Locale.ROOT,
              "%s,%d,%d,%s,%s,%d,%d,%.2f,%.2f,%.2f,%.0f,%.0f,%.1f,%.2f,%.0f,%.2f,%.2f,%s,%s,%s,%s,%s%n",
              r.side().key,
              r.nodes(),
              r.pods(),
              r.workload().key(),
              r.phase().key,
              r.round(),
              r.bound(),
              r.createSeconds(),
              r.seconds(),
              r.podsPerSecond(),
              r.p50Ms(),
              r.p99Ms(),
              r.cpuMsPerPod(),
              r.requestsPerPod(),
              r.heapAfterGcMib(),
              r.loadMean(),
              r.loadMax(),
              cpu,
              mem,
              waveColumns(r.churn()),
              quote(String.join("; ", r.problems())),
              quote(r.notes())));
    }
    return csv.toString();
  }

  /** The six wave columns of results.csv, empty but for churn runs. */
  private static String waveColumns(ChurnResult c) {
    if (c == null) {
      return ",,,,,";
    }
    return String.format(
        Locale.ROOT,
        "%d,%d,%.0f,%.0f,%.0f,%.1f",
        c.wavePods(),
        c.bound(),
        c.latency().p50Ms(),
        c.latency().p90Ms(),
        c.latency().p99Ms(),
        c.cpuMsPerPod());
  }

  String requestsCsv() {
    StringBuilder csv = new StringBuilder("side,nodes,pods,workload,phase,round,request,count\n");
    for (BenchRun.Result r : results) {
      r.requestsByKind()
          .forEach(
              (k, v) ->
                  csv.append(
                      String.format(
                          Locale.ROOT,
                          "%s,%d,%d,%s,%s,%d,%s,%.0f%n",
                          r.side().key,
                          r.nodes(),
                          r.pods(),
                          r.workload().key(),
                          r.phase().key,
                          r.round(),
                          k,
                          v)));
    }
    return csv.toString();
  }

  private static String quote(String s) {
    return "\"" + s.replace("\"", "\"\"") + "\"";
  }

  private void write(String name, String content) {
    try {
      Files.writeString(options.out().resolve(name), content);
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }
}
