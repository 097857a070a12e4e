package io.kdra.core.model;

import java.util.Comparator;
import java.util.Objects;

/**
 * The cluster-wide identity of a device: {@code driver/pool/device}. Pool names may contain
 * slashes, so {@link #parse} takes the first segment as driver and the last as device.
 */
public record DeviceId(String driver, String pool, String device) implements Comparable<DeviceId> {

  private static final Comparator<DeviceId> ORDER =
      Comparator.comparing(DeviceId::driver)
          .thenComparing(DeviceId::pool)
          .thenComparing(DeviceId::device);

  public DeviceId {
    Objects.requireNonNull(driver, "driver");
    Objects.requireNonNull(pool, "pool");
    Objects.requireNonNull(device, "device");
  }

  /**
   * Parses {@code driver/pool/device}.
   *
   * @throws IllegalArgumentException when there are fewer than three non-empty segments
   */
  public static DeviceId parse(String text) {
    int first = text.indexOf('/');
    int last = text.lastIndexOf('/');
    if (first <= 0 || last <= first + 1 || last == text.length() - 1) {
      throw new IllegalArgumentException(
          "invalid device id \"" + text + "\": expected <driver>/<pool>/<device>");
    }
    return new DeviceId(
        text.substring(0, first), text.substring(first + 1, last), text.substring(last + 1));
  }

  @Override
  public int compareTo(DeviceId o) {
    return ORDER.compare(this, o);
  }

  @Override
  public String toString() {
    return driver + "/" + pool + "/" + device;
  }
}
