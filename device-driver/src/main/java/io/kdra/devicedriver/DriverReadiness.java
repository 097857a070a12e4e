package io.kdra.devicedriver;

import io.kdra.devicedriver.plugin.KubeletPluginServer;
import io.kdra.devicedriver.publisher.InventoryReporter;
import jakarta.enterprise.context.ApplicationScoped;
import jakarta.inject.Inject;
import org.eclipse.microprofile.health.HealthCheck;
import org.eclipse.microprofile.health.HealthCheckResponse;
import org.eclipse.microprofile.health.HealthCheckResponseBuilder;
import org.eclipse.microprofile.health.Readiness;

/**
 * Readiness: both sockets served, the kubelet accepted the registration, and (when a publisher is
 * configured) the inventory stream is acknowledged. Each part is reported by name, so a probe
 * failure says which one is missing.
 */
@Readiness
@ApplicationScoped
public class DriverReadiness implements HealthCheck {
  @Inject DriverRuntime runtime;

  @Override
  public HealthCheckResponse call() {
    HealthCheckResponseBuilder r = HealthCheckResponse.named("device-driver");
    KubeletPluginServer server = runtime.server();
    boolean serving = server != null && server.serving();
    boolean registered = runtime.registration().accepted();
    InventoryReporter reporter = runtime.reporter();
    boolean published = reporter == null || reporter.connected();
    r.withData("sockets", serving ? "served" : "not served");
    r.withData("registration", runtime.registration().describe());
    r.withData(
        "publisher",
        reporter == null
            ? "not configured"
            : reporter.connected() ? "connected" : reporter.lastError());
    if (runtime.health() != null) {
      // information only: a kubelet without ResourceHealthStatus never opens one
      r.withData("healthStreams", runtime.health().streams());
    }
    if (runtime.inventory() != null && !runtime.inventory().lastError().isEmpty()) {
      r.withData("discovery", runtime.inventory().lastError());
    }
    return r.status(serving && registered && published).build();
  }
}
