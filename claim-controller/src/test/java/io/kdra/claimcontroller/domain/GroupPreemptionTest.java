package io.kdra.claimcontroller.domain;

import static org.assertj.core.api.Assertions.assertThat;

import io.fabric8.kubernetes.api.model.Pod;
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

  static final Map<String, Object> OURS =
      condition(
          "DisruptionTarget",
          "True",
          "PreemptionByScheduler",
          "Preempted by pod uid-p on node n1",
          EARLIER);

  static final Map<String, Object> CLEARED =
      condition(
          "DisruptionTarget",
          "False",
          "Rescheduled",
          "all 4 pods of the group are placed again",
          NOW.toString());

  static Stream<Arguments> clears() {
    return Stream.of(
        Arguments.of("ours, alone: false from now", List.of(OURS), Optional.of(List.of(CLEARED))),
        Arguments.of(
            "ours among others: false, in its place",
            List.of(SCHEDULED, OURS),
            Optional.of(List.of(SCHEDULED, CLEARED))),
        Arguments.of(
            "another preemptor's since: kept",
            List.of(
                condition(
                    "DisruptionTarget",
                    "True",
                    "PreemptionByScheduler",
                    "Preempted by pod uid-q on node n2",
                    EARLIER)),
            Optional.empty()),
        Arguments.of(
            "already false: nothing to write",
            List.of(condition("DisruptionTarget", "False", "Rescheduled", "", EARLIER)),
            Optional.empty()),
        Arguments.of(
            "another component's: kept",
            List.of(
                condition(
                    "DisruptionTarget",
                    "True",
                    "EvictionByEvictionAPI",
                    "Preempted by pod uid-p on node n1",
                    EARLIER)),
            Optional.empty()),
        Arguments.of("none", List.of(SCHEDULED), Optional.empty()));
  }

  @ParameterizedTest(name = "{0}")
  @MethodSource("clears")
  void theRecordOfAPreemptionIsClearedOnceTheGroupIsPlacedAgain(
      String name, List<Map<String, Object>> before, Optional<List<Map<String, Object>>> after) {
    Optional<List<Map<String, Object>>> written =
        GroupPreemption.conditionsPlacedAgain(before, "uid-p", 4, NOW);

    assertThat(written).isEqualTo(after);
    written.ifPresent(
        w -> assertThat(GroupPreemption.preemptor(Map.of("conditions", w))).isEmpty());
  }

  static Pod member(String name, String node, boolean deleting) {
    return K.pod(name)
        .editMetadata()
        .withDeletionTimestamp(deleting ? EARLIER : null)
        .endMetadata()
        .editSpec()
        .withNodeName(node)
        .endSpec()
        .build();
  }

  static Stream<Arguments> placements() {
    Pod a = member("a", "n1", false);
    Pod b = member("b", "n2", false);
    return Stream.of(
        Arguments.of("every member bound, minCount of them", List.of(a, b), 2, true),
        Arguments.of("more than minCount, all bound", List.of(a, b), 1, true),
        Arguments.of("one pending", List.of(a, member("b", null, false)), 2, false),
        Arguments.of(
            "one still leaving after the eviction", List.of(a, member("b", "n2", true)), 2, false),
        Arguments.of(
            "one marked for eviction, not deleted yet",
            List.of(
                a,
                new io.fabric8.kubernetes.api.model.PodBuilder(member("b", "n2", false))
                    .withNewStatus()
                    .addNewCondition()
                    .withType("DisruptionTarget")
                    .withStatus("True")
                    .withReason("PreemptionByScheduler")
                    .endCondition()
                    .endStatus()
                    .build()),
            2,
            false),
        Arguments.of("fewer than minCount", List.of(a), 2, false),
        Arguments.of("none", List.of(), 0, false));
  }

  @ParameterizedTest(name = "{0}")
  @MethodSource("placements")
  void aGroupIsPlacedAgainWhenEveryMemberIsBoundAndNoneLeaves(
      String name, List<Pod> members, int minCount, boolean placed) {
    assertThat(GroupPreemption.placedAgain(members, minCount)).isEqualTo(placed);
  }
}
