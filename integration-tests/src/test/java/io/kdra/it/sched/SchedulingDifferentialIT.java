package io.kdra.it.sched;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.fabric8.kubernetes.api.model.Node;
import io.kdra.claimcontroller.domain.NodeFilter;
import io.kdra.claimcontroller.domain.VolumeFilters;
import io.kdra.it.upstream.UpstreamAlloc;
import java.io.IOException;
import java.io.OutputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/**
 * The scheduling differential test: seeded, generated clusters and pods ({@link
 * SchedulingScenarioGenerator}) through kube-scheduler 1.37's default Filter plugins in its
 * framework runtime ({@code dra-alloc-upstream filter}: NodeName, NodeUnschedulable,
 * TaintToleration, NodeAffinity, NodePorts, NodeResourcesFit, VolumeRestrictions, NodeVolumeLimits,
 * VolumeBinding, VolumeZone, PodTopologySpread, InterPodAffinity) and through the
 * claim-controller's {@link NodeFilter}. Both must find the same feasible nodes, and for each
 * rejected node the same first failing plugin with a reason of upstream's ({@link FilterVerdicts}).
 *
 * <p>{@code -Dkdra.sched.scenarios=N} sets the count (default 3000, about 13 s), {@code
 * -Dkdra.sched.seed=S} draws others (default {@link #DEFAULT_SEED}, fixed, so that the build does
 * not depend on the draw; what another seed finds becomes a table row in the claim-controller's
 * domain tests).
 */
class SchedulingDifferentialIT {

  static final long DEFAULT_SEED = 41;

  /**
   * Our reason for a node whose Ready condition is not True. kube-scheduler has no such filter: it
   * relies on the node lifecycle controller's {@code not-ready}/{@code unreachable} NoSchedule
   * taints (TaintToleration), so it places pods on a not-Ready node that is not tainted yet, or
   * whose taint the pod tolerates; we never do. Those nodes are counted, not failures.
   */
  static final String NOT_READY = "node(s) were not ready";

  private static final ObjectMapper JSON = new ObjectMapper();

  @Test
  void feasibleNodesAndReasonsAgreeWithKubeScheduler() throws Exception {
    long seed = Long.getLong("kdra.sched.seed", DEFAULT_SEED);
    int count = Integer.getInteger("kdra.sched.scenarios", 3000);
    System.out.println(
        "Scheduling differential: seed "
            + seed
            + ", "
            + count
            + " scenarios (replay with -Dkdra.sched.seed="
            + seed
            + ")");
    SchedulingScenarioGenerator generator = new SchedulingScenarioGenerator(seed);
    List<SchedulingScenario> scenarios = new ArrayList<>();
    for (int i = 0; i < count; i++) {
      scenarios.add(generator.next());
    }
    List<Map<String, FilterVerdicts.Upstream>> upstream = upstream(scenarios);

    List<String> feasibility = new ArrayList<>();
    List<String> reasons = new ArrayList<>();
    Map<String, Integer> rejectedBy = new TreeMap<>();
    Map<String, Integer> notReady = new TreeMap<>();
    int nodes = 0;
    int feasibleNodes = 0;
    int boundToExisting = 0;
    for (int i = 0; i < scenarios.size(); i++) {
      SchedulingScenario s = scenarios.get(i);
      NodeFilter.Result ours =
          NodeFilter.filter(
              s.pod(), s.nodes(), s.pods(), List.of(), s.namespaceLabels(), s.volumes().objects());
      boundToExisting += boundToExistingVolumes(s, ours.feasible());
      Map<String, FilterVerdicts.Upstream> theirs = upstream.get(i);
      for (FilterVerdicts.Upstream v : theirs.values()) {
        nodes++;
        if (v.feasible()) {
          feasibleNodes++;
        } else {
          rejectedBy.merge(v.plugin(), 1, Integer::sum);
        }
      }
      for (FilterVerdicts.Disagreement d : FilterVerdicts.compare(theirs, ours.rejected())) {
        if (d.ours().filter(NOT_READY::equals).isPresent()) {
          // our Ready check, which upstream does not have: counted, not a failure
          notReady.merge(
              d.upstream().feasible() ? "feasible" : d.upstream().plugin(), 1, Integer::sum);
          continue;
        }
        (d.feasibility() ? feasibility : reasons).add(s.name() + " " + d);
      }
    }
    Path report = writeReport(scenarios, upstream, feasibility, reasons);
    System.out.println(
        "Scheduling differential: "
            + scenarios.size()
            + " scenarios, "
            + nodes
            + " node verdicts ("
            + feasibleNodes
            + " feasible, "
            + boundToExisting
            + " of them with a claim bound to an existing volume; rejected by "
            + rejectedBy
            + "); "
            + feasibility.size()
            + " feasibility and "
            + reasons.size()
            + " reason disagreements; not-Ready nodes that we reject and upstream "
            + notReady
            + "; report in "
            + report);
    assertThat(feasibility).as("nodes on which feasibility differs (see %s)", report).isEmpty();
    assertThat(reasons).as("nodes rejected for another reason (see %s)", report).isEmpty();
  }

  /**
   * The score differential: for the scenarios where both find the same feasible nodes, two or more,
   * kube-scheduler's default Score plugins after NormalizeScore, weighted ({@code
   * dra-alloc-upstream score}), against {@link OurScores}: the set of nodes with the highest total
   * (where either side picks) and every node's total must agree; scenarios where any node's total
   * differs are written to the report with their JSON.
   */
  @Test
  void scoreTotalsAgreeWithKubeScheduler() throws Exception {
    long seed = Long.getLong("kdra.sched.seed", DEFAULT_SEED);
    int count = Integer.getInteger("kdra.sched.scenarios", 3000);
    SchedulingScenarioGenerator generator = new SchedulingScenarioGenerator(seed);
    List<SchedulingScenario> scenarios = new ArrayList<>();
    for (int i = 0; i < count; i++) {
      scenarios.add(generator.next());
    }
    List<JsonNode> upstream = run("score", scenarios);
    List<String> totals = new ArrayList<>();
    List<String> best = new ArrayList<>();
    int compared = 0;
    int scored = 0;
    int capacityScored = 0;
    int capacityLeftOut = 0;
    for (int i = 0; i < scenarios.size(); i++) {
      SchedulingScenario s = scenarios.get(i);
      JsonNode theirs = upstream.get(i);
      List<String> theirFeasible = new ArrayList<>();
      theirs.path("feasible").forEach(n -> theirFeasible.add(n.asText()));
      NodeFilter.Result ours =
          NodeFilter.filter(
              s.pod(), s.nodes(), s.pods(), List.of(), s.namespaceLabels(), s.volumes().objects());
      List<String> ourFeasible =
          ours.feasible().stream().map(n -> n.getMetadata().getName()).sorted().toList();
      if (!ourFeasible.equals(theirFeasible.stream().sorted().toList()) || ourFeasible.size() < 2) {
        continue; // the filter test covers feasibility; one node needs no score
      }
      compared++;
      boolean open = OurScores.capacityChoiceOpen(s, ours.feasible());
      Map<String, Long> mine = OurScores.totals(s, ours.feasible(), !open);
      Map<String, Long> upstreamTotals = new TreeMap<>();
      theirs
          .path("totals")
          .fields()
          .forEachRemaining(e -> upstreamTotals.put(e.getKey(), e.getValue().asLong()));
      if (open && withoutCapacityScore(upstreamTotals, theirs.path("byPlugin"))) {
        capacityLeftOut++;
      } else if (hasVolumeBindingShare(theirs.path("byPlugin"))) {
        capacityScored++;
      }
      scored += mine.size();
      if (!new TreeMap<>(mine).equals(upstreamTotals)) {
        totals.add(
            s.name()
                + ": upstream "
                + upstreamTotals
                + " "
                + theirs.path("byPlugin")
                + ", kdra "
                + new TreeMap<>(mine)
                + "\n  "
                + s.toJsonLine());
      }
      if (!top(mine).equals(top(upstreamTotals))) {
        best.add(s.name() + ": upstream " + top(upstreamTotals) + ", kdra " + top(mine));
      }
    }
    Path dir = Path.of("target", "sched-differential");
    Files.createDirectories(dir);
    Path report = dir.resolve("score-disagreements.txt");
    Files.writeString(
        report,
        "# highest-total node sets\n"
            + String.join("\n", best)
            + "\n# totals\n"
            + String.join("\n", totals)
            + "\n");
    System.out.println(
        "Score differential: "
            + compared
            + " scenarios with two or more feasible nodes ("
            + scored
            + " node totals); "
            + totals.size()
            + " with other totals, "
            + best.size()
            + " with another best node set; "
            + capacityScored
            + " with a VolumeBinding storage capacity share, compared; "
            + capacityLeftOut
            + " where it was left out, on both sides (several CSIStorageCapacities with room);"
            + " report in "
            + report);
    assertThat(best).as("scenarios whose best nodes differ (see %s)", report).isEmpty();
    assertThat(totals).as("scenarios whose node totals differ (see %s)", report).isEmpty();
  }

  /**
   * How many of {@code feasible} have a claim waiting for its first consumer bound to an existing
   * PersistentVolume by our VolumeBinding (how much of that path the scenarios reach).
   */
  private static int boundToExistingVolumes(SchedulingScenario s, List<Node> feasible) {
    if (!VolumeFilters.concerns(s.pod())) {
      return 0;
    }
    VolumeFilters v = VolumeFilters.prefilter(s.pod(), s.volumes().objects(), List::of).filters();
    int n = 0;
    for (Node node : feasible) {
      if (!v.volumesOn(node).staticBindings().isEmpty()) {
        n++;
      }
    }
    return n;
  }

  /** Whether any node has a VolumeBinding share of its total. */
  private static boolean hasVolumeBindingShare(JsonNode byPlugin) {
    for (JsonNode node : byPlugin) {
      if (node.path("VolumeBinding").asLong(0) != 0) {
        return true;
      }
    }
    return false;
  }

  /**
   * Takes upstream's VolumeBinding share out of {@code totals}, for the scenarios where which
   * CSIStorageCapacity its storage capacity score reads, when several have room, follows its
   * informer's map order ({@link OurScores#capacityChoiceOpen}). Whether any node had a share.
   */
  private static boolean withoutCapacityScore(Map<String, Long> totals, JsonNode byPlugin) {
    boolean any = false;
    for (Map.Entry<String, Long> e : totals.entrySet()) {
      long share = byPlugin.path(e.getKey()).path("VolumeBinding").asLong(0);
      if (share != 0) {
        e.setValue(e.getValue() - share);
        any = true;
      }
    }
    return any;
  }

  /** The nodes with the highest total. */
  private static java.util.Set<String> top(Map<String, Long> totals) {
    long max = totals.values().stream().mapToLong(Long::longValue).max().orElse(0);
    java.util.Set<String> out = new java.util.TreeSet<>();
    totals.forEach(
        (n, t) -> {
          if (t == max) {
            out.add(n);
          }
        });
    return out;
  }

  /** kube-scheduler's verdicts, one map (node name to verdict) per scenario. */
  private static List<Map<String, FilterVerdicts.Upstream>> upstream(
      List<SchedulingScenario> scenarios) throws IOException, InterruptedException {
    List<Map<String, FilterVerdicts.Upstream>> result = new ArrayList<>();
    for (JsonNode r : run("filter", scenarios)) {
      Map<String, FilterVerdicts.Upstream> verdicts = new LinkedHashMap<>();
      r.path("nodes")
          .fields()
          .forEachRemaining(
              e -> {
                List<String> reasons = new ArrayList<>();
                e.getValue().path("reasons").forEach(x -> reasons.add(x.asText()));
                verdicts.put(
                    e.getKey(),
                    new FilterVerdicts.Upstream(
                        e.getValue().path("plugin").asText(""), List.copyOf(reasons)));
              });
      result.add(verdicts);
    }
    return result;
  }

  /** {@code dra-alloc-upstream <mode>}'s answers, one per scenario, checked for errors. */
  private static List<JsonNode> run(String mode, List<SchedulingScenario> scenarios)
      throws IOException, InterruptedException {
    Path binary = UpstreamAlloc.binary();
    assertThat(Files.isExecutable(binary))
        .as("%s; build it with integration-tests/scripts/build-upstream-alloc.sh", binary)
        .isTrue();
    Path in = Files.createTempFile("sched-differential", ".jsonl");
    Path out = Files.createTempFile("sched-differential", ".out");
    try {
      try (OutputStream o = Files.newOutputStream(in)) {
        for (SchedulingScenario s : scenarios) {
          o.write((s.toJsonLine() + "\n").getBytes(StandardCharsets.UTF_8));
        }
      }
      Process p =
          new ProcessBuilder(binary.toString(), mode)
              .redirectInput(in.toFile())
              .redirectOutput(out.toFile())
              .redirectError(ProcessBuilder.Redirect.INHERIT)
              .start();
      assertThat(p.waitFor(10, TimeUnit.MINUTES))
          .as("dra-alloc-upstream %s finished", mode)
          .isTrue();
      assertThat(p.exitValue()).as("dra-alloc-upstream %s exit status", mode).isZero();
      List<String> lines = Files.readAllLines(out);
      assertThat(lines).as("one answer per scenario").hasSize(scenarios.size());
      List<JsonNode> result = new ArrayList<>();
      for (int i = 0; i < lines.size(); i++) {
        JsonNode r = JSON.readTree(lines.get(i));
        assertThat(r.path("error").asText("")).as(scenarios.get(i).name()).isEmpty();
        assertThat(r.path("name").asText()).isEqualTo(scenarios.get(i).name());
        result.add(r);
      }
      return result;
    } finally {
      Files.deleteIfExists(in);
      Files.deleteIfExists(out);
    }
  }

  /** The disagreements, each with its scenario's JSON line, for replay and table rows. */
  private static Path writeReport(
      List<SchedulingScenario> scenarios,
      List<Map<String, FilterVerdicts.Upstream>> upstream,
      List<String> feasibility,
      List<String> reasons)
      throws IOException {
    Path dir = Path.of("target", "sched-differential");
    Files.createDirectories(dir);
    Path report = dir.resolve("disagreements.txt");
    StringBuilder b = new StringBuilder();
    b.append("# feasibility\n");
    feasibility.forEach(l -> b.append(l).append('\n'));
    b.append("# reasons\n");
    reasons.forEach(l -> b.append(l).append('\n'));
    b.append("# scenarios with a disagreement\n");
    for (SchedulingScenario s : scenarios) {
      String prefix = s.name() + " ";
      if (feasibility.stream().anyMatch(l -> l.startsWith(prefix))
          || reasons.stream().anyMatch(l -> l.startsWith(prefix))) {
        b.append(s.toJsonLine()).append('\n');
      }
    }
    Files.writeString(report, b.toString());
    return report;
  }
}
