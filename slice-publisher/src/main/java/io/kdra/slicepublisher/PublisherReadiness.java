package io.kdra.slicepublisher;

import io.kdra.slicepublisher.config.PublisherLifecycle;
import jakarta.enterprise.context.ApplicationScoped;
import jakarta.inject.Inject;
import org.eclipse.microprofile.health.HealthCheck;
import org.eclipse.microprofile.health.HealthCheckResponse;
import org.eclipse.microprofile.health.Readiness;

/**
 * Ready when the Node and ResourceSlice caches have synced; gRPC is served on the HTTP port, so a
 * probe that gets an answer already proves the server listens. Leadership is reported as data, not
 * as readiness: a standby that is never ready would block a rolling update (the new pod cannot
 * become ready while the old leader holds the Lease). A standby ends inventory streams with
 * UNAVAILABLE, and drivers reconnect until they reach the leader.
 */
@Readiness
@ApplicationScoped
public class PublisherReadiness implements HealthCheck {

  @Inject PublisherLifecycle lifecycle;

  @Override
  public HealthCheckResponse call() {
    return HealthCheckResponse.named("slice-publisher-writer")
        .status(lifecycle.ready())
        .withData("writer", lifecycle.writer())
        .build();
  }
}
