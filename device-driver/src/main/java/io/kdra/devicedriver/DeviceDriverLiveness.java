package io.kdra.devicedriver;

import io.kdra.devicedriver.config.DriverConfig;
import io.kdra.devicedriver.discovery.DiscoveryLiveness;
import io.kdra.devicedriver.discovery.InventoryWatcher;
import jakarta.enterprise.context.ApplicationScoped;
import jakarta.inject.Inject;
import java.time.Instant;
import java.util.Optional;
import org.eclipse.microprofile.health.HealthCheck;
import org.eclipse.microprofile.health.HealthCheckResponse;
import org.eclipse.microprofile.health.Liveness;

/**
 * Liveness: discovery still makes progress ({@link DiscoveryLiveness}). A discovery that hangs
 * leaves the driver advertising a frozen inventory and, with the same hung command, usually blocks
 * prepares as well; a restart is what mends it. A discovery that fails promptly (a broken GPU)
 * keeps the driver live: that is the devices' health, reported as taints and in pod status.
 */
@Liveness
@ApplicationScoped
public class DeviceDriverLiveness implements HealthCheck {

  @Inject DriverRuntime runtime;
  @Inject DriverConfig config;

  @Override
  public HealthCheckResponse call() {
    DiscoveryLiveness rule =
        DiscoveryLiveness.forPasses(config.discoveryInterval(), config.nvidia().timeout());
    return check(runtime.inventory(), rule, Instant.now());
  }

  /**
   * @param watcher the discovery, null before it has started (live: start-up is not a hang)
   */
  static HealthCheckResponse check(InventoryWatcher watcher, DiscoveryLiveness rule, Instant now) {
    var response = HealthCheckResponse.named("device-driver");
    if (watcher == null) {
      return response.up().withData("discovery", "starting").build();
    }
    Optional<String> stuck = rule.stuck(watcher.lastProgress(), now);
    return stuck.isPresent()
        ? response.down().withData("discovery", stuck.get()).build()
        : response.up().build();
  }
}
