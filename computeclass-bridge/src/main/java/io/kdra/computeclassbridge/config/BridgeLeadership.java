package io.kdra.computeclassbridge.config;

import io.fabric8.kubernetes.client.KubernetesClient;
import io.javaoperatorsdk.operator.Operator;
import io.kdra.leadership.ElectionWiring;
import io.kdra.leadership.Leadership;
import io.kdra.leadership.OperatorSdkElection;
import io.kdra.leadership.SyncedInformers;
import io.micrometer.core.instrument.MeterRegistry;
import io.quarkus.runtime.ShutdownEvent;
import io.quarkus.runtime.StartupEvent;
import jakarta.annotation.Priority;
import jakarta.enterprise.context.ApplicationScoped;
import jakarta.enterprise.event.Observes;
import jakarta.enterprise.inject.Instance;
import jakarta.enterprise.inject.Produces;
import jakarta.inject.Singleton;

/**
 * The bridge's leader election as CDI beans; what they are is {@link ElectionWiring}'s and {@link
 * OperatorSdkElection}'s (shared with the other elected services). Election is off in the dev and
 * test profiles (application.properties): one replica, which always leads.
 */
@ApplicationScoped
public class BridgeLeadership {

  /** After quarkus-operator-sdk's own StartupEvent observer (priority 3123), which starts it. */
  static final int AFTER_OPERATOR_START = 4000;

  /** Before quarkus-operator-sdk's own ShutdownEvent observer (default priority 2500). */
  static final int BEFORE_OPERATOR_STOP = 1000;

  /** After it: the reconciles have stopped. */
  static final int AFTER_OPERATOR_STOP = 3000;

  @Produces
  @Singleton
  ElectionWiring election(BridgeConfig config, KubernetesClient client) {
    return new ElectionWiring(
        "computeclass-bridge",
        "kdra.computeclass-bridge.leader-election",
        config.leaderElection(),
        client,
        true,
        System.getenv("HOSTNAME"));
  }

  @Produces
  @Singleton
  Leadership leadership(ElectionWiring election) {
    // nothing to stop: the reconciler writes only while leading (ComputeClassReconciler)
    return election.leadership(() -> {});
  }

  /** Whether every informer has listed: the reconciler writes only then. */
  @Produces
  @Singleton
  SyncedInformers syncedInformers(Instance<Operator> operator) {
    return new SyncedInformers(operator::get);
  }

  /** The leadership meters from start-up on, which also sets the election up at start-up. */
  void meters(
      @Observes StartupEvent event,
      MeterRegistry registry,
      ElectionWiring election,
      Leadership leadership) {
    election.registerMeters(registry, () -> leadership);
  }

  /**
   * The first election, once the operator has started: this wiring's, not the operator SDK's, whose
   * Lease lock gives up on a Lease written by hand ({@link OperatorSdkElection}).
   */
  void campaign(
      @Observes @Priority(AFTER_OPERATOR_START) StartupEvent event,
      ElectionWiring election,
      Leadership leadership) {
    OperatorSdkElection.campaign(election, leadership);
  }

  void onStop(
      @Observes @Priority(BEFORE_OPERATOR_STOP) ShutdownEvent event, Leadership leadership) {
    leadership.shuttingDown();
  }

  /**
   * Ends this replica's election, which releases the Lease if this replica leads: once the writing
   * has stopped (quarkus-operator-sdk has stopped the reconciles by then, and leaves the client
   * open: {@code quarkus.operator-sdk.close-client-on-stop=false}).
   */
  void stopElections(
      @Observes @Priority(AFTER_OPERATOR_STOP) ShutdownEvent event, ElectionWiring election) {
    election.stopElections();
  }
}
