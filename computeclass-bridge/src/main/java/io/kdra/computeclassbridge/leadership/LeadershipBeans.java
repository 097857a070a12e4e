package io.kdra.computeclassbridge.leadership;

import io.fabric8.kubernetes.client.KubernetesClient;
import io.javaoperatorsdk.operator.api.config.LeaderElectionConfiguration;
import io.kdra.computeclassbridge.reconcile.BridgeConfig;
import io.kdra.leadership.Leadership;
import io.kdra.leadership.LeadershipMeters;
import io.kdra.leadership.LeaseRelease;
import io.micrometer.core.instrument.MeterRegistry;
import io.quarkus.runtime.Quarkus;
import io.quarkus.runtime.ShutdownEvent;
import io.quarkus.runtime.StartupEvent;
import jakarta.annotation.Priority;
import jakarta.enterprise.context.ApplicationScoped;
import jakarta.enterprise.context.Dependent;
import jakarta.enterprise.event.Observes;
import jakarta.enterprise.inject.Produces;
import jakarta.inject.Singleton;

/**
 * Leader election the way the claim-controller does it: quarkus-operator-sdk looks up the
 * {@link LeaderElectionConfiguration} bean (in the profiles named by
 * {@code quarkus.operator-sdk.activate-leader-election-for-profiles}, {@code prod} by default),
 * keeps informers warm on every replica and reconciles on the leader only. {@link Leadership}
 * adds the hand-over on shutdown and the exit on a lost Lease.
 */
@ApplicationScoped
public class LeadershipBeans {

  /** Before quarkus-operator-sdk's own ShutdownEvent observer (default priority 2500). */
  static final int BEFORE_OPERATOR_STOP = 1000;
  private static final String COMPONENT = "computeclass-bridge";

  @Produces
  @Singleton
  Leadership leadership(BridgeConfig config, KubernetesClient client) {
    BridgeConfig.LeaderElection le = config.leaderElection();
    String identity = Leadership.identity(le.identity(), System.getenv("HOSTNAME"), COMPONENT);
    if (!le.enabled()) {
      return Leadership.single(COMPONENT, identity);
    }
    LeaseRelease release = new LeaseRelease(client, leaseNamespace(le, client), le.leaseName(),
        identity);
    return Leadership.elected(COMPONENT, identity, release::release,
        () -> Quarkus.asyncExit(1));
  }

  /**
   * Null when disabled: then every replica reconciles, which is only safe with one replica (the
   * chart refuses more).
   */
  @Produces
  @Dependent
  LeaderElectionConfiguration leaderElection(BridgeConfig config, KubernetesClient client,
      Leadership leadership) {
    BridgeConfig.LeaderElection le = config.leaderElection();
    if (!le.enabled()) {
      return null;
    }
    // exitOnStopLeading false: Leadership decides (hand the Lease over on shutdown, exit else);
    // the SDK's System.exit inside a shutdown would block that shutdown for good
    return new LeaderElectionConfiguration(le.leaseName(), leaseNamespace(le, client),
        le.leaseDuration(), le.renewDeadline(), le.retryPeriod(), leadership.identity(),
        leadership.callbacks(), false);
  }

  /** The leadership meters from start-up on, which also sets the election up at start-up. */
  void meters(@Observes StartupEvent event, MeterRegistry registry, Leadership leadership) {
    LeadershipMeters.register(registry, COMPONENT, () -> leadership);
  }

  void onStop(@Observes @Priority(BEFORE_OPERATOR_STOP) ShutdownEvent event,
      Leadership leadership) {
    leadership.shuttingDown();
  }

  private static String leaseNamespace(BridgeConfig.LeaderElection le, KubernetesClient client) {
    return LeaseRelease.namespace(le.leaseNamespace(), client,
        "bridge.leader-election.lease-namespace");
  }
}
