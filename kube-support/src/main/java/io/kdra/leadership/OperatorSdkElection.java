package io.kdra.leadership;

/**
 * The election of a service built on quarkus-operator-sdk (the claim-controller, the
 * computeclass-bridge). The SDK's own election is not used: its {@code LeaderElectionManager}
 * (operator SDK 5.3.0) builds fabric8's {@code LeaseLock} itself, with no way to hand it another,
 * and that lock throws on a Lease whose times or duration are missing (written by {@code kubectl},
 * a GitOps tool, a chart), which ends the SDK's election for good: the replica stayed Ready and
 * never led. So no service hands the SDK an election configuration; the SDK then starts its event
 * processing on every replica at once, and each reconciler writes only while its replica leads
 * ({@link Leadership#leading()}, {@link LeaseFence}), as a replica that lost its Lease always did
 * (the SDK never stops its event processing; stopping it by hand would leave a reconcile in flight
 * marked running for good). A standby's fenced reconcile is not retried ({@link FencedWrite}); at
 * each win, {@link LeadershipRequeue} reconciles what it left alone. {@link ElectionWiring} runs
 * the election instead, from the first one on, with {@link ToleratingLeaseLock}.
 */
public final class OperatorSdkElection {

  private OperatorSdkElection() {}

  /**
   * Starts this replica's first election; nothing when not electing (a single replica, which always
   * leads). Call it once the operator has started, where the SDK started its own: the informers
   * have listed (or their first list timed out) by then.
   */
  public static void campaign(ElectionWiring wiring, Leadership leadership) {
    if (wiring.electing()) {
      wiring.elect(leadership, () -> {});
    }
  }
}
