package io.kdra.claimcontroller.config;

import io.fabric8.kubernetes.client.KubernetesClient;
import io.javaoperatorsdk.operator.api.config.LeaderElectionConfiguration;
import io.kdra.leadership.Leadership;
import io.kdra.leadership.LeadershipMeters;
import io.kdra.leadership.LeaseFence;
import io.kdra.leadership.LeaseRelease;
import io.micrometer.core.instrument.MeterRegistry;
import io.quarkus.runtime.Quarkus;
import io.quarkus.runtime.ShutdownEvent;
import io.quarkus.runtime.StartupEvent;
import io.quarkus.runtime.configuration.ConfigUtils;
import jakarta.annotation.Priority;
import jakarta.enterprise.inject.Disposes;
import jakarta.enterprise.context.ApplicationScoped;
import jakarta.enterprise.context.Dependent;
import jakarta.enterprise.event.Observes;
import jakarta.enterprise.inject.Produces;
import jakarta.inject.Singleton;
import java.time.Clock;
import java.util.List;
import org.eclipse.microprofile.config.ConfigProvider;

/**
 * Leader election for quarkus-operator-sdk, which looks the {@link LeaderElectionConfiguration}
 * bean up (in the profiles named by {@code quarkus.operator-sdk.activate-leader-election-for-
 * profiles}, {@code prod} by default), keeps informers warm on every replica and reconciles on
 * the leader only. {@link Leadership} adds a hand-over on shutdown (the Lease released once
 * reconciling stopped, so a standby takes over at its next retry) and an exit on a lost Lease.
 */
@ApplicationScoped
public class ControllerLeadership {

  /** Before quarkus-operator-sdk's own ShutdownEvent observer (default priority 2500). */
  static final int BEFORE_OPERATOR_STOP = 1000;
  private static final String COMPONENT = "claim-controller";

  @Produces
  @Singleton
  Leadership leadership(ClaimControllerConfig config, KubernetesClient client) {
    var le = config.leaderElection();
    String identity = Leadership.identity(le.identity(), System.getenv("HOSTNAME"), COMPONENT);
    if (!le.enabled() || !electionActive()) {
      // without an election nobody would ever call this replica the leader
      return Leadership.single(COMPONENT, identity);
    }
    LeaseRelease release = new LeaseRelease(client, leaseNamespace(config, client),
        le.leaseName(), identity);
    return Leadership.elected(COMPONENT, identity, release::release,
        () -> Quarkus.asyncExit(1));
  }

  /**
   * The second opinion before each write ({@link LeaseFence}): open with one replica, else
   * watching this replica's Lease with the renew deadline.
   */
  @Produces
  @Singleton
  LeaseFence leaseFence(ClaimControllerConfig config, KubernetesClient client,
      Leadership leadership) {
    var le = config.leaderElection();
    if (!le.enabled() || !electionActive()) {
      return LeaseFence.open();
    }
    return LeaseFence.watching(client, leaseNamespace(config, client), le.leaseName(),
        leadership.identity(), le.renewDeadline(), Clock.systemUTC());
  }

  /**
   * Whether quarkus-operator-sdk elects at all in the running profile (its
   * {@code activate-leader-election-for-profiles}, {@code prod} by default): dev and test run
   * one replica that leads without a Lease, whose fence must stay open.
   */
  private static boolean electionActive() {
    List<String> electing = ConfigProvider.getConfig().getOptionalValues(
        "quarkus.operator-sdk.activate-leader-election-for-profiles", String.class)
        .orElse(List.of("prod"));
    return ConfigUtils.getProfiles().stream().anyMatch(electing::contains);
  }

  void closeFence(@Disposes LeaseFence fence) {
    fence.close();
  }

  /**
   * Null when disabled: then every replica reconciles, which is only safe with one replica (the
   * chart refuses more).
   */
  @Produces
  @Dependent
  LeaderElectionConfiguration leaderElection(ClaimControllerConfig config,
      KubernetesClient client, Leadership leadership) {
    var le = config.leaderElection();
    if (!le.enabled()) {
      return null;
    }
    // exitOnStopLeading false: Leadership decides (hand the Lease over on shutdown, exit else);
    // the SDK's System.exit inside a shutdown blocks that shutdown until SIGKILL
    return new LeaderElectionConfiguration(le.leaseName(), leaseNamespace(config, client),
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

  private static String leaseNamespace(ClaimControllerConfig config, KubernetesClient client) {
    return LeaseRelease.namespace(config.leaderElection().leaseNamespace(), client,
        "kdra.claim-controller.leader-election.lease-namespace");
  }
}
