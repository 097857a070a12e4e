package io.kdra.kubectl;

import static org.assertj.core.api.Assertions.assertThat;

import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.PodBuilder;
import java.util.List;
import org.junit.jupiter.api.Test;

/** What {@code kubectl dra why pod/...} prints beside the decision. */
class RenderTest {

  static Pod pending(String nominated) {
    return new PodBuilder()
        .withNewMetadata()
        .withName("high")
        .withNamespace("ns")
        .endMetadata()
        .withNewSpec()
        .withSchedulerName("dra-claim-controller")
        .endSpec()
        .withNewStatus()
        .withNominatedNodeName(nominated)
        .addNewCondition()
        .withType("PodScheduled")
        .withStatus("False")
        .withReason("Unschedulable")
        .withMessage(
            "0/1 nodes are available. preemption: nominated node node-a, preempting ns/low.")
        .endCondition()
        .endStatus()
        .build();
  }

  static final PodWhy.Answer UNSCHEDULABLE =
      PodWhy.Answer.of(PodWhy.State.UNSCHEDULABLE, "no GPU free", null, List.of());

  @Test
  void aPreemptorShowsItsNominatedNodeAndTheControllersPreemptionNote() {
    List<String> out = Render.pod(pending("node-a"), UNSCHEDULABLE);

    assertThat(out)
        .contains(
            "Nominated:  node-a (it preempted pods of lower priority there; what they free is"
                + " kept for it)")
        .anySatisfy(l -> assertThat(l).startsWith("Condition:  ").contains("preempting ns/low"));
  }

  @Test
  void aPodWithoutNominationShowsNone() {
    assertThat(Render.pod(pending(null), UNSCHEDULABLE)).noneMatch(l -> l.startsWith("Nominated:"));
  }
}
