package io.kdra.benchmarks;

import com.fasterxml.jackson.annotation.JsonInclude;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.fabric8.kubernetes.api.model.Node;
import io.fabric8.kubernetes.api.model.resource.v1.AllocationResult;
import io.fabric8.kubernetes.api.model.resource.v1.ResourceClaim;
import io.kdra.core.alloc.AllocatedState;
import io.kdra.core.alloc.AllocationSnapshot;
import io.kdra.core.alloc.Allocator;
import io.kdra.core.alloc.AllocatorFeatures;
import io.kdra.core.alloc.AllocatorOptions;
import io.kdra.core.alloc.ClaimOutcome;
import io.kdra.core.alloc.InMemoryDeviceClassLister;
import io.kdra.core.alloc.PodScheduler;
import java.io.IOException;
import java.io.PrintStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;

/**
 * Ours against upstream, side by side: the {@link AllocatorWorkload} workloads through dra-core's
 * {@code PodScheduler} (in this JVM) and through {@code dra-alloc-upstream bench} (upstream's
 * {@code k8s.io/dynamic-resource-allocation} allocator, a Go process), on the same objects: the
 * harness writes each workload as one input file that the Go program reads.
 *
 * <p>A workload is a cluster of N nodes whose first {@code --prefill} share of nodes (in name
 * order) is already full (allocated claims in the input), then the first {@code --claims} benchmark
 * claims (one count per entry of {@code --nodes}, fewer on larger clusters so that the slow cases
 * finish), each placed as its own pod, each consuming devices for the next. One pass places them
 * all from the same start. Both sides warm up ({@code --warmup} untimed passes: the JIT once per
 * workload, Go in every process, over its first 20 claims) and then run {@code --rounds} timed
 * passes each, alternating which goes first, so that a load change on the shared machine hits both.
 * Reported: claims/s (claims / summed per-claim time) and per-claim p50/p99, and ours/upstream.
 *
 * <pre>
 * java -cp benchmarks/target/benchmarks.jar io.kdra.benchmarks.UpstreamComparison \
 *     --upstream PATH [--nodes 100,1000,10000] [--scenarios single-gpu,...] [--claims 400,200,40]
 *     [--rounds 5] [--warmup 2] [--prefill 0.5] [--out DIR] [--plot FILE.png]
 * java -cp benchmarks/target/benchmarks.jar io.kdra.benchmarks.UpstreamComparison \
 *     --replot DIR/rows.csv --plot FILE.png
 * </pre>
 */
public final class UpstreamComparison {

  /**
   * Claims in each of Go's warm-up passes: enough to grow its heap and fill the CEL cache (Go has
   * no JIT to warm), few enough that the slow cases do not spend most of the run warming up.
   */
  private static final int GO_WARMUP_CLAIMS = 20;

  private static final ObjectMapper JSON =
      new ObjectMapper().setSerializationInclusion(JsonInclude.Include.NON_NULL);

  /** One workload's measurements, both sides. */
  record Row(String scenario, int nodes, int claims, Stats ours, Stats upstream) {
    double ratio() {
      return ours.claimsPerSecond() / upstream.claimsPerSecond();
    }
  }

  /** Per-claim latencies of all timed passes. */
  record Stats(long[] nanos) {
    double claimsPerSecond() {
      long total = Arrays.stream(nanos).sum();
      return nanos.length / (total / 1e9);
    }

    long percentile(int p) {
      long[] sorted = nanos.clone();
      Arrays.sort(sorted);
      int rank = (p * sorted.length + 99) / 100;
      return sorted[Math.max(rank, 1) - 1];
    }
  }

  private UpstreamComparison() {}

  public static void main(String[] args) throws Exception {
    Map<String, String> o = options(args);
    if (o.containsKey("replot")) {
      // re-draws the plot from a run's rows.csv without measuring again
      ThroughputPlot.write(
          fromCsv(Files.readAllLines(Path.of(o.get("replot")))), Path.of(required(o, "plot")));
      return;
    }
    Path upstream = Path.of(required(o, "upstream"));
    List<Integer> nodeCounts =
        Arrays.stream(o.getOrDefault("nodes", "100,1000,10000").split(","))
            .map(Integer::parseInt)
            .toList();
    List<String> scenarios =
        List.of(
            o.getOrDefault("scenarios", String.join(",", AllocatorWorkload.SCENARIOS)).split(","));
    List<Integer> claimCounts =
        Arrays.stream(o.getOrDefault("claims", "400,200,40").split(","))
            .map(Integer::parseInt)
            .toList();
    int rounds = Integer.parseInt(o.getOrDefault("rounds", "5"));
    int warmup = Integer.parseInt(o.getOrDefault("warmup", "2"));
    double prefill = Double.parseDouble(o.getOrDefault("prefill", "0.5"));
    Path out = Path.of(o.getOrDefault("out", "benchmarks/target/upstream-comparison"));
    Files.createDirectories(out);

    List<Row> rows = new ArrayList<>();
    PrintStream log = System.err;
    for (String scenario : scenarios) {
      for (int i = 0; i < nodeCounts.size(); i++) {
        int nodes = nodeCounts.get(i);
        int maxClaims = claimCounts.get(Math.min(i, claimCounts.size() - 1));
        Row row = measure(scenario, nodes, maxClaims, rounds, warmup, prefill, upstream, out, log);
        rows.add(row);
        log.printf(
            Locale.ROOT,
            "[compare] %s, %,d nodes: ours %,.0f claims/s, upstream %,.0f "
                + "claims/s, ratio %.2f%n",
            scenario,
            nodes,
            row.ours().claimsPerSecond(),
            row.upstream().claimsPerSecond(),
            row.ratio());
      }
    }
    String table = table(rows);
    System.out.print(table);
    Files.writeString(out.resolve("table.md"), table);
    Files.writeString(out.resolve("rows.csv"), csv(rows));
    if (o.containsKey("plot")) {
      ThroughputPlot.write(rows, Path.of(o.get("plot")));
      log.println("[compare] plot written to " + o.get("plot"));
    }
  }

  static Row measure(
      String scenario,
      int nodes,
      int maxClaims,
      int rounds,
      int warmup,
      double prefill,
      Path upstream,
      Path out,
      PrintStream log)
      throws IOException, InterruptedException {
    AllocatorWorkload w = AllocatorWorkload.of(scenario, nodes);
    int fullNodes = (int) Math.floor(nodes * prefill);
    List<ResourceClaim> existing = new ArrayList<>(w.existing());
    for (int n = 0; n < fullNodes; n++) {
      String pool = w.nodes().get(n).getMetadata().getName();
      List<String> gpus = new ArrayList<>();
      for (int g = 0; g < 8; g++) {
        gpus.add("gpu-" + g);
      }
      existing.add(AllocatorWorkload.allocated("full-" + pool, pool, gpus));
    }
    int fits = (nodes - fullNodes) * AllocatorWorkload.claimsPerNode(scenario);
    List<ResourceClaim> claims = w.claims().subList(0, Math.min(maxClaims, fits));

    Path input = out.resolve(scenario + "-" + nodes + ".json");
    List<Object> items = new ArrayList<>();
    items.addAll(w.nodes());
    items.add(w.deviceClass());
    items.addAll(w.slices());
    items.addAll(existing);
    items.addAll(claims);
    Map<String, Object> list = new LinkedHashMap<>();
    list.put("apiVersion", "v1");
    list.put("kind", "List");
    list.put("items", items);
    JSON.writeValue(input.toFile(), list);

    AllocationSnapshot start =
        AllocationSnapshot.of(
            w.slices(),
            InMemoryDeviceClassLister.of(w.deviceClass()),
            AllocatedState.fromClaims(existing));
    AtomicLong ids = new AtomicLong();
    AllocatorOptions options =
        AllocatorOptions.defaults(
            AllocatorFeatures.defaults(),
            () -> "00000000-0000-4000-8000-" + String.format("%012d", ids.incrementAndGet()));
    log.printf(
        Locale.ROOT,
        "[compare] %s, %,d nodes (%,d full), %,d claims a pass: warming " + "up ours (%d passes)%n",
        scenario,
        nodes,
        fullNodes,
        claims.size(),
        warmup);
    for (int i = 0; i < warmup; i++) {
      ourPass(start, w.nodes(), claims, options);
    }
    List<long[]> ours = new ArrayList<>();
    List<long[]> theirs = new ArrayList<>();
    for (int r = 0; r < rounds; r++) {
      // alternate who goes first, so that neither always runs right after the other's GC/exit
      if (r % 2 == 0) {
        ours.add(ourPass(start, w.nodes(), claims, options));
        theirs.add(upstreamPass(upstream, input, warmup, out));
      } else {
        theirs.add(upstreamPass(upstream, input, warmup, out));
        ours.add(ourPass(start, w.nodes(), claims, options));
      }
    }
    return new Row(
        scenario, nodes, claims.size(), new Stats(concat(ours)), new Stats(concat(theirs)));
  }

  /** One timed pass of ours: each claim its own pod, as AllocatorBenchmark does. */
  static long[] ourPass(
      AllocationSnapshot start,
      List<Node> nodes,
      List<ResourceClaim> claims,
      AllocatorOptions options) {
    long[] nanos = new long[claims.size()];
    AllocationSnapshot snapshot = start;
    for (int i = 0; i < claims.size(); i++) {
      long t0 = System.nanoTime();
      PodScheduler.Placement p =
          PodScheduler.schedule(
              new Allocator(snapshot, options), nodes, null, List.of(claims.get(i)));
      if (!p.allocated()) {
        throw new IllegalStateException(
            "benchmark claim "
                + claims.get(i).getMetadata().getName()
                + " not allocated: "
                + ((ClaimOutcome.NotAllocated) p.outcomes().get(0)).explanation().summary());
      }
      AllocationResult result = ((ClaimOutcome.Allocated) p.outcomes().get(0)).result();
      snapshot = snapshot.withAllocated(snapshot.allocated().plus(result));
      nanos[i] = System.nanoTime() - t0;
    }
    return nanos;
  }

  /** One timed pass of upstream's, after {@code warmup} untimed ones in the same process. */
  static long[] upstreamPass(Path binary, Path input, int warmup, Path out)
      throws IOException, InterruptedException {
    Path latencies = out.resolve("upstream-latencies.txt");
    Path stdout = out.resolve("upstream-bench.out");
    Path stderr = out.resolve("upstream-bench.err");
    Process p =
        new ProcessBuilder(
                binary.toString(),
                "bench",
                "--warmup",
                String.valueOf(warmup),
                "--warmup-claims",
                String.valueOf(GO_WARMUP_CLAIMS),
                "--rounds",
                "1",
                "--latencies",
                latencies.toString(),
                input.toString())
            .redirectOutput(stdout.toFile())
            .redirectError(stderr.toFile())
            .start();
    if (!p.waitFor(30, TimeUnit.MINUTES)) {
      p.destroyForcibly();
      throw new IllegalStateException("dra-alloc-upstream bench did not finish in 30 minutes");
    }
    if (p.exitValue() != 0) {
      throw new IllegalStateException(
          "dra-alloc-upstream bench failed (" + p.exitValue() + "): " + Files.readString(stderr));
    }
    JsonNode summary = JSON.readTree(Files.readString(stdout));
    long[] nanos = Files.readAllLines(latencies).stream().mapToLong(Long::parseLong).toArray();
    if (nanos.length != summary.path("claims").asInt()) {
      throw new IllegalStateException(
          "dra-alloc-upstream bench: "
              + nanos.length
              + " latencies for "
              + summary.path("claims").asInt()
              + " claims");
    }
    return nanos;
  }

  static String table(List<Row> rows) {
    StringBuilder b = new StringBuilder();
    b.append(
        "| workload | nodes | claims | ours claims/s | upstream claims/s | ours/upstream "
            + "| ours p50 | ours p99 | upstream p50 | upstream p99 |\n");
    b.append("|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|\n");
    for (Row r : rows) {
      b.append(
          String.format(
              Locale.ROOT,
              "| %s | %,d | %,d | %,.0f | %,.0f | %.2f | %s | %s | " + "%s | %s |%n",
              r.scenario(),
              r.nodes(),
              r.ours().nanos().length,
              r.ours().claimsPerSecond(),
              r.upstream().claimsPerSecond(),
              r.ratio(),
              time(r.ours().percentile(50)),
              time(r.ours().percentile(99)),
              time(r.upstream().percentile(50)),
              time(r.upstream().percentile(99))));
    }
    return b.toString();
  }

  /** The raw numbers, one row per workload, for re-plotting or comparing runs. */
  static String csv(List<Row> rows) {
    StringBuilder b =
        new StringBuilder(
            "workload,nodes,claims,ours_claims_per_s,"
                + "upstream_claims_per_s,ours_p50_ns,ours_p99_ns,upstream_p50_ns,upstream_p99_ns\n");
    for (Row r : rows) {
      b.append(
          String.format(
              Locale.ROOT,
              "%s,%d,%d,%.1f,%.1f,%d,%d,%d,%d%n",
              r.scenario(),
              r.nodes(),
              r.ours().nanos().length,
              r.ours().claimsPerSecond(),
              r.upstream().claimsPerSecond(),
              r.ours().percentile(50),
              r.ours().percentile(99),
              r.upstream().percentile(50),
              r.upstream().percentile(99)));
    }
    return b.toString();
  }

  /**
   * Rows from {@link #csv}: the plot needs only claims/s, so each side's latencies are stood in for
   * by one value per claim that gives the same claims/s.
   */
  static List<Row> fromCsv(List<String> lines) {
    List<Row> rows = new ArrayList<>();
    for (String line : lines.subList(1, lines.size())) {
      String[] f = line.split(",");
      int claims = Integer.parseInt(f[2]);
      rows.add(
          new Row(
              f[0],
              Integer.parseInt(f[1]),
              claims,
              uniform(claims, Double.parseDouble(f[3])),
              uniform(claims, Double.parseDouble(f[4]))));
    }
    return rows;
  }

  private static Stats uniform(int claims, double claimsPerSecond) {
    long[] nanos = new long[claims];
    Arrays.fill(nanos, Math.round(1e9 / claimsPerSecond));
    return new Stats(nanos);
  }

  /** 38 µs, 1.2 ms, 3.4 s. */
  static String time(long nanos) {
    if (nanos < 1_000_000) {
      return String.format(Locale.ROOT, "%.0f µs", nanos / 1e3);
    }
    if (nanos < 1_000_000_000) {
      return String.format(Locale.ROOT, "%.1f ms", nanos / 1e6);
    }
    return String.format(Locale.ROOT, "%.2f s", nanos / 1e9);
  }

  private static long[] concat(List<long[]> parts) {
    return parts.stream().flatMapToLong(Arrays::stream).toArray();
  }

  private static Map<String, String> options(String[] args) {
    Map<String, String> o = new LinkedHashMap<>();
    for (int i = 0; i < args.length; i++) {
      if (!args[i].startsWith("--") || i + 1 >= args.length) {
        throw new IllegalArgumentException("expected --name value pairs, found " + args[i]);
      }
      o.put(args[i].substring(2), args[++i]);
    }
    return o;
  }

  private static String required(Map<String, String> o, String name) {
    String v = o.get(name);
    if (v == null) {
      throw new IllegalArgumentException("missing --" + name);
    }
    return v;
  }
}
