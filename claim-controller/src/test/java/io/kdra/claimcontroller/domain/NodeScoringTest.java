package io.kdra.claimcontroller.domain;

import static io.kdra.claimcontroller.domain.ScoreFixtures.input;
import static io.kdra.claimcontroller.domain.ScoreFixtures.node;
import static io.kdra.claimcontroller.domain.ScoreFixtures.pod;
import static org.assertj.core.api.Assertions.assertThat;

import io.fabric8.kubernetes.api.model.AffinityBuilder;
import io.fabric8.kubernetes.api.model.Node;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.Taint;
import java.util.List;
import org.junit.jupiter.api.Test;

/** The framework around the plugins: weights, the sum, the choice between equal totals. */
class NodeScoringTest {

  static Pod prefersSsd() {
    return pod("p")
        .editSpec()
        .withAffinity(
            new AffinityBuilder()
                .withNewNodeAffinity()
                .addNewPreferredDuringSchedulingIgnoredDuringExecution()
                .withWeight(1)
                .withNewPreference()
                .addNewMatchExpression()
                .withKey("disk")
                .withOperator("In")
                .withValues("ssd")
                .endMatchExpression()
                .endPreference()
                .endPreferredDuringSchedulingIgnoredDuringExecution()
                .endNodeAffinity()
                .build())
        .endSpec()
        .build();
  }

  @Test
  void anUntoleratedPreferNoScheduleTaintOutweighsAPreferredNodeAffinityTerm() {
    // TaintToleration (weight 3) against NodeAffinity (weight 2), the rest equal
    Node ssdTainted =
        node("node-a", "disk", "ssd")
            .editSpec()
            .withTaints(new Taint("PreferNoSchedule", "dedicated", null, "x"))
            .endSpec()
            .build();
    Node plain = node("node-b").build();
    NodeScoring.Scores s =
        NodeScoring.score(input(prefersSsd(), List.of(ssdTainted, plain), List.of()));
    assertThat(s.byPlugin().keySet())
        .containsExactly("TaintToleration", "NodeAffinity", "NodeResourcesFit");
    assertThat(s.of("node-a")).isEqualTo(2 * 100);
    assertThat(s.of("node-b")).isEqualTo(3 * 100);
    assertThat(s.best().getMetadata().getName()).isEqualTo("node-b");
    assertThat(s.ranked())
        .extracting(n -> n.getMetadata().getName())
        .containsExactly("node-b", "node-a");
  }

  @Test
  void equalTotalsGoToTheFirstNodeByName() {
    List<Node> nodes =
        List.of(node("node-a").build(), node("node-b").build(), node("node-c").build());
    NodeScoring.Scores s = NodeScoring.score(input(pod("p").build(), nodes, List.of()));
    assertThat(s.best().getMetadata().getName()).isEqualTo("node-a");
    assertThat(s.ranked())
        .extracting(n -> n.getMetadata().getName())
        .containsExactly("node-a", "node-b", "node-c");
  }

  @Test
  void oneFeasibleNodeIsNotScored() {
    NodeScoring.Scores s =
        NodeScoring.score(input(prefersSsd(), List.of(node("node-a").build()), List.of()));
    assertThat(s.byPlugin()).isEmpty();
    assertThat(s.best().getMetadata().getName()).isEqualTo("node-a");
  }

  @Test
  void defaultWeightsAreUpstreams() {
    assertThat(NodeScoring.weight("TaintToleration")).isEqualTo(3);
    assertThat(NodeScoring.weight("NodeAffinity")).isEqualTo(2);
    assertThat(NodeScoring.weight("PodTopologySpread")).isEqualTo(2);
    assertThat(NodeScoring.weight("InterPodAffinity")).isEqualTo(2);
    assertThat(NodeScoring.weight("DynamicResources")).isEqualTo(2);
    assertThat(NodeScoring.weight("NodeResourcesFit")).isEqualTo(1);
    assertThat(NodeScoring.weight("NodeResourcesBalancedAllocation")).isEqualTo(1);
    assertThat(NodeScoring.weight("ImageLocality")).isEqualTo(1);
  }
}
