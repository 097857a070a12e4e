package io.kdra.computeclassbridge.reconciler;

import static io.kdra.computeclassbridge.TestData.computeClass;
import static org.assertj.core.api.Assertions.assertThat;

import io.javaoperatorsdk.operator.api.reconciler.DeleteControl;
import io.javaoperatorsdk.operator.api.reconciler.UpdateControl;
import io.kdra.computeclassbridge.config.BridgeConfig;
import io.kdra.computeclassbridge.model.ComputeClass;
import io.kdra.computeclassbridge.model.Priority;
import io.kdra.leadership.LeaderElectionSettings;
import io.kdra.leadership.Leadership;
import java.lang.reflect.Proxy;
import java.time.Clock;
import java.time.Duration;
import java.util.Optional;
import org.junit.jupiter.api.Test;

/**
 * A bridge replica that lost its Lease stays up (quarkus-operator-sdk keeps reconciling) but writes
 * nothing: every reconcile and cleanup waits for this replica to lead again. The collaborators that
 * would write are absent: touching one fails the test.
 */
class StandbyReconcileTest {

  private static final Duration RETRY = Duration.ofSeconds(2);

  private final Leadership leadership =
      Leadership.elected("computeclass-bridge", "bridge-a", () -> {}, () -> {});

  private final ComputeClassReconciler reconciler =
      new ComputeClassReconciler(
          config(), null, null, null, null, null, null, null, Clock.systemUTC(), leadership, null);

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

  /** Only the leader-election settings are read on this path. */
  private static BridgeConfig config() {
    LeaderElectionSettings settings =
        (LeaderElectionSettings)
            Proxy.newProxyInstance(
                StandbyReconcileTest.class.getClassLoader(),
                new Class<?>[] {LeaderElectionSettings.class},
                (p, m, a) ->
                    switch (m.getName()) {
                      case "retryPeriod" -> RETRY;
                      case "enabled" -> true;
                      default -> Optional.empty();
                    });
    return (BridgeConfig)
        Proxy.newProxyInstance(
            StandbyReconcileTest.class.getClassLoader(),
            new Class<?>[] {BridgeConfig.class},
            (p, m, a) -> {
              if (m.getName().equals("leaderElection")) {
                return settings;
              }
              throw new AssertionError("a standby read " + m.getName());
            });
  }
}
