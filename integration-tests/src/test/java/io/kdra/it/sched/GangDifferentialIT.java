package io.kdra.it.sched;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.fabric8.kubernetes.api.model.resource.v1.Device;
import io.fabric8.kubernetes.api.model.resource.v1.ExactDeviceRequest;
import io.fabric8.kubernetes.api.model.resource.v1.ResourceClaim;
import io.fabric8.kubernetes.api.model.resource.v1.ResourceSlice;
import io.kdra.claimcontroller.scheduling.GangWhatIf;
import io.kdra.claimcontroller.scheduling.Outcome;
import io.kdra.it.upstream.UpstreamAlloc;
import java.io.IOException;
import java.io.OutputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/**
 * The gang differential test: seeded, generated clusters each with one PodGroup of a gang policy
 * ({@link GangScenarioGenerator}) through kube-scheduler 1.37.2's pod group scheduling cycle
 * ({@code dra-alloc-upstream gang}: the real scheduler, default profile, {@code GenericWorkload}
 * and {@code DRAWorkloadResourceClaims} on) and through the claim-controller's gang pass ({@link
 * OurGang}). Both must come to the same answer: the group waits for members (upstream: its pods
 * never reach the active queue), is not placed, or is placed with the same members.
 *
 * <p>Which node a member lands on is not compared: kube-scheduler breaks equal scores at random.
 * That choice can also decide which later members fit, so upstream runs each scenario {@link
 * #DEFAULT_RUNS} times in fresh schedulers; where its runs differ, ours must be one of its answers
 * (counted as tie-dependent), elsewhere the one.
 *
 * <p>Left out, counted and listed in the report: scenarios whose PodGroup has a claim of its own
 * where an upstream run's allocations are wrong ({@link #invalidAllocation}). kube-scheduler 1.37.2
 * makes such allocations when members of one pod group cycle share a PodGroup-level claim ({@code
 * DRAWorkloadResourceClaims}) and have claims of their own: the allocations its binding cycles
 * write give one device to two claims, two devices to the one-device shared claim, or an l4 to a
 * claim of class a100, so it "places" members that do not fit. The claim-controller places fewer,
 * each claim allocated as it asks. Wrong allocations in a group without a claim of its own fail the
 * test.
 *
 * <p>{@code -Dkdra.gang.scenarios=N} sets the count (default 300), {@code -Dkdra.gang.seed=S} draws
 * others (default {@link #DEFAULT_SEED}, fixed so that the build does not depend on the draw; what
 * another seed finds becomes a table row in the claim-controller's gang tests), {@code
 * -Dkdra.gang.runs=R} upstream's runs per scenario.
 */
class GangDifferentialIT {

  static final long DEFAULT_SEED = 42;
  static final int DEFAULT_RUNS = 3;

  private static final ObjectMapper JSON = new ObjectMapper();

  /** Upstream's gangscheduling PreEnqueue message, which ours repeats while members are missing. */
  private static final String WAITING_FOR_MEMBERS =
      "waiting for minCount pods from a gang to appear in scheduling queue";

  /**
   * One side's answer for a scenario.
   *
   * @param outcome gated (waits for members), unschedulable (no member placed) or scheduled
   * @param members the members placed, sorted (scheduled only)
   */
  record Answer(String outcome, Set<String> members) {
    @Override
    public String toString() {
      return outcome.equals("scheduled") ? outcome + " " + members : outcome;
    }
  }

  /**
   * Upstream's answers for one scenario.
   *
   * @param answers its distinct answers over the runs
   * @param invalidAllocation what is wrong with one of its runs' allocations; null when nothing
   */
  record Upstream(Set<Answer> answers, String invalidAllocation) {}

  @Test
  void gangDecisionsAgreeWithKubeScheduler() throws Exception {
    long seed = Long.getLong("kdra.gang.seed", DEFAULT_SEED);
    int count = Integer.getInteger("kdra.gang.scenarios", 300);
    int runs = Integer.getInteger("kdra.gang.runs", DEFAULT_RUNS);
    System.out.println(
        "Gang differential: seed "
            + seed
            + ", "
            + count
            + " scenarios, "
            + runs
            + " upstream runs each (replay with -Dkdra.gang.seed="
            + seed
            + ")");
    GangScenarioGenerator generator = new GangScenarioGenerator(seed);
    List<GangScenario> scenarios = new ArrayList<>();
    for (int i = 0; i < count; i++) {
      scenarios.add(generator.next());
    }
    List<Upstream> upstream = upstream(scenarios, runs);

    List<String> disagreements = new ArrayList<>();
    List<GangScenario> disagreeing = new ArrayList<>();
    List<String> excluded = new ArrayList<>();
    Map<String, Integer> outcomes = new TreeMap<>();
    int tieDependent = 0;
    int partial = 0;
    try (OurGang ours = new OurGang()) {
      for (int i = 0; i < scenarios.size(); i++) {
        GangScenario s = scenarios.get(i);
        Answer mine = answer(ours.decide(s));
        if (upstream.get(i).invalidAllocation() != null && sharesAGroupClaim(s)) {
          // upstream's bug (see the class comment): its answer counts members it could not place
          excluded.add(s.name() + ": upstream " + upstream.get(i).invalidAllocation());
          continue;
        }
        if (upstream.get(i).invalidAllocation() != null) {
          // wrong allocations without a group claim: not the known bug, so a finding
          disagreements.add(s.name() + ": upstream " + upstream.get(i).invalidAllocation());
          disagreeing.add(s);
          continue;
        }
        Set<Answer> theirs = upstream.get(i).answers();
        outcomes.merge(mine.outcome(), 1, Integer::sum);
        if (mine.outcome().equals("scheduled") && mine.members().size() < pending(s)) {
          partial++; // placed with some members left pending
        }
        if (theirs.size() > 1) {
          tieDependent++;
        }
        if (!theirs.contains(mine)) {
          disagreements.add(s.name() + ": upstream " + theirs + ", kdra " + mine);
          disagreeing.add(s);
        }
      }
    }
    Path report = writeReport(disagreements, disagreeing, excluded, runs);
    System.out.println(
        "Gang differential: "
            + scenarios.size()
            + " scenarios (kdra: "
            + outcomes
            + ", "
            + partial
            + " of the scheduled with members left pending); "
            + tieDependent
            + " where upstream's runs differ (its random choice among equal nodes); "
            + excluded.size()
            + " left out where upstream's allocations are wrong; "
            + disagreements.size()
            + " disagreements; report in "
            + report);
    assertThat(disagreements).as("gang decisions that differ (see %s)", report).isEmpty();
  }

  private static long pending(GangScenario s) {
    return s.pods().stream()
        .filter(p -> p.getSpec().getNodeName() == null)
        .filter(p -> p.getSpec().getAdditionalProperties().containsKey("schedulingGroup"))
        .count();
  }

  /** Our what-if as an answer. */
  static Answer answer(GangWhatIf w) {
    if (w.kept()) {
      return new Answer("scheduled", new TreeSet<>(w.placed().keySet()));
    }
    if (w.refused() instanceof Outcome.Unschedulable u && WAITING_FOR_MEMBERS.equals(u.message())) {
      return new Answer("gated", Set.of());
    }
    return new Answer("unschedulable", Set.of());
  }

  /** Upstream's answers, one per scenario. */
  private static List<Upstream> upstream(List<GangScenario> scenarios, int runs)
      throws IOException, InterruptedException {
    Path binary = UpstreamAlloc.binary();
    assertThat(Files.isExecutable(binary))
        .as("%s; build it with integration-tests/scripts/build-upstream-alloc.sh", binary)
        .isTrue();
    Path in = Files.createTempFile("gang-differential", ".jsonl");
    Path out = Files.createTempFile("gang-differential", ".out");
    try {
      try (OutputStream o = Files.newOutputStream(in)) {
        for (GangScenario s : scenarios) {
          o.write((s.toJsonLine(runs) + "\n").getBytes(StandardCharsets.UTF_8));
        }
      }
      Process p =
          new ProcessBuilder(binary.toString(), "gang")
              .redirectInput(in.toFile())
              .redirectOutput(out.toFile())
              .redirectError(ProcessBuilder.Redirect.INHERIT)
              .start();
      assertThat(p.waitFor(10, TimeUnit.MINUTES)).as("dra-alloc-upstream gang finished").isTrue();
      assertThat(p.exitValue()).as("dra-alloc-upstream gang exit status").isZero();
      List<String> lines = Files.readAllLines(out);
      assertThat(lines).as("one answer per scenario").hasSize(scenarios.size());
      List<Upstream> result = new ArrayList<>();
      for (int i = 0; i < lines.size(); i++) {
        JsonNode r = JSON.readTree(lines.get(i));
        assertThat(r.path("error").asText("")).as(scenarios.get(i).name()).isEmpty();
        assertThat(r.path("name").asText()).isEqualTo(scenarios.get(i).name());
        Set<Answer> answers = new LinkedHashSet<>();
        String invalidAllocation = null;
        for (JsonNode run : r.path("runs")) {
          Set<String> members = new TreeSet<>();
          run.path("placed").fieldNames().forEachRemaining(members::add);
          answers.add(new Answer(run.path("outcome").asText(), members));
          if (invalidAllocation == null) {
            invalidAllocation = invalidAllocation(scenarios.get(i), run.path("allocations"));
          }
        }
        result.add(new Upstream(answers, invalidAllocation));
      }
      return result;
    } finally {
      Files.deleteIfExists(in);
      Files.deleteIfExists(out);
    }
  }

  /** Whether the scenario's PodGroup has a claim of its own. */
  private static boolean sharesAGroupClaim(GangScenario s) {
    return s.podGroup().getAdditionalProperties().get("spec") instanceof Map<?, ?> spec
        && spec.containsKey("resourceClaims");
  }

  /**
   * What is wrong with upstream's allocations in {@code s}: a device that two claims' allocations
   * name, a claim with another number of devices than its one request asks for, or a device of
   * another model than its class ({@code a100}) selects; null when nothing is.
   */
  static String invalidAllocation(GangScenario s, JsonNode allocations) {
    Map<String, ResourceClaim> claims = new TreeMap<>();
    s.claims().forEach(c -> claims.put(c.getMetadata().getName(), c));
    Map<String, String> models = new TreeMap<>();
    for (ResourceSlice slice : s.slices()) {
      for (Device d : slice.getSpec().getDevices()) {
        models.put(
            slice.getSpec().getPool().getName() + "/" + d.getName(),
            d.getAttributes().get("model").getString());
      }
    }
    Map<String, String> owner = new TreeMap<>();
    for (var it = allocations.fields(); it.hasNext(); ) {
      var claim = it.next();
      ExactDeviceRequest asked =
          claims.get(claim.getKey()).getSpec().getDevices().getRequests().get(0).getExactly();
      if (claim.getValue().size() != asked.getCount()) {
        return "allocated "
            + claim.getValue().size()
            + " devices to "
            + claim.getKey()
            + ", which asks for "
            + asked.getCount();
      }
      for (JsonNode device : claim.getValue()) {
        String other = owner.putIfAbsent(device.asText(), claim.getKey());
        if (other != null && !other.equals(claim.getKey())) {
          return "allocated " + device.asText() + " to both " + other + " and " + claim.getKey();
        }
        if (asked.getDeviceClassName().equals("a100")
            && !"a100".equals(models.get(device.asText()))) {
          return "allocated "
              + device.asText()
              + " ("
              + models.get(device.asText())
              + ") to "
              + claim.getKey()
              + " of class a100";
        }
      }
    }
    return null;
  }

  /**
   * The disagreements, the scenarios left out, then each disagreeing scenario's JSON line (for
   * replay and table rows).
   */
  private static Path writeReport(
      List<String> disagreements, List<GangScenario> scenarios, List<String> excluded, int runs)
      throws IOException {
    Path dir = Path.of("target", "gang-differential");
    Files.createDirectories(dir);
    Path report = dir.resolve("disagreements.txt");
    StringBuilder b = new StringBuilder("# disagreements\n");
    disagreements.forEach(l -> b.append(l).append('\n'));
    b.append("# left out: upstream's allocations are wrong (a PodGroup-level claim shared)\n");
    excluded.forEach(l -> b.append(l).append('\n'));
    b.append("# their scenarios, as dra-alloc-upstream gang reads them\n");
    scenarios.forEach(s -> b.append(s.toJsonLine(runs)).append('\n'));
    Files.writeString(report, b.toString());
    return report;
  }
}
