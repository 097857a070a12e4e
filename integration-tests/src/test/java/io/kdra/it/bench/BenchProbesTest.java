package io.kdra.it.bench;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.assertj.core.api.Assertions.within;

import io.kdra.it.controlplane.UpstreamControllers;
import io.kdra.it.support.ServiceProcess;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/** The scheduling benchmark's parsing of /proc, /metrics and jcmd, and its options. */
class BenchProbesTest {

  @Test
  void cpuTicksAreUtimePlusStimeAlsoWhenTheCommandHasSpacesAndParentheses() {
    String stat =
        "4242 (kube (api) server) S 1 4242 4242 0 -1 4194560 12 0 0 0 150 25 0 0 20"
            + " 0 12 0 100 0 0";
    assertThat(BenchProbes.cpuTicks(stat)).isEqualTo(175);
  }

  @Test
  void rssAndPeakComeFromVmRssAndVmHwm() {
    double[] mem =
        BenchProbes.rssAndPeakMib("Name:\tjava\nVmHWM:\t  409600 kB\n" + "VmRSS:\t  204800 kB\n");
    assertThat(mem).containsExactly(200.0, 400.0);
  }

  @Test
  void requestsAreSummedByVerbAndResourceWithoutNonResourceRequests() {
    String metrics =
        """
        # HELP apiserver_request_total [STABLE] Counter of apiserver requests
        apiserver_request_total{code="201",component="apiserver",dry_run="",group="",resource="pods",scope="resource",subresource="binding",verb="POST",version="v1"} 10
        apiserver_request_total{code="201",component="apiserver",dry_run="",group="",resource="pods",scope="namespace",subresource="",verb="POST",version="v1"} 300
        apiserver_request_total{code="409",component="apiserver",dry_run="",group="",resource="pods",scope="namespace",subresource="",verb="POST",version="v1"} 2
        apiserver_request_total{code="200",component="",dry_run="",group="",resource="",scope="",subresource="/metrics",verb="GET",version=""} 7
        apiserver_request_duration_seconds_count{resource="pods",verb="POST"} 99
        """;
    assertThat(BenchProbes.requests(metrics))
        .containsExactlyInAnyOrderEntriesOf(Map.of("POST pods", 302.0, "POST pods/binding", 10.0));
    assertThat(
            BenchProbes.delta(
                Map.of("POST pods", 2.0, "GET nodes", 5.0),
                Map.of("POST pods", 302.0, "GET nodes", 5.0)))
        .containsExactly(Map.entry("POST pods", 300.0));
  }

  @Test
  void heapAfterGcIsTheUsedOfTheHeapLinesNotMetaspace() {
    String serial =
        """
        12345:
         def new generation   total 9792K, used 1024K [0x00000000e0000000, 0x00000000e0aa0000)
          eden space 8704K,  11% used [0x00000000e0000000, 0x00000000e0880000)
         tenured generation   total 21760K, used 19456K [0x00000000eaaa0000, 0x00000000ec000000)
         Metaspace       used 50000K, committed 51000K, reserved 1097728K
          class space    used 6000K, committed 6500K, reserved 1048576K
        """;
    String g1 =
        """
        12345:
         garbage-first heap   total 262144K, used 51200K [0x00000000f0000000, 0x0000000100000000)
          region size 1024K, 3 young (3072K), 0 survivors (0K)
         Metaspace       used 50000K, committed 51000K, reserved 1097728K
        """;
    assertThat(BenchProbes.heapUsedMib(serial)).isEqualTo(20.0);
    assertThat(BenchProbes.heapUsedMib(g1)).isEqualTo(50.0);
    assertThat(BenchProbes.heapUsedMib("12345:\nno such command\n")).isNaN();
  }

  @ParameterizedTest
  @CsvSource({"0.5, 50", "0.99, 99", "1.0, 100", "0.0, 1"})
  void quantilesAreNearestRank(double q, double expected) {
    List<Double> values =
        java.util.stream.IntStream.rangeClosed(1, 100).mapToObj(i -> (double) i).toList();
    assertThat(BenchProbes.quantile(values, q)).isCloseTo(expected, within(1e-9));
  }

  @Test
  void extraFlagsReplaceDefaultsOfTheSameName() {
    assertThat(
            UpstreamControllers.withFlags(
                List.of(
                    "kube-controller-manager", "--controllers=*", "--v=2", "--leader-elect=false"),
                List.of("--controllers=resourceclaim-controller", "--kube-api-qps=200")))
        .containsExactly(
            "kube-controller-manager",
            "--v=2",
            "--leader-elect=false",
            "--controllers=resourceclaim-controller",
            "--kube-api-qps=200");
  }

  @ParameterizedTest
  @CsvSource({
    "100, 0, single, 300",
    "500, 0, single, 1000",
    "1000, 0, single, 2000",
    "100, 0, match, 200",
    "500, 0, match, 1000",
    "100, 250, match, 250",
    "20, 0, churn, 72",
    "100, 0, churn, 360",
    "20, 40, churn, 72"
  })
  void podsFollowTheIssueTableAndWhatTheWorkloadFits(
      int nodes, int pods, String workload, int expected) {
    assertThat(
            SchedulingBenchmark.Options.pods(new int[] {nodes, pods}, BenchWorkload.of(workload)))
        .isEqualTo(expected);
  }

  @Test
  void optionsDefaultToTheImageJvmAndBothSides() {
    SchedulingBenchmark.Options o =
        SchedulingBenchmark.Options.parse(
            "--sizes", "100:300,500", "--workloads", "first,shared", "--jvm", "test");
    assertThat(o.sizes()).hasSize(2);
    assertThat(o.workloads()).containsExactly(BenchWorkload.FIRST_AVAILABLE, BenchWorkload.SHARED);
    assertThat(o.jvmOptions()).isEqualTo(ServiceProcess.TEST_JVM_OPTIONS);
    assertThat(o.sides()).containsExactly(BenchRun.Side.UPSTREAM, BenchRun.Side.OURS);
    assertThat(SchedulingBenchmark.Options.parse().jvmOptions())
        .isEqualTo(SchedulingBenchmark.IMAGE_JVM_OPTIONS);
  }

  @Test
  void phasesDefaultToColdAndChurnToFiveWaves() {
    SchedulingBenchmark.Options defaults = SchedulingBenchmark.Options.parse();
    assertThat(defaults.phases()).containsExactly(BenchPhase.COLD);
    assertThat(defaults.waves()).isEqualTo(5);

    SchedulingBenchmark.Options o =
        SchedulingBenchmark.Options.parse("--phases", "cold, warm", "--waves", "3");
    assertThat(o.phases()).containsExactly(BenchPhase.COLD, BenchPhase.WARM);
    assertThat(o.waves()).isEqualTo(3);
    assertThatThrownBy(() -> SchedulingBenchmark.Options.parse("--phases", "hot"))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessage("unknown phase hot; one of cold, warm");
    assertThatThrownBy(() -> SchedulingBenchmark.Options.parse("--waves", "-1"))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessage("--waves must be 0 or more, not -1");
  }
}
