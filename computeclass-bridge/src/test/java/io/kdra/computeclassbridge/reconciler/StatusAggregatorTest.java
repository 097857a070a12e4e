package io.kdra.computeclassbridge.reconciler;

import static io.kdra.computeclassbridge.TestData.a100OrTwoL4;
import static io.kdra.computeclassbridge.TestData.computeClass;
import static io.kdra.computeclassbridge.TestData.defaultCatalog;
import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Named.named;

import io.fabric8.kubernetes.api.model.Condition;
import io.fabric8.kubernetes.api.model.ConditionBuilder;
import io.kdra.computeclassbridge.mapping.ComputeClassMapper;
import io.kdra.computeclassbridge.mapping.MapperSettings;
import io.kdra.computeclassbridge.mapping.Mapping;
import io.kdra.computeclassbridge.model.ComputeClass;
import io.kdra.computeclassbridge.model.ComputeClassStatus;
import io.kdra.computeclassbridge.model.Priority;
import java.time.Instant;
import java.util.List;
import java.util.Optional;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

class StatusAggregatorTest {

  private static final Instant T0 = Instant.parse("2026-01-01T00:00:00Z");
  private static final Instant T1 = Instant.parse("2026-01-01T01:00:00Z");

  private static Mapping map(ComputeClass cc) {
    return new ComputeClassMapper(MapperSettings.DEFAULTS).map(cc, defaultCatalog(), List.of("ns"));
  }

  private static ComputeClassStatus aggregate(
      ComputeClassStatus old,
      Mapping m,
      int namespaces,
      List<String> conflicts,
      Optional<String> catalogProblem,
      Instant now) {
    return StatusAggregator.aggregate(old, 3, m, "cc", namespaces, conflicts, catalogProblem, now);
  }

  private static Condition get(ComputeClassStatus s, String type) {
    return s.getConditions().stream()
        .filter(c -> type.equals(c.getType()))
        .findFirst()
        .orElseThrow();
  }

  static Stream<Arguments> cases() {
    Mapping seed = map(a100OrTwoL4("cc"));
    return Stream.of(
        Arguments.of(
            named("all mapped", seed),
            1,
            List.of(),
            Optional.empty(),
            "True",
            "TemplatesGenerated",
            "False",
            "AllPrioritiesMapped"),
        Arguments.of(
            named("no namespace selected", seed),
            0,
            List.of(),
            Optional.empty(),
            "False",
            "NoNamespaceSelected",
            "False",
            "AllPrioritiesMapped"),
        Arguments.of(
            named(
                "only priorities without accelerator",
                map(computeClass("cc", Priority.machineFamily("n2")))),
            1,
            List.of(),
            Optional.empty(),
            "False",
            "NoAcceleratorPriorities",
            "False",
            "AllPrioritiesMapped"),
        Arguments.of(
            named(
                "unknown type",
                map(computeClass("cc", Priority.gpu("x", 1), Priority.gpu("nvidia-l4", 1)))),
            1,
            List.of(),
            Optional.empty(),
            "True",
            "TemplatesGenerated",
            "True",
            "PrioritiesNotMapped"),
        Arguments.of(
            named("name taken", seed),
            1,
            List.of("ResourceClaimTemplate ns/cc already exists"),
            Optional.empty(),
            "True",
            "TemplatesGenerated",
            "True",
            "NameConflict"),
        Arguments.of(
            named("bad catalog override", seed),
            1,
            List.of(),
            Optional.of("not a valid catalog"),
            "True",
            "TemplatesGenerated",
            "True",
            "CatalogInvalid"));
  }

  @ParameterizedTest(name = "{0}")
  @MethodSource("cases")
  void conditionsFollowTheSituation(
      Mapping m,
      int namespaces,
      List<String> conflicts,
      Optional<String> catalogProblem,
      String ready,
      String readyReason,
      String degraded,
      String degradedReason) {
    ComputeClassStatus s = aggregate(null, m, namespaces, conflicts, catalogProblem, T0);
    assertThat(get(s, "Ready"))
        .extracting(
            Condition::getStatus,
            Condition::getReason,
            Condition::getObservedGeneration,
            Condition::getLastTransitionTime)
        .containsExactly(ready, readyReason, 3L, "2026-01-01T00:00:00Z");
    assertThat(get(s, "Degraded"))
        .extracting(Condition::getStatus, Condition::getReason)
        .containsExactly(degraded, degradedReason);
  }

  @Test
  void recomputingTheSameSituationLaterGivesAnEqualStatus() {
    Mapping m = map(a100OrTwoL4("cc"));
    ComputeClassStatus first = aggregate(null, m, 1, List.of(), Optional.empty(), T0);
    assertThat(aggregate(first, m, 1, List.of(), Optional.empty(), T1)).isEqualTo(first);
  }

  @Test
  void transitionTimeMovesOnlyWhenTheStatusFlips() {
    Mapping ok = map(a100OrTwoL4("cc"));
    Mapping bad = map(computeClass("cc", Priority.gpu("x", 1), Priority.gpu("nvidia-l4", 1)));
    ComputeClassStatus first = aggregate(null, ok, 1, List.of(), Optional.empty(), T0);
    ComputeClassStatus second = aggregate(first, bad, 1, List.of(), Optional.empty(), T1);
    assertThat(get(second, "Ready").getLastTransitionTime()).isEqualTo("2026-01-01T00:00:00Z");
    assertThat(get(second, "Ready").getMessage()).isNotEqualTo(get(first, "Ready").getMessage());
    assertThat(get(second, "Degraded").getLastTransitionTime()).isEqualTo("2026-01-01T01:00:00Z");
  }

  @Test
  void conditionsOfOtherOwnersAreKept() {
    ComputeClassStatus gke = new ComputeClassStatus();
    gke.getConditions().add(new ConditionBuilder().withType("Health").withStatus("True").build());
    gke.setAdditional("somethingGkeWrites", "x");
    ComputeClassStatus s =
        aggregate(gke, map(a100OrTwoL4("cc")), 1, List.of(), Optional.empty(), T0);
    assertThat(s.getConditions())
        .extracting(Condition::getType)
        .containsExactly("Health", "Ready", "Degraded");
    assertThat(s.getAdditional()).containsEntry("somethingGkeWrites", "x");
  }
}
