package io.kdra.devicedriver;

import io.kdra.devicedriver.config.DriverConfig;
import io.kdra.devicedriver.discovery.DiscoveryLiveness;
import io.kdra.devicedriver.discovery.InventoryWatcher;
import io.kdra.devicedriver.plugin.KubeletPluginServer;
import io.kdra.devicedriver.plugin.PluginSocketProbe;
import jakarta.annotation.PreDestroy;
import jakarta.enterprise.context.ApplicationScoped;
import jakarta.inject.Inject;
import java.time.Duration;
import java.time.Instant;
import java.util.Optional;
import java.util.function.Supplier;
import org.eclipse.microprofile.health.HealthCheck;
import org.eclipse.microprofile.health.HealthCheckResponse;
import org.eclipse.microprofile.health.Liveness;

/**
 * Liveness: the kubelet plugin socket answers ({@link PluginSocketProbe}) and discovery still makes
 * progress ({@link DiscoveryLiveness}). A discovery that hangs leaves the driver advertising a
 * frozen inventory and, with the same hung command, usually blocks prepares as well; a restart is
 * what mends it. A discovery that fails promptly (a broken GPU) keeps the driver live: that is the
 * devices' health, reported as taints and in pod status.
 */
@Liveness
@ApplicationScoped
public class DeviceDriverLiveness implements HealthCheck {

  /**
   * Well above a loaded node's answer time, and below the chart's probe timeout (3 s), so that the
   * kubelet sees the reason rather than its own timeout.
   */
  static final Duration SOCKET_DEADLINE = Duration.ofSeconds(2);

  @Inject DriverRuntime runtime;
  @Inject DriverConfig config;

  private final PluginSocketProbe probe = new PluginSocketProbe(SOCKET_DEADLINE);
  private final SecondMissInARow socketMisses = new SecondMissInARow();

  @Override
  public HealthCheckResponse call() {
    DiscoveryLiveness rule =
        DiscoveryLiveness.forPasses(config.discoveryInterval(), config.nvidia().timeout());
    KubeletPluginServer server = runtime.server();
    Supplier<Optional<String>> socket =
        server == null
            ? Optional::empty
            : () -> socketMisses.judge(probe.check(server.draSocket()));
    return check(runtime.inventory(), rule, Instant.now(), socket);
  }

  @PreDestroy
  void close() {
    probe.close();
  }

  /**
   * @param watcher the discovery, null before it has started (live: start-up is not a hang)
   * @param socket why the plugin socket does not answer, empty when it does (or is not served yet)
   */
  static HealthCheckResponse check(
      InventoryWatcher watcher,
      DiscoveryLiveness rule,
      Instant now,
      Supplier<Optional<String>> socket) {
    var response = HealthCheckResponse.named("device-driver");
    if (watcher == null) {
      return response.up().withData("discovery", "starting").build();
    }
    Optional<String> stuck = rule.stuck(watcher.lastProgress(), now);
    if (stuck.isPresent()) {
      return response.down().withData("discovery", stuck.get()).build();
    }
    Optional<String> unreachable = socket.get();
    return unreachable.isPresent()
        ? response.down().withData("plugin-socket", unreachable.get()).build()
        : response.up().build();
  }

  /**
   * Forgives a single missed socket check: a cold JVM's first call on a loaded node can run past
   * the deadline although the server is fine. A socket that is gone or a server that hangs misses
   * every check, so the second miss in a row is reported.
   */
  static final class SecondMissInARow {
    private int missed;

    /** {@code why} when it is the second miss in a row, else empty. */
    synchronized Optional<String> judge(Optional<String> why) {
      if (why.isEmpty()) {
        missed = 0;
        return why;
      }
      missed++;
      return missed >= 2 ? why : Optional.empty();
    }
  }
}
