package io.kdra.it.bench;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Path;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** results.md, results.csv and requests.csv: the phase of every run. */
class BenchReportTest {

  private static final Map<String, Double> CPU =
      new LinkedHashMap<>(Map.of("kube-apiserver", 1000.0, "etcd", 200.0));

  private static BenchRun.Result run(BenchRun.Side side, BenchWorkload workload, BenchPhase phase) {
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
        List.of(),
        "");
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
  void everyCsvRowSaysItsPhase() {
    BenchReport report =
        report(
            run(BenchRun.Side.OURS, BenchWorkload.SINGLE, BenchPhase.COLD),
            run(BenchRun.Side.OURS, BenchWorkload.SINGLE, BenchPhase.WARM));

    List<String> csv = report.csv().lines().toList();
    assertThat(List.of(csv.get(0).split(",")))
        .containsSubsequence("side", "nodes", "pods", "workload", "phase", "round", "pods_per_s");
    assertThat(csv.get(1)).startsWith("ours,20,40,single,cold,1,40,");
    assertThat(csv.get(2)).startsWith("ours,20,40,single,warm,1,40,");
    assertThat(report.requestsCsv().lines().toList())
        .startsWith("side,nodes,pods,workload,phase,round,request,count")
        .contains("ours,20,40,single,warm,1,POST pods/binding,40");
  }

  @Test
  void markdownHasThePhaseColumnAndRatiosByPhase() {
    String md =
        report(
                run(BenchRun.Side.UPSTREAM, BenchWorkload.SINGLE, BenchPhase.WARM),
                run(BenchRun.Side.OURS, BenchWorkload.SINGLE, BenchPhase.WARM),
                run(BenchRun.Side.OURS, BenchWorkload.SINGLE, BenchPhase.COLD))
            .markdown();

    assertThat(md).contains("| side | nodes / pods | workload | phase | round |");
    assertThat(md).contains("| ours | 20 / 40 | single | warm | 1 | 40 |");
    // the ratios: one row per size, workload and phase
    assertThat(md).contains("| 20 / 40 | single | warm | 20.0 | 20.0 | 1.00 |");
    assertThat(md).contains("| 20 / 40 | single | cold | NaN | 20.0 | NaN |");
  }
}
