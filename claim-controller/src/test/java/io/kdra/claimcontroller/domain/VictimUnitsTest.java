package io.kdra.claimcontroller.domain;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.params.provider.Arguments.arguments;

import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.PodBuilder;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.stream.Stream;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * Victims that are gangs: a PodGroup disrupted whole is evicted with all its placed pods or not at
 * all. Each node holds {@link VictimSearchTest#CAPACITY} units as in {@link VictimSearchTest}; a
 * pod labelled {@code holds=<node>} keeps that node's device (its group's claim) until every such
 * pod is gone, wherever it runs; the preemptor needs the device of the node it goes to.
 */
class VictimUnitsTest {

  static final int PREEMPTOR = 100;

  /** Member {@code name} of PodGroup {@code group} (null: none), on node {@code holds}'s device. */
  static Pod m(String name, String group, int priority, int size, String holds) {
    Pod p = VictimSearchTest.p(name, priority, size, 0);
    if (holds != null) {
      p.getMetadata().getLabels().put("holds", holds);
    }
    if (group != null) {
      p.getSpec().setAdditionalProperty("schedulingGroup", Map.of("podGroupName", group));
    }
    return p;
  }

  static Pod deleting(Pod p) {
    return new PodBuilder(p)
        .editMetadata()
        .withDeletionTimestamp("2026-12-06T10:00:00Z")
        .endMetadata()
        .build();
  }

  static VictimSearch.Fits fits(Pod preemptor, Map<String, List<Pod>> nodes) {
    VictimSearch.Fits room = VictimSearchTest.fits(preemptor, nodes);
    return (node, gone) -> {
      List<String> goneUids = gone.stream().map(g -> g.getMetadata().getUid()).toList();
      boolean deviceHeld =
          nodes.values().stream()
              .flatMap(List::stream)
              .filter(p -> !goneUids.contains(p.getMetadata().getUid()))
              .anyMatch(p -> node.equals(p.getMetadata().getLabels().get("holds")));
      return !deviceHeld && room.fits(node, gone);
    };
  }

  static Stream<Arguments> cases() {
    Pod g0 = m("g0", "train", 1, 1, "n1");
    Pod g1 = m("g1", "train", 1, 1, "n1");
    Pod big0 = m("big0", "train", 1, 4, null);
    Pod big1 = m("big1", "train", 1, 4, null);
    Pod lone = m("lone", null, 1, 4, null);
    Pod high1 = m("high1", "train", PREEMPTOR, 1, null);
    // of the preemptor's priority: no victim, and no room for the preemptor beside it
    Pod keep = m("keep", null, PREEMPTOR, 3, null);
    return Stream.of(
        arguments(
            "a gang holding the node's device through its group's claim goes whole, its member on"
                + " another node too",
            VictimSearchTest.nodes("n1", List.of(g0), "n2", List.of(g1, keep)),
            true,
            "n1",
            List.of("g0", "g1")),
        arguments(
            "the same gang evicted one by one (disruptionMode single, or upstream): no member alone"
                + " frees the device, so there is no candidate",
            VictimSearchTest.nodes("n1", List.of(g0), "n2", List.of(g1, keep)),
            false,
            null,
            List.of()),
        arguments(
            "a gang evicted for room goes whole though one member would make it",
            VictimSearchTest.nodes("n1", List.of(big0), "n2", List.of(big1)),
            true,
            "n1",
            List.of("big0", "big1")),
        arguments(
            "a lone pod is preferred to a gang: fewer victims",
            VictimSearchTest.nodes("n1", List.of(big0), "n2", List.of(big1), "n3", List.of(lone)),
            true,
            "n3",
            List.of("lone")),
        arguments(
            "a gang with a member of the preemptor's priority is no victim",
            VictimSearchTest.nodes("n1", List.of(big0), "n2", List.of(high1)),
            true,
            null,
            List.of()),
        arguments(
            "a member already being deleted is no victim; the rest of its gang is",
            VictimSearchTest.nodes("n1", List.of(g0), "n2", List.of(deleting(g1), keep)),
            true,
            null,
            List.of()),
        arguments(
            "once the deleted member is gone, the rest of its gang goes",
            VictimSearchTest.nodes("n1", List.of(g0), "n2", List.of(keep)),
            true,
            "n1",
            List.of("g0")));
  }

  @ParameterizedTest(name = "{0}")
  @MethodSource("cases")
  void aGangIsAVictimWholeOrNotAtAll(
      String name,
      Map<String, List<Pod>> nodes,
      boolean disruptedWhole,
      String node,
      List<String> victims) {
    Pod preemptor = VictimSearchTest.p("preemptor", PREEMPTOR, 4, 0);
    List<Pod> placed = new ArrayList<>();
    nodes.values().forEach(placed::addAll);
    VictimSearch.Units units = VictimSearch.Units.byGroup(placed, (ns, group) -> disruptedWhole);

    var chosen =
        VictimSearch.search(
            preemptor, new LinkedHashMap<>(nodes), List::of, fits(preemptor, nodes), units);

    assertThat(chosen.map(VictimSearch.Candidate::node).orElse(null)).isEqualTo(node);
    assertThat(
            chosen
                .map(c -> c.victims().stream().map(p -> p.getMetadata().getName()).toList())
                .orElse(List.of()))
        .containsExactlyInAnyOrderElementsOf(victims);
  }

  static Stream<Arguments> groupPriorities() {
    Pod g0 = m("g0", "train", 1, 1, "n1");
    Pod g1 = m("g1", "train", 1, 1, "n1");
    Pod hi0 = m("hi0", "train", 500, 1, "n1");
    Pod hi1 = m("hi1", "train", 500, 1, "n1");
    Pod keep = m("keep", null, PREEMPTOR, 3, null);
    // one pod per node, each using the node whole
    Pod ownHigher = m("own-60", "batch", 60, 4, null);
    Pod ownLower = m("own-50", null, 50, 4, null);
    return Stream.of(
        arguments(
            "members of low priority in a group of the preemptor's: no victim",
            VictimSearchTest.nodes("n1", List.of(g0), "n2", List.of(g1, keep)),
            Map.of("train", PREEMPTOR),
            null,
            List.of()),
        arguments(
            "members of high priority in a group of low priority: victims",
            VictimSearchTest.nodes("n1", List.of(hi0), "n2", List.of(hi1, keep)),
            Map.of("train", 1),
            "n1",
            List.of("hi0", "hi1")),
        arguments(
            "a pod of no group keeps its own priority",
            VictimSearchTest.nodes("n1", List.of(ownLower)),
            Map.of(),
            "n1",
            List.of("own-50")),
        arguments(
            "the node is chosen by the victims' own priorities (upstream's"
                + " pickOneNodeForPreemption reads PodPriority), not their groups'",
            VictimSearchTest.nodes("n1", List.of(ownHigher), "n2", List.of(ownLower)),
            Map.of("batch", 10),
            "n2",
            List.of("own-50")));
  }

  /**
   * Upstream's DefaultPreemption with the Workload API on weighs a member of a PodGroup as a victim
   * by its group's priority ({@code GetPodPriority}), whatever the pod's own.
   */
  @ParameterizedTest(name = "{0}")
  @MethodSource("groupPriorities")
  void aMemberIsAVictimByItsGroupsPriority(
      String name,
      Map<String, List<Pod>> nodes,
      Map<String, Integer> groupPriority,
      String node,
      List<String> victims) {
    Pod preemptor = VictimSearchTest.p("preemptor", PREEMPTOR, 4, 0);
    List<Pod> placed = new ArrayList<>();
    nodes.values().forEach(placed::addAll);
    VictimSearch.Units units = VictimSearch.Units.byGroup(placed, (ns, group) -> true);

    var chosen =
        VictimSearch.search(
            preemptor,
            new LinkedHashMap<>(nodes),
            List::of,
            fits(preemptor, nodes),
            units,
            p ->
                PodGroupPolicy.groupOf(p)
                    .map(groupPriority::get)
                    .orElseGet(() -> VictimSearch.priority(p)));

    assertThat(chosen.map(VictimSearch.Candidate::node).orElse(null)).isEqualTo(node);
    assertThat(
            chosen
                .map(c -> c.victims().stream().map(p -> p.getMetadata().getName()).toList())
                .orElse(List.of()))
        .containsExactlyInAnyOrderElementsOf(victims);
  }
}
