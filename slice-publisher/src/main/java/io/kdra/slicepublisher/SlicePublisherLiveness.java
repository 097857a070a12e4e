package io.kdra.slicepublisher;

import jakarta.enterprise.context.ApplicationScoped;
import org.eclipse.microprofile.health.HealthCheck;
import org.eclipse.microprofile.health.HealthCheckResponse;
import org.eclipse.microprofile.health.Liveness;

/**
 * Liveness: the process is up and its CDI container works. Readiness checks are added per
 * capability.
 */
@Liveness
@ApplicationScoped
public class SlicePublisherLiveness implements HealthCheck {

  @Override
  public HealthCheckResponse call() {
    return HealthCheckResponse.named("slice-publisher").up().build();
  }
}
