package io.kdra.computeclassbridge.reconciler;

import static io.kdra.computeclassbridge.TestData.computeClass;
import static org.assertj.core.api.Assertions.assertThat;

import io.javaoperatorsdk.operator.api.reconciler.UpdateControl;
import io.kdra.computeclassbridge.model.ComputeClass;
import io.kdra.computeclassbridge.model.Priority;
import io.kdra.computeclassbridge.observability.BridgeMetrics;
import io.kdra.leadership.Leadership;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.time.Clock;
import java.time.Duration;
import java.util.List;
import java.util.Optional;
import org.junit.jupiter.api.Test;

/**
 * A bridge replica that does not lead (a standby, or one that lost its Lease) reconciles (every
 * replica's event processing runs: {@code OperatorSdkElection}) but writes nothing, the finalizer
 * included, and schedules no retry: it reconciles every ComputeClass again once it leads ({@code
 * LeadershipRequeue}). The collaborators that would write are absent, and so is the context:
 * touching one fails the test.
 */
class StandbyReconcileTest {

  private static final Duration RETRY = Duration.ofSeconds(2);

  private final Leadership leadership =
      Leadership.elected("computeclass-bridge", "bridge-a", () -> {}, () -> {});
  private final SimpleMeterRegistry registry = new SimpleMeterRegistry();

  private final ComputeClassReconciler reconciler =
      new ComputeClassReconciler(
          new ReconcilerSettings(Optional.empty(), Optional.empty(), "catalog", RETRY),
          null,
          null,
          null,
          null,
          null,
          null,
          new BridgeMetrics(registry),
          Clock.systemUTC(),
          leadership,
          null);

  @Test
  void aReplicaThatDoesNotLeadWritesNothingAndWaitsToLead() {
    leadership.callbacks().onStartLeading();
    leadership.callbacks().onStopLeading();
    ComputeClass cc = computeClass("standby", Priority.gpu("nvidia-l4", 1));

    UpdateControl<ComputeClass> update = reconciler.reconcile(cc, null);
    assertThat(update.isNoUpdate()).isTrue();
    assertThat(update.getScheduleDelay()).isEmpty();

    cc.getMetadata().setFinalizers(List.of(ComputeClassReconciler.FINALIZER));
    cc.getMetadata().setDeletionTimestamp("2026-12-07T12:00:00Z");
    UpdateControl<ComputeClass> deleting = reconciler.reconcile(cc, null);
    assertThat(deleting.isNoUpdate()).isTrue();
    assertThat(deleting.getScheduleDelay()).isEmpty();

    assertThat(registry.find("kdra.bridge.reconciles").tag("outcome", "standby").counter().count())
        .isEqualTo(2);
  }
}
