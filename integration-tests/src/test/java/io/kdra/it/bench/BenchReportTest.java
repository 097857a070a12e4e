package io.kdra.it.bench;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Path;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** results.md, results.csv and requests.csv: the phase of every run and churn's wave figures. */
class BenchReportTest {

  private static final Map<String, Double> CPU =
      new LinkedHashMap<>(Map.of("kube-apiserver", 1000.0, "etcd", 200.0));

  private static BenchRun.Result run(
      BenchRun.Side side, BenchWorkload workload, BenchPhase phase, ChurnResult churn) {
    return new BenchRun.Result(
        side,
        20,
        40,
        workload,
        phase,
        1,
        40,
        1.5,
        2.0,
        300,
        900,
        CPU,
        200,
        Map.of("POST pods/binding", 40.0),
        Map.of(),
        Double.NaN,
        1.0,
        2.0,
        churn,
        List.of(),
        "");
  }

  private static ChurnResult churn() {
    // 3 waves of 7: 21 pods created, 20 bound
    Map<String, Double> cpu = new LinkedHashMap<>();
    cpu.put("kube-apiserver", 420.0);
    cpu.put("etcd", 105.0);
    cpu.put("claim-controller", 210.0);
    return new ChurnResult(3, 21, new BindLatency(20, 120, 340, 980), cpu, 4.5);
  }

  @TempDir Path out;

  private BenchReport report(BenchRun.Result... results) {
    BenchReport report =
        new BenchReport(SchedulingBenchmark.Options.parse("--out", out.toString()));
    for (BenchRun.Result r : results) {
      report.add(r);
    }
    return report;
  }

  @Test
  void everyCsvRowSaysItsPhaseAndChurnRowsTheirWaves() {
    BenchReport report =
        report(
            run(BenchRun.Side.OURS, BenchWorkload.SINGLE, BenchPhase.COLD, null),
            run(BenchRun.Side.OURS, BenchWorkload.SINGLE, BenchPhase.WARM, null),
            run(BenchRun.Side.OURS, BenchWorkload.CHURN, BenchPhase.COLD, churn()));

    List<String> csv = report.csv().lines().toList();
    List<String> header = List.of(csv.get(0).split(","));
    assertThat(header)
        .containsSubsequence("side", "nodes", "pods", "workload", "phase", "round", "pods_per_s")
        .containsSubsequence(
            "wave_pods",
            "wave_bound",
            "wave_p50_ms",
            "wave_p90_ms",
            "wave_p99_ms",
            "wave_cpu_ms_per_pod",
            "problems",
            "notes");
    assertThat(csv.get(1)).startsWith("ours,20,40,single,cold,1,40,");
    assertThat(csv.get(2)).startsWith("ours,20,40,single,warm,1,40,");
    int p50 = header.indexOf("wave_p50_ms");
    assertThat(List.of(csv.get(1).split(",")).subList(p50 - 2, p50 + 4))
        .as("no waves: the wave columns are empty")
        .containsExactly("", "", "", "", "", "");
    assertThat(List.of(csv.get(3).split(",")).subList(p50 - 2, p50 + 4))
        .containsExactly("21", "20", "120", "340", "980", "35.0");
    assertThat(report.requestsCsv().lines().toList())
        .startsWith("side,nodes,pods,workload,phase,round,request,count")
        .contains("ours,20,40,single,warm,1,POST pods/binding,40");
  }

  @Test
  void markdownHasThePhaseColumnAndAChurnTable() {
    String md =
        report(
                run(BenchRun.Side.UPSTREAM, BenchWorkload.SINGLE, BenchPhase.WARM, null),
                run(BenchRun.Side.OURS, BenchWorkload.SINGLE, BenchPhase.WARM, null),
                run(BenchRun.Side.OURS, BenchWorkload.SINGLE, BenchPhase.COLD, null),
                run(BenchRun.Side.OURS, BenchWorkload.CHURN, BenchPhase.COLD, churn()))
            .markdown();

    assertThat(md).contains("| side | nodes / pods | workload | phase | round |");
    assertThat(md).contains("| ours | 20 / 40 | single | warm | 1 | 40 |");
    // the ratios: one row per size, workload and phase
    assertThat(md).contains("| 20 / 40 | single | warm | 20.0 | 20.0 | 1.00 |");
    assertThat(md).contains("| 20 / 40 | single | cold | NaN | 20.0 | NaN |");
    assertThat(md)
        .contains(
            "| side | nodes / pods filled | phase | round | waves x pods | bound"
                + " | p50 / p90 / p99 ms to bind |")
        .contains("| ours | 20 / 40 | cold | 1 | 3 x 7 | 20 | 120 / 340 / 980 | 20, 5, 10 (35) |");
  }
}
