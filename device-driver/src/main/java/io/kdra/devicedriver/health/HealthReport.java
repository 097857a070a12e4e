package io.kdra.devicedriver.health;

import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Objects;

/**
 * The health of every device of this driver on this node at one moment: one message of the
 * kubelet's health stream, always the complete list (the kubelet treats a device missing from it as
 * Unknown once its timeout has passed).
 *
 * @param devices sorted by device name, as the inventory is
 */
public record HealthReport(List<Device> devices) {

  /** A report with no devices (nothing discovered yet). */
  public static final HealthReport EMPTY = new HealthReport(List.of());

  /**
   * One device's health.
   *
   * @param pool the pool of the device (this node's pool, as in the ResourceSlice and in the
   *     prepare response)
   * @param name the device name within the pool
   * @param message why; empty when there is nothing to say
   * @param determinedAt when the driver last checked it (the discovery pass)
   * @param checkTimeout how long the kubelet should trust this report without a newer one
   */
  public record Device(
      String pool,
      String name,
      HealthState state,
      String message,
      Instant determinedAt,
      Duration checkTimeout) {
    public Device {
      Objects.requireNonNull(pool, "pool");
      Objects.requireNonNull(name, "name");
      Objects.requireNonNull(state, "state");
      message = message == null ? "" : message;
      Objects.requireNonNull(determinedAt, "determinedAt");
      Objects.requireNonNull(checkTimeout, "checkTimeout");
    }

    /** Equal except for when it was determined. */
    boolean sameHealthAs(Device other) {
      return pool.equals(other.pool)
          && name.equals(other.name)
          && state == other.state
          && message.equals(other.message)
          && checkTimeout.equals(other.checkTimeout);
    }
  }

  public HealthReport {
    devices = List.copyOf(devices);
  }

  /**
   * Whether the two reports say the same about the same devices, whenever they were determined:
   * what the kubelet itself compares (health, message, timeout) plus the set of devices.
   */
  public boolean sameHealthAs(HealthReport other) {
    if (devices.size() != other.devices.size()) {
      return false;
    }
    for (int i = 0; i < devices.size(); i++) {
      if (!devices.get(i).sameHealthAs(other.devices.get(i))) {
        return false;
      }
    }
    return true;
  }
}
