package io.kdra.slicepublisher.domain;

import io.fabric8.kubernetes.api.model.resource.v1.Device;
import java.util.Objects;

/**
 * One reported device: its API form (attributes, capacity, counters; no taints) plus its health.
 * The {@link Device} must not be modified once wrapped; the planner copies before it adds to it.
 *
 * @param device the device as it goes into a slice, minus taints and node-label attributes
 * @param healthy false when the driver reported it UNHEALTHY
 * @param healthMessage why it is unhealthy; empty when healthy or unknown
 */
public record InventoryDevice(Device device, boolean healthy, String healthMessage) {

  public InventoryDevice {
    Objects.requireNonNull(device, "device");
    healthMessage = healthMessage == null ? "" : healthMessage;
  }

  public String name() {
    return device.getName();
  }
}
