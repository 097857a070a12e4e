package io.kdra.computeclassbridge.reconciler;

import static io.kdra.computeclassbridge.TestData.computeClass;
import static org.assertj.core.api.Assertions.assertThat;

import io.javaoperatorsdk.operator.api.reconciler.DeleteControl;
import io.javaoperatorsdk.operator.api.reconciler.UpdateControl;
import io.kdra.computeclassbridge.model.ComputeClass;
import io.kdra.computeclassbridge.model.Priority;
import io.kdra.leadership.Leadership;
import java.time.Clock;
import java.time.Duration;
import java.util.Optional;
import org.junit.jupiter.api.Test;

/**
 * A bridge replica that does not lead (a standby, or one that lost its Lease) reconciles (every
 * replica's event processing runs: {@code OperatorSdkElection}) but writes nothing: every reconcile
 * and cleanup waits for this replica to lead again. The collaborators that would write are absent:
 * touching one fails the test.
 */
class StandbyReconcileTest {

  private static final Duration RETRY = Duration.ofSeconds(2);

  private final Leadership leadership =
      Leadership.elected("computeclass-bridge", "bridge-a", () -> {}, () -> {});

  private final ComputeClassReconciler reconciler =
      new ComputeClassReconciler(
          new ReconcilerSettings(Optional.empty(), Optional.empty(), "catalog", RETRY),
          null,
          null,
          null,
          null,
          null,
          null,
          null,
          Clock.systemUTC(),
          leadership,
          null);

  @Test
  void aReplicaThatDoesNotLeadWritesNothingAndLooksAgainLater() {
    leadership.callbacks().onStartLeading();
    leadership.callbacks().onStopLeading();
    ComputeClass cc = computeClass("standby", Priority.gpu("nvidia-l4", 1));

    UpdateControl<ComputeClass> update = reconciler.reconcile(cc, null);
    assertThat(update.isNoUpdate()).isTrue();
    assertThat(update.getScheduleDelay()).contains(RETRY.toMillis());

    DeleteControl delete = reconciler.cleanup(cc, null);
    assertThat(delete.isRemoveFinalizer()).isFalse();
    assertThat(delete.getScheduleDelay()).contains(RETRY.toMillis());
  }
}
