package io.kdra.computeclassbridge.catalog;

import java.util.Objects;
import java.util.Optional;

/**
 * A device driver whose attributes catalog selectors are written against.
 *
 * @param name key in the catalog, e.g. {@code kdra-gpu}
 * @param driver driver name devices are published under, e.g. {@code gpu.kdra.io}
 * @param kind the accelerators it serves
 * @param selector CEL template with {@code {driver}} and {@code {values}} placeholders
 * @param topologySelector CEL template with {@code {driver}} and {@code {topology}}; empty when the
 *     driver publishes no topology
 */
public record DriverProfile(
    String name,
    String driver,
    AcceleratorKind kind,
    String selector,
    Optional<String> topologySelector) {

  public DriverProfile {
    Objects.requireNonNull(name);
    Objects.requireNonNull(driver);
    Objects.requireNonNull(kind);
    Objects.requireNonNull(selector);
    Objects.requireNonNull(topologySelector);
  }

  /** The same profile publishing under another driver name. */
  public DriverProfile withDriver(String newDriver) {
    return new DriverProfile(name, newDriver, kind, selector, topologySelector);
  }
}
