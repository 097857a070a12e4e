package io.kdra.devicedriver.health;

import io.kdra.devicedriver.discovery.DiscoveryPass;
import io.kdra.devicedriver.discovery.NodeDevice;
import java.time.Duration;
import java.time.Instant;
import java.util.Objects;

/**
 * The pure decisions of device health reporting: what a discovery pass says about each device's
 * health, and whether the kubelet's streams must hear it.
 *
 * <p>The kubelet (1.36, {@code pkg/kubelet/cm/dra/healthinfo.go}) stamps each device with the time
 * it received the report and shows it as Unknown once {@code health_check_timeout_seconds} (default
 * 30 s) have passed without a newer report. So besides every change, the report is re-sent as a
 * heartbeat: at the first pass at least a third of the check timeout after the last send. The check
 * timeout is four discovery intervals (at least 30 s), so that a slow pass does not make devices
 * Unknown, while a discovery that stops altogether does.
 */
public final class HealthReporting {
  private static final Duration MIN_CHECK_TIMEOUT = Duration.ofSeconds(30);

  private final String pool;
  private final Duration checkTimeout;
  private final Duration heartbeat;

  /**
   * @param pool this node's pool name (the node name)
   * @param checkTimeout reported to the kubelet; whole seconds
   */
  public HealthReporting(String pool, Duration checkTimeout) {
    this.pool = Objects.requireNonNull(pool, "pool");
    if (checkTimeout.isNegative() || checkTimeout.isZero() || checkTimeout.getNano() != 0) {
      throw new IllegalArgumentException(
          "health check timeout must be a positive number of seconds, not " + checkTimeout);
    }
    this.checkTimeout = checkTimeout;
    this.heartbeat = checkTimeout.dividedBy(3);
  }

  /** Reporting for a driver whose discovery runs every {@code discoveryInterval}. */
  public static HealthReporting forDiscoveryEvery(String pool, Duration discoveryInterval) {
    Duration four = discoveryInterval.multipliedBy(4);
    long seconds = four.getSeconds() + (four.getNano() > 0 ? 1 : 0);
    return new HealthReporting(pool, max(MIN_CHECK_TIMEOUT, Duration.ofSeconds(seconds)));
  }

  /** The timeout every device is reported with. */
  public Duration checkTimeout() {
    return checkTimeout;
  }

  /**
   * What the pass says about each device: the health discovery found, or Unknown for every known
   * device when the pass failed (its health cannot be determined now, whatever it was before).
   */
  public HealthReport report(DiscoveryPass pass) {
    Instant at = pass.finishedAt();
    return new HealthReport(
        pass.inventory().devices().stream()
            .map(
                d ->
                    pass.failed()
                        ? device(d, HealthState.UNKNOWN, "discovery failed: " + pass.error(), at)
                        : device(d, state(d.health()), d.healthMessage(), at))
            .toList());
  }

  private HealthReport.Device device(NodeDevice d, HealthState state, String message, Instant at) {
    return new HealthReport.Device(pool, d.name(), state, message, at, checkTimeout);
  }

  private static HealthState state(NodeDevice.Health health) {
    return switch (health) {
      case HEALTHY -> HealthState.HEALTHY;
      case UNHEALTHY -> HealthState.UNHEALTHY;
    };
  }

  /**
   * Whether {@code next} must go to the streams.
   *
   * @param last what was sent last, or null if nothing was
   * @param lastSentAt when it was sent (ignored when {@code last} is null)
   * @param now the time of the pass that produced {@code next}
   */
  public boolean mustSend(HealthReport last, Instant lastSentAt, HealthReport next, Instant now) {
    if (last == null || !last.sameHealthAs(next)) {
      return true;
    }
    return !now.isBefore(lastSentAt.plus(heartbeat));
  }

  private static Duration max(Duration a, Duration b) {
    return a.compareTo(b) >= 0 ? a : b;
  }
}
