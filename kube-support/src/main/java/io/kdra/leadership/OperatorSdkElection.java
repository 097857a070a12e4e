package io.kdra.leadership;

import io.javaoperatorsdk.operator.api.config.LeaderElectionConfiguration;

/**
 * The election configuration quarkus-operator-sdk looks up as a bean (in the profiles named by
 * {@code quarkus.operator-sdk.activate-leader-election-for-profiles}, {@code prod} by default): it
 * keeps informers warm on every replica and reconciles on the leader only. Apart from {@link
 * ElectionWiring} because only the operators have the SDK on their class path.
 */
public final class OperatorSdkElection {

  private OperatorSdkElection() {}

  /**
   * Null when not electing: then every replica reconciles, which is only safe with one replica (the
   * chart refuses more).
   */
  public static LeaderElectionConfiguration configuration(
      ElectionWiring wiring, Leadership leadership) {
    if (!wiring.electing()) {
      return null;
    }
    LeaderElectionSettings s = wiring.settings();
    // exitOnStopLeading false: Leadership decides (hand the Lease over on shutdown, else step
    // down and campaign again with ElectionWiring's own elector, since the SDK's election ends
    // with the leadership and the SDK keeps its event processing running); the SDK's
    // System.exit inside a shutdown would also block that shutdown until SIGKILL
    return new LeaderElectionConfiguration(
        wiring.leaseName(),
        wiring.leaseNamespace(),
        s.leaseDuration(),
        s.renewDeadline(),
        s.retryPeriod(),
        wiring.identity(),
        leadership.callbacks(),
        false);
  }
}
