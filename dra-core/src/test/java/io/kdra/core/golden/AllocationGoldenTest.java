package io.kdra.core.golden;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.node.ObjectNode;
import io.fabric8.kubernetes.api.model.resource.v1.ResourceClaim;
import io.kdra.core.alloc.AllocatorFeatures;
import io.kdra.core.alloc.AllocatorOptions;
import io.kdra.core.testing.AllocationChecker;
import io.kdra.core.testing.GeneratedScenario;
import io.kdra.core.testing.ScenarioGenerator;
import io.kdra.core.testing.ScenarioGenerator.Profile;
import io.kdra.core.whatif.WhatIf;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

/**
 * Our allocator against upstream's, without Go: for each golden scenario (upstream's decisions,
 * written by {@code UpstreamDifferentialIT}), the what-if run {@code bin/dra-alloc} makes must
 * allocate the same claims with the same allocations and exit status, and every allocation of ours
 * must pass the {@link AllocationChecker}. A scenario whose input the generator no longer draws
 * fails until the file is regenerated.
 */
class AllocationGoldenTest {

  @ParameterizedTest
  @EnumSource(Profile.class)
  void ourDecisionsAreUpstreams(Profile profile) {
    GoldenFiles.Content golden = GoldenFiles.readResource(AllocationGolden.file(profile));
    assertThat(golden.header().path("profile").asText())
        .isEqualTo(
            AllocationGolden.header(profile, 1, 0, golden.oracle()).path("profile").asText());
    assertThat(golden.header().path("featureGates").asText()).isEqualTo(profile.featureGates());
    assertThat(golden.lines()).hasSize(golden.header().path("scenarios").asInt());
    List<String> problems = new ArrayList<>();
    int allocatedByBoth = 0;
    for (ObjectNode line : golden.lines()) {
      long seed = line.path("seed").asLong();
      GeneratedScenario s = ScenarioGenerator.generate(seed, profile);
      if (!AllocationGolden.inputDigest(s).equals(line.path("input").asText())) {
        problems.add(
            "seed "
                + seed
                + ": the generator draws another input than the golden file's; regenerate: "
                + GoldenFiles.REGENERATE);
        continue;
      }
      if (!AllocationGolden.featureGates(profile, line).equals(s.featureGates())) {
        problems.add(
            "seed "
                + seed
                + ": the generator draws other gates than the golden file's; regenerate: "
                + GoldenFiles.REGENERATE);
        continue;
      }
      AllocatorOptions options =
          AllocatorOptions.defaults(
              AllocatorFeatures.defaults().withGates(s.featureGates()), shareIds());
      // the run writes allocations into its claims: a scenario of its own, so that the checker
      // still sees which claims were allocated before the run
      AllocationDecision ours = ours(ScenarioGenerator.generate(seed, profile), options);
      AllocationDecision upstream =
          new AllocationDecision(
              line.path("exit").asInt(),
              AllocationGolden.claims(line),
              AllocationGolden.failures(line));
      allocatedByBoth +=
          (int) ours.allocated().stream().filter(upstream.allocated()::contains).count();
      AllocationDecision.disagreements(ours, upstream)
          .forEach(p -> problems.add("seed " + seed + ": " + p));
      AllocationChecker.of(s)
          .check(List.copyOf(ours.claims().values()), s.pods())
          .forEach(v -> problems.add("seed " + seed + ": invalid allocation of ours: " + v));
    }
    System.out.printf(
        "golden allocations (%s): %d scenarios, %d claims allocated by both%n",
        profile, golden.lines().size(), allocatedByBoth);
    assertThat(problems)
        .as(
            "disagreements with upstream's golden decisions (replay a seed with "
                + "-Dit.test=UpstreamDifferentialIT -Dprofile=%s -Dseed=S -Dscenarios=1)",
            profile.name().toLowerCase(java.util.Locale.ROOT))
        .isEmpty();
    assertThat(allocatedByBoth).as("claims allocated by both").isPositive();
  }

  /** What {@code bin/dra-alloc} decides: its what-if run on the scenario's objects. */
  static AllocationDecision ours(GeneratedScenario s, AllocatorOptions options) {
    WhatIf.Report report =
        new WhatIf(
                new WhatIf.Inputs(
                    s.classes(), s.slices(), s.claims(), s.templates(), s.nodes(), s.pods()),
                options,
                null)
            .run();
    Map<String, ResourceClaim> claims = new LinkedHashMap<>();
    report.claims().forEach(c -> claims.put(WhatIf.key(c.getMetadata()), c));
    return new AllocationDecision(
        report.failures().isEmpty() ? 0 : 1, claims, String.join("\n", report.failures()));
  }

  /** Share IDs in order (upstream's are random; the comparison leaves them out). */
  private static java.util.function.Supplier<String> shareIds() {
    AtomicLong next = new AtomicLong();
    return () -> String.format("00000000-0000-0000-0000-%012d", next.incrementAndGet());
  }
}
