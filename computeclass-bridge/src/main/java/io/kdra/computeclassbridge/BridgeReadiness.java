package io.kdra.computeclassbridge;

import io.kdra.leadership.Leadership;
import jakarta.enterprise.context.ApplicationScoped;
import jakarta.inject.Inject;
import org.eclipse.microprofile.health.HealthCheck;
import org.eclipse.microprofile.health.HealthCheckResponse;
import org.eclipse.microprofile.health.Readiness;

/**
 * Leadership as data, not as readiness (as the slice-publisher's): a standby that is never ready
 * would block a rolling update, because the new pod cannot become ready while the old leader holds
 * the Lease. Readiness itself comes from quarkus-operator-sdk's check (informers synced), which a
 * standby passes too: its caches are warm for the moment it takes over.
 */
@Readiness
@ApplicationScoped
public class BridgeReadiness implements HealthCheck {

  @Inject Leadership leadership;

  @Override
  public HealthCheckResponse call() {
    var r =
        HealthCheckResponse.named("computeclass-bridge-leadership")
            .up()
            .withData("leader", leadership.leading())
            .withData("identity", leadership.identity())
            .withData("electing", leadership.elected());
    if (leadership.leader() != null) {
      r.withData("leaseHolder", leadership.leader());
    }
    return r.build();
  }
}
