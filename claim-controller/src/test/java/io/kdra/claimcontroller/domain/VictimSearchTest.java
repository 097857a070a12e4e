package io.kdra.claimcontroller.domain;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.params.provider.Arguments.arguments;

import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.policy.v1.PodDisruptionBudget;
import io.fabric8.kubernetes.api.model.policy.v1.PodDisruptionBudgetBuilder;
import java.time.Instant;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * The victim search and node choice of kube-scheduler's DefaultPreemption; case names in quotes are
 * those of upstream's {@code default_preemption_test.go} (TestSelectBestCandidate,
 * TestSelectNodesForPreemption) that the row follows. Each node holds {@link #CAPACITY} units; a
 * pod's units are its {@code size} label; the preemptor fits where the pods that stay leave room.
 */
class VictimSearchTest {

  static final int CAPACITY = 4;
  static final Instant T0 = Instant.parse("2026-12-06T10:00:00Z");

  /** Pod {@code name} of {@code priority} using {@code size} units, started {@code minute}s in. */
  static Pod p(String name, int priority, int size, int minute) {
    return K.pod(name)
        .editMetadata()
        .addToLabels("app", name)
        .addToLabels("size", Integer.toString(size))
        .endMetadata()
        .editSpec()
        .withPriority(priority)
        .endSpec()
        .withNewStatus()
        .withStartTime(T0.plusSeconds(60L * minute).toString())
        .endStatus()
        .build();
  }

  static int size(Pod pod) {
    return Integer.parseInt(pod.getMetadata().getLabels().get("size"));
  }

  /** Fits when the node's pods that stay and the preemptor's size are within the capacity. */
  static VictimSearch.Fits fits(Pod preemptor, Map<String, List<Pod>> nodes) {
    return (node, gone) -> {
      List<String> goneUids = gone.stream().map(g -> g.getMetadata().getUid()).toList();
      int used =
          nodes.get(node).stream()
              .filter(x -> !goneUids.contains(x.getMetadata().getUid()))
              .mapToInt(VictimSearchTest::size)
              .sum();
      return used + size(preemptor) <= CAPACITY;
    };
  }

  static Map<String, List<Pod>> nodes(Object... nameAndPods) {
    Map<String, List<Pod>> m = new LinkedHashMap<>();
    for (int i = 0; i < nameAndPods.length; i += 2) {
      m.put((String) nameAndPods[i], (List<Pod>) nameAndPods[i + 1]);
    }
    return m;
  }

  static PodDisruptionBudget pdb(String app, int allowed, String... disrupted) {
    Map<String, String> disruptedPods = new LinkedHashMap<>();
    for (String d : disrupted) {
      disruptedPods.put(d, T0.toString());
    }
    return new PodDisruptionBudgetBuilder()
        .withNewMetadata()
        .withNamespace(K.NS)
        .withName("pdb-" + app)
        .endMetadata()
        .withNewSpec()
        .withNewSelector()
        .addToMatchLabels("app", app)
        .endSelector()
        .endSpec()
        .withNewStatus()
        .withDisruptionsAllowed(allowed)
        .withDisruptedPods(disruptedPods)
        .endStatus()
        .build();
  }

  static Stream<Arguments> cases() {
    Pod high = p("preemptor", 100, 2, 50);
    return Stream.of(
        arguments(
            "\"a pod that would fit on the machines, but other pods running are higher"
                + " priority, no preemption would happen\"",
            high,
            nodes("n1", List.of(p("a", 100, 4, 0)), "n2", List.of(p("b", 200, 3, 0))),
            List.of(),
            null,
            List.of()),
        arguments(
            "equal priority is no victim",
            high,
            nodes("n1", List.of(p("a", 100, 4, 0))),
            List.of(),
            null,
            List.of()),
        arguments(
            "even every lower-priority pod gone leaves no room: no candidate",
            high,
            nodes("n1", List.of(p("a", 10, 1, 0), p("b", 200, 3, 0))),
            List.of(),
            null,
            List.of()),
        arguments(
            "\"medium priority pod is preempted, but lower priority one stays as it is small\"",
            p("preemptor", 100, 2, 50),
            nodes("n1", List.of(p("low", 10, 1, 0), p("mid", 50, 2, 0), p("big", 200, 1, 0))),
            List.of(),
            "n1",
            List.of("mid")),
        arguments(
            "\"mixed priority pods are preempted\": the reprieve adds back the most important"
                + " first",
            p("preemptor", 100, 3, 50),
            nodes("n1", List.of(p("a", 10, 1, 0), p("b", 20, 1, 0), p("c", 30, 1, 0))),
            List.of(),
            "n1",
            List.of("b", "a")),
        arguments(
            "\"mixed priority pods are preempted, pick later StartTime one when priorities are"
                + " equal\": the older one is reprieved",
            p("preemptor", 100, 3, 50),
            nodes("n1", List.of(p("old", 10, 1, 0), p("new", 10, 1, 5), p("x", 10, 1, 3))),
            List.of(),
            "n1",
            List.of("x", "new")),
        arguments(
            "\"machine with min highest priority pod is picked\"",
            high,
            nodes("n1", List.of(p("a", 50, 4, 0)), "n2", List.of(p("b", 10, 4, 0))),
            List.of(),
            "n2",
            List.of("b")),
        arguments(
            "\"when highest priorities are the same, minimum sum of lower priority pods is used\"",
            p("preemptor", 100, 4, 50),
            nodes(
                "n1",
                List.of(p("a1", 50, 2, 0), p("a2", 40, 2, 0)),
                "n2",
                List.of(p("b1", 50, 2, 0), p("b2", 10, 2, 0))),
            List.of(),
            "n2",
            List.of("b1", "b2")),
        arguments(
            "\"sum of adjusted priorities is considered\": negative priorities count above zero",
            p("preemptor", 0, 4, 50),
            nodes(
                "n1",
                List.of(p("a1", -10, 2, 0), p("a2", -10, 2, 0)),
                "n2",
                List.of(p("b1", -10, 4, 0))),
            List.of(),
            "n2",
            List.of("b1")),
        arguments(
            "\"when highest priority and sum are the same, minimum number of pods is used\"",
            p("preemptor", 100, 4, 50),
            nodes(
                "n1",
                List.of(p("a1", 10, 2, 0), p("a2", Integer.MIN_VALUE, 2, 0)),
                "n2",
                List.of(p("b1", 10, 4, 0))),
            List.of(),
            "n2",
            List.of("b1")),
        arguments(
            "\"same priority, same number of victims, different start time for each node's"
                + " pod\": the latest start wins",
            high,
            nodes(
                "n1",
                List.of(p("a", 10, 4, 1)),
                "n2",
                List.of(p("b", 10, 4, 9)),
                "n3",
                List.of(p("c", 10, 4, 5))),
            List.of(),
            "n2",
            List.of("b")),
        arguments(
            "all equal: the first node",
            high,
            nodes("n2", List.of(p("b", 10, 4, 0)), "n1", List.of(p("a", 10, 4, 0))),
            List.of(),
            "n2",
            List.of("b")),
        arguments(
            "fewest PDB violations first: the protected pod is spared where another victim exists",
            high,
            nodes("n1", List.of(p("guarded", 10, 4, 0)), "n2", List.of(p("free", 50, 4, 0))),
            List.of(pdb("guarded", 0)),
            "n2",
            List.of("free")),
        arguments(
            "a budget that still allows a disruption is no violation",
            high,
            nodes("n1", List.of(p("guarded", 10, 4, 0)), "n2", List.of(p("free", 50, 4, 0))),
            List.of(pdb("guarded", 1)),
            "n1",
            List.of("guarded")),
        arguments(
            "\"preemption with violation of the pdb with pod whose eviction was processed\": a"
                + " pod the budget counts as disrupted is no violation",
            high,
            nodes("n1", List.of(p("guarded", 10, 4, 0)), "n2", List.of(p("free", 50, 4, 0))),
            List.of(pdb("guarded", 0, "guarded")),
            "n1",
            List.of("guarded")),
        arguments(
            "with no other choice the protected pod is preempted",
            high,
            nodes("n1", List.of(p("guarded", 10, 4, 0))),
            List.of(pdb("guarded", 0)),
            "n1",
            List.of("guarded")),
        arguments(
            "violating pods are reprieved first, even over more important ones",
            p("preemptor", 100, 2, 50),
            nodes("n1", List.of(p("guarded", 10, 2, 0), p("free", 50, 2, 0))),
            List.of(pdb("guarded", 0)),
            "n1",
            List.of("free")));
  }

  @ParameterizedTest(name = "{0}")
  @MethodSource("cases")
  void choosesTheNodeAndVictimsAsUpstream(
      String name,
      Pod preemptor,
      Map<String, List<Pod>> nodes,
      List<PodDisruptionBudget> budgets,
      String node,
      List<String> victims) {
    var chosen = VictimSearch.search(preemptor, nodes, () -> budgets, fits(preemptor, nodes));
    if (node == null) {
      assertThat(chosen).isEmpty();
      return;
    }
    assertThat(chosen).isPresent();
    assertThat(chosen.get().node()).isEqualTo(node);
    assertThat(chosen.get().victims())
        .extracting(v -> v.getMetadata().getName())
        .containsExactlyElementsOf(victims);
  }

  @Test
  void aPodAlreadyBeingDeletedIsNoVictimButStillHoldsItsShare() {
    Pod leaving =
        new io.fabric8.kubernetes.api.model.PodBuilder(p("leaving", 10, 2, 0))
            .editMetadata()
            .withDeletionTimestamp(T0.toString())
            .endMetadata()
            .build();
    Map<String, List<Pod>> nodes = nodes("n1", List.of(leaving, p("other", 10, 2, 0)));
    Pod preemptor = p("preemptor", 100, 4, 50);
    assertThat(VictimSearch.search(preemptor, nodes, List::of, fits(preemptor, nodes))).isEmpty();
    Pod smaller = p("preemptor", 100, 2, 50);
    assertThat(VictimSearch.search(smaller, nodes, List::of, fits(smaller, nodes)))
        .get()
        .extracting(c -> c.victims().get(0).getMetadata().getName())
        .isEqualTo("other");
  }

  @Test
  void countsThePdbViolationsOfTheVictims() {
    Map<String, List<Pod>> nodes =
        nodes("n1", List.of(p("g1", 10, 2, 0), p("g2", 10, 2, 1), p("g3", 10, 2, 2)));
    Pod preemptor = p("preemptor", 100, 2, 50);
    List<PodDisruptionBudget> budgets = List.of(pdb("g1", 0), pdb("g2", 0));
    var c =
        VictimSearch.search(preemptor, nodes, () -> budgets, fits(preemptor, nodes)).orElseThrow();
    // g3 (no budget) goes first; one guarded pod must go too
    assertThat(c.victims()).extracting(v -> v.getMetadata().getName()).contains("g3");
    assertThat(c.victims()).hasSize(2);
    assertThat(c.pdbViolations()).isEqualTo(1);
  }

  @Test
  void splitsByBudgetInOrderUsingUpTheAllowedDisruptions() {
    List<Pod> pods = List.of(p("a", 1, 1, 0), p("a2", 1, 1, 0), p("b", 1, 1, 0));
    PodDisruptionBudget both =
        new PodDisruptionBudgetBuilder(pdb("x", 1))
            .editSpec()
            .withNewSelector()
            .addNewMatchExpression()
            .withKey("app")
            .withOperator("In")
            .withValues("a", "a2")
            .endMatchExpression()
            .endSelector()
            .endSpec()
            .build();
    PodDisruptionBudget emptySelector =
        new PodDisruptionBudgetBuilder(pdb("y", 0))
            .editSpec()
            .withNewSelector()
            .endSelector()
            .endSpec()
            .build();
    List<Pod> violating = new ArrayList<>();
    List<Pod> ok = new ArrayList<>();
    VictimSearch.splitByBudget(pods, List.of(both, emptySelector), violating, ok);
    assertThat(violating).extracting(v -> v.getMetadata().getName()).containsExactly("a2");
    assertThat(ok).extracting(v -> v.getMetadata().getName()).containsExactly("a", "b");
  }

  @Test
  void priorityAndPolicyAsUpstreamReadsThem() {
    assertThat(VictimSearch.priority(K.pod("x").build())).isZero();
    assertThat(VictimSearch.mayPreempt(K.pod("x").build())).isTrue();
    assertThat(
            VictimSearch.mayPreempt(
                K.pod("x").editSpec().withPreemptionPolicy("Never").endSpec().build()))
        .isFalse();
  }
}
