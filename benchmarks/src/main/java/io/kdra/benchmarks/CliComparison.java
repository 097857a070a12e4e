package io.kdra.benchmarks;

import com.fasterxml.jackson.annotation.JsonInclude;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.dataformat.yaml.YAMLFactory;
import com.fasterxml.jackson.dataformat.yaml.YAMLGenerator;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.PodBuilder;
import io.fabric8.kubernetes.api.model.resource.v1.ResourceClaimTemplate;
import io.fabric8.kubernetes.api.model.resource.v1.ResourceClaimTemplateBuilder;
import java.io.IOException;
import java.io.PrintStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.function.ToDoubleFunction;

/**
 * {@code dra-alloc} as a process against {@code dra-alloc-upstream} (upstream's allocator behind
 * the same command line) on the same dump: whole-process CPU seconds (user + sys, from {@code
 * /usr/bin/time}), start-up, parsing and printing included, as a user running the command pays
 * them.
 *
 * <p>{@code --baseline CMD} adds a third side (for example {@code bin/dra-alloc} of a checkout of
 * the commit before a change), run in the same rounds, for before/after ratios from one run.
 *
 * <p>Each workload is one file ({@code kind: List}; JSON, or YAML with {@code --format yaml}, as
 * {@code kubectl get -o json} or {@code -o yaml} prints it): the {@link AllocatorWorkload} cluster
 * of N nodes x 8 GPUs (Nodes, the DeviceClass, one ResourceSlice per node, the claims allocated
 * before), one ResourceClaimTemplate and P pods that each reference it; {@code parse-only} is the
 * single-gpu cluster without template and pods, so both sides read the dump and allocate nothing;
 * {@code first-available-a100-free} is first-available without the claims that hold every node's
 * A100, so the first choice is free (on the first nodes; later pods scan further). Each round runs
 * every workload on every side, rotating which side goes first; the table shows each side's median
 * CPU over the rounds and the ratio of the medians (ours / upstream; below 1: we use less). Before
 * timing, each workload runs once per side with {@code -o summary} and the two outputs must be
 * equal (the same devices for every claim).
 *
 * <pre>
 * java -cp benchmarks/target/benchmarks.jar io.kdra.benchmarks.CliComparison \
 *     --ours bin/dra-alloc --upstream PATH [--baseline CMD] [--nodes 1000] [--pods 500]
 *     [--rounds 3] [--format json|yaml] [--output yaml] [--out DIR]
 *     [--workloads parse-only,single-gpu,pcie-4gpu,first-available,first-available-a100-free]
 * </pre>
 */
public final class CliComparison {

  static final String PARSE_ONLY = "parse-only";

  /** first-available with every node's A100 free: the first choice wins on the first nodes. */
  static final String FIRST_AVAILABLE_FREE = "first-available-a100-free";

  static final List<String> WORKLOADS =
      List.of(PARSE_ONLY, "single-gpu", "pcie-4gpu", "first-available", FIRST_AVAILABLE_FREE);

  private static final List<String> SIDE_NAMES = List.of("ours", "upstream", "baseline");

  private static final ObjectMapper JSON =
      new ObjectMapper().setSerializationInclusion(JsonInclude.Include.NON_NULL);
  private static final ObjectMapper YAML =
      new ObjectMapper(
              YAMLFactory.builder()
                  .disable(YAMLGenerator.Feature.WRITE_DOC_START_MARKER)
                  .enable(YAMLGenerator.Feature.MINIMIZE_QUOTES)
                  .build())
          .setSerializationInclusion(JsonInclude.Include.NON_NULL);

  /** One process run: CPU (user + sys) and wall seconds, peak RSS in KiB. */
  record Run(double user, double sys, double wall, long maxRssKib) {
    double cpu() {
      return user + sys;
    }
  }

  /** One workload's runs, each side; {@code baseline} empty without {@code --baseline}. */
  record Row(String workload, List<Run> ours, List<Run> upstream, List<Run> baseline) {
    double ratio() {
      return median(ours, Run::cpu) / median(upstream, Run::cpu);
    }
  }

  private CliComparison() {}

  public static void main(String[] args) throws Exception {
    Map<String, String> o = options(args);
    List<String> ours = List.of(required(o, "ours").split(" "));
    List<String> upstream = List.of(required(o, "upstream"));
    // optional third side, e.g. the command of the commit before a change: before/after
    // and upstream from one run
    List<String> baseline =
        o.containsKey("baseline") ? List.of(o.get("baseline").split(" ")) : List.of();
    int nodes = Integer.parseInt(o.getOrDefault("nodes", "1000"));
    int pods = Integer.parseInt(o.getOrDefault("pods", "500"));
    int rounds = Integer.parseInt(o.getOrDefault("rounds", "3"));
    String output = o.getOrDefault("output", "yaml");
    // the dump as kubectl get -o json (default) or -o yaml prints it
    String format = o.getOrDefault("format", "json");
    if (!List.of("json", "yaml").contains(format)) {
      throw new IllegalArgumentException("--format must be json or yaml, not " + format);
    }
    List<String> workloads =
        List.of(o.getOrDefault("workloads", String.join(",", WORKLOADS)).split(","));
    Path out = Path.of(o.getOrDefault("out", "benchmarks/target/cli-comparison"));
    Files.createDirectories(out);
    PrintStream log = System.err;

    Map<String, Path> files = new LinkedHashMap<>();
    for (String w : workloads) {
      Path file = out.resolve(w + "-" + nodes + "x8-" + pods + "pods." + format);
      write(w, nodes, pods, file, format.equals("yaml") ? YAML : JSON);
      files.put(w, file);
      log.printf(Locale.ROOT, "[cli] %s: %s (%,d bytes)%n", w, file, Files.size(file));
      String a = summary("ours", ours, file, out);
      String b = summary("upstream", upstream, file, out);
      if (!a.equals(b)) {
        throw new IllegalStateException(
            w
                + ": the two summaries differ: see "
                + out.resolve("summary-ours.txt")
                + " and "
                + out.resolve("summary-upstream.txt"));
      }
    }
    List<List<String>> sides = new ArrayList<>(List.of(ours, upstream));
    if (!baseline.isEmpty()) {
      sides.add(baseline);
    }
    // runs.get(side).get(workload): the runs of one side on one workload
    List<Map<String, List<Run>>> runs = new ArrayList<>();
    sides.forEach(x -> runs.add(new LinkedHashMap<>()));
    for (int r = 0; r < rounds; r++) {
      for (String w : workloads) {
        List<String> flags = List.of("-o", output, files.get(w).toString());
        // rotate who goes first, so that no side always runs right after another
        StringBuilder line = new StringBuilder();
        for (int k = 0; k < sides.size(); k++) {
          int side = (r + k) % sides.size();
          Run run = timed(sides.get(side), flags, out);
          runs.get(side).computeIfAbsent(w, x -> new ArrayList<>()).add(run);
          line.append(String.format(Locale.ROOT, " %s %.2f s", SIDE_NAMES.get(side), run.cpu()));
        }
        log.printf(Locale.ROOT, "[cli] round %d, %s (CPU):%s%n", r + 1, w, line);
      }
    }
    List<Row> rows =
        workloads.stream()
            .map(
                w ->
                    new Row(
                        w,
                        runs.get(0).get(w),
                        runs.get(1).get(w),
                        sides.size() > 2 ? runs.get(2).get(w) : List.of()))
            .toList();
    String table = table(rows, nodes, pods);
    System.out.print(table);
    Files.writeString(out.resolve("table.md"), table);
  }

  /** The dump of one workload, as one {@code kind: List} JSON file. */
  static void write(String workload, int nodes, int pods, Path file, ObjectMapper mapper)
      throws IOException {
    boolean parseOnly = workload.equals(PARSE_ONLY);
    boolean a100Free = workload.equals(FIRST_AVAILABLE_FREE);
    AllocatorWorkload w =
        AllocatorWorkload.of(
            parseOnly ? "single-gpu" : a100Free ? "first-available" : workload, nodes);
    List<Object> items = new ArrayList<>();
    items.addAll(w.nodes());
    items.add(w.deviceClass());
    items.addAll(w.slices());
    if (!a100Free) {
      items.addAll(w.existing()); // in first-available: the claims holding every A100
    }
    if (!parseOnly) {
      ResourceClaimTemplate template =
          new ResourceClaimTemplateBuilder()
              .withNewMetadata()
              .withName(workload)
              .withNamespace("bench")
              .endMetadata()
              .withNewSpec()
              .withSpec(w.claims().get(0).getSpec())
              .endSpec()
              .build();
      items.add(template);
      for (int i = 0; i < pods; i++) {
        items.add(pod(String.format("pod-%04d", i), workload));
      }
    }
    Map<String, Object> list = new LinkedHashMap<>();
    list.put("apiVersion", "v1");
    list.put("kind", "List");
    list.put("items", items);
    mapper.writeValue(file.toFile(), list);
  }

  private static Pod pod(String name, String template) {
    return new PodBuilder()
        .withNewMetadata()
        .withName(name)
        .withNamespace("bench")
        .endMetadata()
        .withNewSpec()
        .addNewContainer()
        .withName("main")
        .withImage("example.com/app:1")
        .withNewResources()
        .addNewClaim()
        .withName("gpu")
        .endClaim()
        .endResources()
        .endContainer()
        .addNewResourceClaim()
        .withName("gpu")
        .withResourceClaimTemplateName(template)
        .endResourceClaim()
        .endSpec()
        .build();
  }

  /** {@code -o summary} of one side, untimed, for the check that both decide the same. */
  private static String summary(String side, List<String> command, Path file, Path out)
      throws IOException, InterruptedException {
    Path stdout = out.resolve("summary-" + side + ".txt");
    List<String> cmd = new ArrayList<>(command);
    cmd.addAll(List.of("-o", "summary", file.toString()));
    Process p =
        new ProcessBuilder(cmd)
            .redirectOutput(stdout.toFile())
            .redirectError(out.resolve("summary-" + side + ".err").toFile())
            .start();
    finish(p, cmd);
    return Files.readString(stdout);
  }

  /** One run under {@code /usr/bin/time}, its output discarded. */
  static Run timed(List<String> command, List<String> flags, Path out)
      throws IOException, InterruptedException {
    Path times = out.resolve("time.txt");
    List<String> cmd =
        new ArrayList<>(List.of("/usr/bin/time", "-f", "%U %S %e %M", "-o", times.toString()));
    cmd.addAll(command);
    cmd.addAll(flags);
    Process p =
        new ProcessBuilder(cmd)
            .redirectOutput(ProcessBuilder.Redirect.DISCARD)
            .redirectError(out.resolve("timed.err").toFile())
            .start();
    finish(p, cmd);
    List<String> lines = Files.readAllLines(times);
    String[] f = lines.get(lines.size() - 1).trim().split(" ");
    return new Run(
        Double.parseDouble(f[0]),
        Double.parseDouble(f[1]),
        Double.parseDouble(f[2]),
        Long.parseLong(f[3]));
  }

  private static void finish(Process p, List<String> cmd) throws InterruptedException {
    if (!p.waitFor(30, TimeUnit.MINUTES)) {
      p.destroyForcibly();
      throw new IllegalStateException(String.join(" ", cmd) + ": did not finish in 30 min");
    }
    // 1 is "some claim not allocated", which a workload may mean; 2 is bad input
    if (p.exitValue() > 1) {
      throw new IllegalStateException(String.join(" ", cmd) + ": exit status " + p.exitValue());
    }
  }

  static String table(List<Row> rows, int nodes, int pods) {
    boolean baseline = !rows.get(0).baseline().isEmpty();
    StringBuilder b = new StringBuilder();
    b.append(
        String.format(
            Locale.ROOT,
            "%,d nodes x 8 GPUs, %,d pods; CPU = user + sys seconds, " + "median of %d rounds%n%n",
            nodes,
            pods,
            rows.get(0).ours().size()));
    b.append(
        "| workload |"
            + (baseline ? " baseline CPU s | baseline/upstream |" : "")
            + " ours CPU s | upstream CPU s | ours/upstream | ours wall s | upstream wall s "
            + "| ours max RSS MiB | upstream max RSS MiB |\n");
    b.append("|---|" + (baseline ? "---:|---:|" : "") + "---:|---:|---:|---:|---:|---:|---:|\n");
    for (Row r : rows) {
      double up = median(r.upstream(), Run::cpu);
      String before =
          baseline
              ? String.format(
                  Locale.ROOT,
                  " %.2f | %.2f |",
                  median(r.baseline(), Run::cpu),
                  median(r.baseline(), Run::cpu) / up)
              : "";
      b.append(
          String.format(
              Locale.ROOT,
              "| %s |%s %.2f | %.2f | %.2f | %.2f | %.2f | %d | %d |%n",
              r.workload(),
              before,
              median(r.ours(), Run::cpu),
              up,
              r.ratio(),
              median(r.ours(), Run::wall),
              median(r.upstream(), Run::wall),
              Math.round(median(r.ours(), x -> x.maxRssKib()) / 1024),
              Math.round(median(r.upstream(), x -> x.maxRssKib()) / 1024)));
    }
    return b.toString();
  }

  static double median(List<Run> runs, ToDoubleFunction<Run> f) {
    double[] v = runs.stream().mapToDouble(f).sorted().toArray();
    int n = v.length;
    return n % 2 == 1 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
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
