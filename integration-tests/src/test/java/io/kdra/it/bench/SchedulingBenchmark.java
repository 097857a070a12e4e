package io.kdra.it.bench;

import io.kdra.it.support.ServiceProcess;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Instant;
import java.time.ZoneOffset;
import java.time.format.DateTimeFormatter;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Locale;

/**
 * {@code bin/bench-scheduling}: end-to-end scheduling throughput of upstream (kube-scheduler and
 * kube-controller-manager's resourceclaim controller) against our claim-controller on the same
 * objects, side after side, a fresh control plane (kube-apiserver, etcd) for every run ({@link
 * BenchRun}). Writes {@code results.md}, {@code results.csv} and {@code requests.csv} ({@link
 * BenchReport}) after every run. A benchmark, never a test: no build runs it. Runs in {@code
 * integration-tests/} (the harness's paths are relative).
 */
public final class SchedulingBenchmark {

  static final String USAGE =
      """
      usage: bin/bench-scheduling [--build] [--sizes 100,500,1000 | 100:300,...]
        [--workloads single,match,first,shared,adversarial,gang,churn] [--phases cold,warm]
        [--waves N] [--rounds N] [--sides upstream,ours]
        [--jvm image|test|'<flags>'] [--upstream-qps Q] [--upstream-verbosity V]
        [--creators N] [--deadline S] [--stall S] [--out DIR]""";

  /** The claim-controller's JVM as the image runs it in the chart's 768Mi limit. */
  static final List<String> IMAGE_JVM_OPTIONS =
      List.of(
          "-XX:MaxRAM=768m",
          "-XX:MaxRAMPercentage=75",
          "-XX:+UseSerialGC",
          "-Djava.util.logging.manager=org.jboss.logmanager.LogManager");

  /** The command line, parsed. */
  record Options(
      List<int[]> sizes,
      List<BenchWorkload> workloads,
      List<BenchPhase> phases,
      int waves,
      int rounds,
      List<BenchRun.Side> sides,
      String jvm,
      List<String> jvmOptions,
      int upstreamQps,
      int upstreamVerbosity,
      int creators,
      int deadlineSeconds,
      int stallSeconds,
      Path out) {

    static Options parse(String... args) {
      List<int[]> sizes = sizes("100,500,1000");
      List<BenchWorkload> workloads = List.of(BenchWorkload.SINGLE, BenchWorkload.MATCH_ATTRIBUTE);
      List<BenchPhase> phases = List.of(BenchPhase.COLD);
      int waves = 5;
      int rounds = 1;
      List<BenchRun.Side> sides = List.of(BenchRun.Side.UPSTREAM, BenchRun.Side.OURS);
      String jvm = "image";
      int qps = 200;
      int verbosity = 0;
      int creators = 10;
      int deadline = 900;
      int stall = 120;
      Path out = null;
      for (int i = 0; i < args.length; i++) {
        String a = args[i];
        if (a.equals("-h") || a.equals("--help")) {
          throw new IllegalArgumentException("");
        }
        if (i + 1 >= args.length) {
          throw new IllegalArgumentException(a + " needs a value");
        }
        String v = args[++i];
        switch (a) {
          case "--sizes" -> sizes = sizes(v);
          case "--workloads" ->
              workloads =
                  Arrays.stream(v.split(",")).map(String::trim).map(BenchWorkload::of).toList();
          case "--phases" ->
              phases = Arrays.stream(v.split(",")).map(String::trim).map(BenchPhase::of).toList();
          case "--waves" -> waves = Integer.parseInt(v);
          case "--rounds" -> rounds = Integer.parseInt(v);
          case "--sides" ->
              sides =
                  Arrays.stream(v.split(","))
                      .map(String::trim)
                      .map(
                          s ->
                              switch (s) {
                                case "upstream" -> BenchRun.Side.UPSTREAM;
                                case "ours" -> BenchRun.Side.OURS;
                                default -> throw new IllegalArgumentException("unknown side " + s);
                              })
                      .toList();
          case "--jvm" -> jvm = v;
          case "--upstream-qps" -> qps = Integer.parseInt(v);
          case "--upstream-verbosity" -> verbosity = Integer.parseInt(v);
          case "--creators" -> creators = Integer.parseInt(v);
          case "--deadline" -> deadline = Integer.parseInt(v);
          case "--stall" -> stall = Integer.parseInt(v);
          case "--out" -> out = Path.of(v);
          default -> throw new IllegalArgumentException("unknown option " + a);
        }
      }
      if (waves < 0) {
        throw new IllegalArgumentException("--waves must be 0 or more, not " + waves);
      }
      if (out == null) {
        out =
            Path.of(
                "target",
                "bench-scheduling",
                DateTimeFormatter.ofPattern("yyyyMMdd-HHmmss")
                    .withZone(ZoneOffset.UTC)
                    .format(Instant.now()));
      }
      List<String> jvmOptions =
          switch (jvm) {
            case "image" -> IMAGE_JVM_OPTIONS;
            case "test" -> ServiceProcess.TEST_JVM_OPTIONS;
            default -> Arrays.stream(jvm.trim().split("\\s+")).toList();
          };
      return new Options(
          sizes,
          workloads,
          phases,
          waves,
          rounds,
          sides,
          jvm,
          jvmOptions,
          qps,
          verbosity,
          creators,
          deadline,
          stall,
          out.toAbsolutePath());
    }

    /** {@code 100,500} (pods by default) or {@code 100:300,500:1000}. */
    private static List<int[]> sizes(String v) {
      List<int[]> sizes = new ArrayList<>();
      for (String s : v.split(",")) {
        String[] parts = s.trim().split(":");
        int nodes = Integer.parseInt(parts[0]);
        sizes.add(new int[] {nodes, parts.length > 1 ? Integer.parseInt(parts[1]) : 0});
      }
      return sizes;
    }

    /**
     * The pods of a run: as given, else 3 per node up to 100 nodes and 2 per node above (the
     * benchmark's sizes: 100/300, 500/1,000, 1,000/2,000), at most what the workload fits. The
     * {@link BenchWorkload#CHURN} workload's are its fill whatever is given: 90% is what it is.
     */
    static int pods(int[] size, BenchWorkload workload) {
      int nodes = size[0];
      if (workload == BenchWorkload.CHURN) {
        return ChurnPlan.fillPods(nodes);
      }
      int pods = size[1] > 0 ? size[1] : nodes <= 100 ? 3 * nodes : 2 * nodes;
      return size[1] > 0 ? pods : Math.min(pods, workload.maxPodsPerNode * nodes);
    }
  }

  private SchedulingBenchmark() {}

  public static void main(String[] args) {
    Options options;
    try {
      options = Options.parse(args);
    } catch (IllegalArgumentException e) {
      if (!e.getMessage().isEmpty()) {
        System.err.println(e.getMessage());
      }
      System.err.println(USAGE);
      System.exit(2);
      return;
    }
    try {
      Files.createDirectories(options.out());
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
    BenchReport report = new BenchReport(options);
    System.out.printf("[bench] results in %s%n", options.out());
    for (int[] size : options.sizes()) {
      for (BenchWorkload workload : options.workloads()) {
        int pods = Options.pods(size, workload);
        for (BenchPhase phase : options.phases()) {
          for (int round = 1; round <= options.rounds(); round++) {
            for (BenchRun.Side side : options.sides()) {
              run(options, report, size[0], pods, workload, phase, round, side);
            }
          }
        }
      }
    }
    System.out.printf("[bench] done; %s%n", options.out().resolve("results.md"));
    // the harness's shutdown hooks end anything still running
    System.exit(0);
  }

  private static void run(
      Options options,
      BenchReport report,
      int nodes,
      int pods,
      BenchWorkload workload,
      BenchPhase phase,
      int round,
      BenchRun.Side side) {
    // the pods too: --sizes 20:40,20:60 are two runs of 20 nodes
    String id =
        side.key + "-" + workload.key() + "-" + phase.key + "-" + nodes + "-" + pods + "-r" + round;
    Path logDir = options.out().resolve("logs").resolve(id);
    System.out.printf(
        "[bench] %s: %d nodes x %s GPUs, %d pods, %s%n",
        id, nodes, BenchWorkload.GPUS_PER_NODE_TEXT, pods, workload.description);
    try {
      BenchRun.Result r =
          new BenchRun(options, side, nodes, pods, workload, phase, round, logDir).run();
      report.add(r);
      System.out.printf(
          "[bench] %s: %d/%d bound in %.1f s, %.1f pods/s, p50 %.0f ms,"
              + " p99 %.0f ms, %.0f CPU ms/pod, %.1f API requests/pod, load %.1f;%s %s%n",
          id,
          r.bound(),
          r.pods(),
          r.seconds(),
          r.podsPerSecond(),
          r.p50Ms(),
          r.p99Ms(),
          r.cpuMsPerPod(),
          r.requestsPerPod(),
          r.loadMean(),
          r.churn() == null
              ? ""
              : String.format(
                  Locale.ROOT,
                  " waves: %d/%d bound, p50/p90/p99 %.0f/%.0f/%.0f ms, %.0f CPU ms/pod;",
                  r.churn().bound(),
                  r.churn().wavePods(),
                  r.churn().latency().p50Ms(),
                  r.churn().latency().p90Ms(),
                  r.churn().latency().p99Ms(),
                  r.churn().cpuMsPerPod()),
          r.problems().isEmpty() ? "check ok" : String.join("; ", r.problems()));
    } catch (RuntimeException e) {
      System.out.printf("[bench] %s failed: %s (logs in %s)%n", id, e, logDir);
      report.failed(id, e);
    }
  }
}
