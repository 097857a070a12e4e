package io.kdra.slicepublisher.k8s;

import jakarta.enterprise.context.ApplicationScoped;
import jakarta.inject.Inject;
import org.eclipse.microprofile.health.HealthCheck;
import org.eclipse.microprofile.health.HealthCheckResponse;
import org.eclipse.microprofile.health.Readiness;

/**
 * Ready when the Node and ResourceSlice caches have synced and this replica is the writer (the
 * leader, or the only one when leader election is off). gRPC is served on the HTTP port, so a
 * probe that gets an answer already proves the server listens. Only the leader is ready, so the
 * Service sends drivers to it: inventories live in the leader's memory.
 */
@Readiness
@ApplicationScoped
public class PublisherReadiness implements HealthCheck {

  @Inject PublisherLifecycle lifecycle;

  @Override
  public HealthCheckResponse call() {
    return HealthCheckResponse.named("slice-publisher-writer")
        .status(lifecycle.ready())
        .withData("leaderOrSingle", lifecycle.writer())
        .build();
  }
}
