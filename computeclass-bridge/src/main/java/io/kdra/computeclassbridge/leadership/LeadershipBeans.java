package io.kdra.computeclassbridge.leadership;

import io.fabric8.kubernetes.client.KubernetesClient;
import io.javaoperatorsdk.operator.api.config.LeaderElectionConfiguration;
import io.kdra.computeclassbridge.reconcile.BridgeConfig;
import io.quarkus.runtime.Quarkus;
import io.quarkus.runtime.ShutdownEvent;
import jakarta.annotation.Priority;
import jakarta.enterprise.context.ApplicationScoped;
import jakarta.enterprise.context.Dependent;
import jakarta.enterprise.event.Observes;
import jakarta.enterprise.inject.Produces;
import jakarta.inject.Singleton;
import java.util.Optional;
import java.util.UUID;

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

  @Produces
  @Singleton
  Leadership leadership(BridgeConfig config, KubernetesClient client) {
    BridgeConfig.LeaderElection le = config.leaderElection();
    String identity = identity(le.identity(), System.getenv("HOSTNAME"));
    if (!le.enabled()) {
      return Leadership.single(identity);
    }
    LeaseRelease release = new LeaseRelease(client, leaseNamespace(le, client), le.leaseName(),
        identity);
    return Leadership.elected(identity, release::release, () -> Quarkus.asyncExit(1));
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

  void onStop(@Observes @Priority(BEFORE_OPERATOR_STOP) ShutdownEvent event,
      Leadership leadership) {
    leadership.shuttingDown();
  }

  /** The configured identity, else the pod name, else a random one (never two alike). */
  static String identity(Optional<String> configured, String hostname) {
    return configured.filter(s -> !s.isBlank())
        .orElseGet(() -> hostname != null && !hostname.isBlank() ? hostname
            : "computeclass-bridge-" + UUID.randomUUID());
  }

  private static String leaseNamespace(BridgeConfig.LeaderElection le, KubernetesClient client) {
    return le.leaseNamespace().filter(s -> !s.isBlank())
        .or(() -> Optional.ofNullable(client.getNamespace()))
        .orElseThrow(() -> new IllegalStateException("bridge.leader-election.lease-namespace "
            + "is not set and the bridge's own namespace is unknown; set it, or disable leader "
            + "election (bridge.leader-election.enabled=false) for a single replica"));
  }
}
