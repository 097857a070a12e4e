package io.kdra.claimcontroller.reconciler;

import static org.assertj.core.api.Assertions.assertThat;

import io.kdra.claimcontroller.scheduling.Outcome;
import io.kdra.claimcontroller.scheduling.PodScheduling;
import java.util.Map;
import java.util.stream.Stream;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

/** Which attempts wait for this replica to lead instead of being retried. */
class AwaitsLeadershipTest {

  static Stream<Arguments> table() {
    Outcome claimChanged = new Outcome.Retry("a claim changed meanwhile");
    Outcome unschedulable = new Outcome.Unschedulable("no node fits", Map.of(), "NoFit");
    return Stream.of(
        // fenced while another replica leads: quiet until this one leads
        Arguments.of(PodScheduling.FENCED, false, true),
        // fenced while leading (the fence has not seen the renewal yet): retried soon
        Arguments.of(PodScheduling.FENCED, true, false),
        // any other outcome is retried as ever, leading or not
        Arguments.of(claimChanged, false, false),
        Arguments.of(claimChanged, true, false),
        Arguments.of(unschedulable, false, false),
        Arguments.of(new Outcome.Waiting("claim not created yet"), false, false));
  }

  @ParameterizedTest
  @MethodSource("table")
  void onlyAFencedAttemptOfAStandbyAwaitsLeadership(
      Outcome outcome, boolean leading, boolean awaits) {
    assertThat(PodReconciler.awaitsLeadership(outcome, leading)).isEqualTo(awaits);
  }
}
