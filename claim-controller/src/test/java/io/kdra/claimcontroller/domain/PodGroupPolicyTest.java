package io.kdra.claimcontroller.domain;

import static org.assertj.core.api.Assertions.assertThat;

import io.fabric8.kubernetes.api.model.Pod;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

/** PodGroup specs as scheduling.k8s.io/v1beta1 (1.37) writes them, read by the scheduler. */
class PodGroupPolicyTest {

  static Stream<Arguments> specs() {
    return Stream.of(
        Arguments.of(
            "gang with minCount",
            Map.of("schedulingPolicy", Map.of("gang", Map.of("minCount", 4))),
            new PodGroupPolicy("pg", 4, null)),
        Arguments.of(
            "basic policy: no gang",
            Map.of("schedulingPolicy", Map.of("basic", Map.of())),
            new PodGroupPolicy("pg", 0, null)),
        Arguments.of(
            "topology: the first key only, as upstream's topologyaware plugin",
            Map.of(
                "schedulingPolicy",
                Map.of("gang", Map.of("minCount", 2)),
                "schedulingConstraints",
                Map.of(
                    "topology",
                    List.of(Map.of("key", "topology.kubernetes.io/rack"), Map.of("key", "zone")))),
            new PodGroupPolicy("pg", 2, "topology.kubernetes.io/rack")),
        Arguments.of("empty spec", Map.of(), new PodGroupPolicy("pg", 0, null)),
        Arguments.of(
            "gang without a disruption mode: disrupted whole (ours; upstream: one by one)",
            Map.of("schedulingPolicy", Map.of("gang", Map.of("minCount", 2))),
            new PodGroupPolicy("pg", 2, null, PodGroupClaims.none("pg", null), true)),
        Arguments.of(
            "gang with disruptionMode single: one by one, as asked",
            Map.of(
                "schedulingPolicy",
                Map.of("gang", Map.of("minCount", 2)),
                "disruptionMode",
                Map.of("single", Map.of())),
            new PodGroupPolicy("pg", 2, null, PodGroupClaims.none("pg", null), false)),
        Arguments.of(
            "basic policy with disruptionMode all: disrupted whole (upstream)",
            Map.of(
                "schedulingPolicy",
                Map.of("basic", Map.of()),
                "disruptionMode",
                Map.of("all", Map.of())),
            new PodGroupPolicy("pg", 0, null, PodGroupClaims.none("pg", null), true)),
        Arguments.of(
            "priority: as admission set it from priorityClassName",
            Map.of("schedulingPolicy", Map.of("gang", Map.of("minCount", 2)), "priority", 1000),
            new PodGroupPolicy("pg", 2, null, PodGroupClaims.none("pg", null), true, 1000)),
        Arguments.of(
            "no priority: 0, as upstream's PodGroupPriority",
            Map.of("schedulingPolicy", Map.of("gang", Map.of("minCount", 2))),
            new PodGroupPolicy("pg", 2, null, PodGroupClaims.none("pg", null), true, 0)),
        Arguments.of(
            "basic policy without a mode: one by one",
            Map.of("schedulingPolicy", Map.of("basic", Map.of())),
            new PodGroupPolicy("pg", 0, null, PodGroupClaims.none("pg", null), false)));
  }

  @ParameterizedTest(name = "{0}")
  @MethodSource("specs")
  void parse(String name, Map<String, Object> spec, PodGroupPolicy expected) {
    assertThat(PodGroupPolicy.parse("pg", spec)).isEqualTo(expected);
  }

  private static final SchedulerFeatures GATE_OFF = SchedulerFeatures.defaults();
  private static final SchedulerFeatures GATE_ON =
      SchedulerFeatures.defaults().withGates("TopologyAwareWorkloadScheduling=true");

  /**
   * Columns: the group as read, kube-scheduler's TopologyAwareWorkloadScheduling, the topology key
   * that counts, whether the group is then scheduled as a group. kube-scheduler 1.37.2 with the
   * gate off has no TopologyPlacementGenerator and takes the algorithm without placements, though
   * the API server keeps a constraint written while its gate was on.
   */
  static Stream<Arguments> topologyGate() {
    PodGroupPolicy gangInRack = new PodGroupPolicy("pg", 2, "rack");
    PodGroupPolicy basicInRack = new PodGroupPolicy("pg", 0, "rack");
    PodGroupPolicy gang = new PodGroupPolicy("pg", 2, null);
    return Stream.of(
        Arguments.of("gang with a key, gate on: kept", gangInRack, GATE_ON, "rack", true),
        Arguments.of("gang with a key, gate off: ignored", gangInRack, GATE_OFF, null, true),
        Arguments.of("basic with a key, gate on: a group", basicInRack, GATE_ON, "rack", true),
        Arguments.of("basic with a key, gate off: one by one", basicInRack, GATE_OFF, null, false),
        Arguments.of("gang without a key, gate off", gang, GATE_OFF, null, true),
        Arguments.of("gang without a key, gate on", gang, GATE_ON, null, true));
  }

  @ParameterizedTest(name = "{0}")
  @MethodSource("topologyGate")
  void aTopologyKeyCountsOnlyWithTheGateOn(
      String row, PodGroupPolicy read, SchedulerFeatures features, String key, boolean constrains) {
    PodGroupPolicy scheduled = read.scheduledWith(features);

    assertThat(scheduled.topologyKey()).isEqualTo(key);
    assertThat(scheduled.constrains()).isEqualTo(constrains);
    assertThat(scheduled.minCount()).isEqualTo(read.minCount());
    assertThat(scheduled.claims()).isEqualTo(read.claims());
    assertThat(scheduled.disruptedWhole()).isEqualTo(read.disruptedWhole());
  }

  @Test
  void aPodNamesItsGroupInSpecSchedulingGroup() {
    Pod member = K.pod("p").build();
    member.getSpec().setAdditionalProperty("schedulingGroup", Map.of("podGroupName", "pg"));

    assertThat(PodGroupPolicy.groupOf(member)).contains("pg");
    assertThat(PodGroupPolicy.groupOf(K.pod("q").build())).isEqualTo(Optional.empty());
  }
}
