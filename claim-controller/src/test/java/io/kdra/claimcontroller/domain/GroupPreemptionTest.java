package io.kdra.claimcontroller.domain;

import static org.assertj.core.api.Assertions.assertThat;

import java.time.Instant;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.stream.Stream;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * The DisruptionTarget condition a preemption records on a PodGroup it empties, and its reading.
 */
class GroupPreemptionTest {

  static final Instant NOW = Instant.parse("2026-12-07T03:00:00Z");
  static final String EARLIER = "2026-12-07T02:00:00Z";

  static Map<String, Object> condition(
      String type, String status, String reason, String message, String time) {
    return Map.of(
        "type",
        type,
        "status",
        status,
        "reason",
        reason,
        "message",
        message,
        "lastTransitionTime",
        time);
  }

  static final Map<String, Object> SCHEDULED =
      condition("PodGroupInitiallyScheduled", "True", "Scheduled", "", EARLIER);

  static Stream<Arguments> writes() {
    return Stream.of(
        Arguments.of(
            "none before: ours added",
            List.of(),
            List.of(
                condition(
                    "DisruptionTarget",
                    "True",
                    "PreemptionByScheduler",
                    "Preempted by pod uid-p on node n1",
                    NOW.toString()))),
        Arguments.of(
            "another condition kept, in its place",
            List.of(SCHEDULED),
            List.of(
                SCHEDULED,
                condition(
                    "DisruptionTarget",
                    "True",
                    "PreemptionByScheduler",
                    "Preempted by pod uid-p on node n1",
                    NOW.toString()))),
        Arguments.of(
            "already true for another preemptor: replaced, its transition time kept",
            List.of(
                condition(
                    "DisruptionTarget",
                    "True",
                    "PreemptionByScheduler",
                    "Preempted by pod uid-old on node n9",
                    EARLIER),
                SCHEDULED),
            List.of(
                condition(
                    "DisruptionTarget",
                    "True",
                    "PreemptionByScheduler",
                    "Preempted by pod uid-p on node n1",
                    EARLIER),
                SCHEDULED)),
        Arguments.of(
            "false before: true now, from now",
            List.of(condition("DisruptionTarget", "False", "Recovered", "", EARLIER)),
            List.of(
                condition(
                    "DisruptionTarget",
                    "True",
                    "PreemptionByScheduler",
                    "Preempted by pod uid-p on node n1",
                    NOW.toString()))));
  }

  @ParameterizedTest(name = "{0}")
  @MethodSource("writes")
  void setsTheConditionForThePreemptor(
      String name, List<Map<String, Object>> before, List<Map<String, Object>> after) {
    List<Map<String, Object>> written = GroupPreemption.conditionsWith(before, "uid-p", "n1", NOW);

    assertThat(written).isEqualTo(after);
    assertThat(GroupPreemption.preemptor(Map.of("conditions", written))).contains("uid-p");
  }

  static Stream<Arguments> reads() {
    return Stream.of(
        Arguments.of("no status", null, Optional.empty()),
        Arguments.of("no conditions", Map.of(), Optional.empty()),
        Arguments.of(
            "another type only", Map.of("conditions", List.of(SCHEDULED)), Optional.empty()),
        Arguments.of(
            "false",
            Map.of(
                "conditions",
                List.of(
                    condition(
                        "DisruptionTarget",
                        "False",
                        "PreemptionByScheduler",
                        "Preempted by pod uid-p on node n1",
                        EARLIER))),
            Optional.empty()),
        Arguments.of(
            "another reason (another component's)",
            Map.of(
                "conditions",
                List.of(
                    condition(
                        "DisruptionTarget",
                        "True",
                        "EvictionByEvictionAPI",
                        "Preempted by pod uid-p on node n1",
                        EARLIER))),
            Optional.empty()),
        Arguments.of(
            "upstream's reason in other words: no preemptor named",
            Map.of(
                "conditions",
                List.of(
                    condition(
                        "DisruptionTarget",
                        "True",
                        "PreemptionByScheduler",
                        "preempted to make room",
                        EARLIER))),
            Optional.empty()));
  }

  @ParameterizedTest(name = "{0}")
  @MethodSource("reads")
  void namesAPreemptorOnlyInItsOwnWords(
      String name, Map<String, Object> status, Optional<String> preemptor) {
    assertThat(GroupPreemption.preemptor(status)).isEqualTo(preemptor);
  }
}
