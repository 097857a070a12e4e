package io.kdra.computeclassbridge.mapping;

import java.util.Objects;

/**
 * Naming choices of the mapping, from configuration.
 *
 * @param deviceClassSuffix appended to the accelerator type to name its DeviceClass, e.g. {@code
 *     .computeclass.kdra.io} gives {@code nvidia-l4.computeclass.kdra.io}
 * @param requestName name of the single request in every generated template; containers that list
 *     claim requests refer to it
 */
public record MapperSettings(String deviceClassSuffix, String requestName) {

  /** The defaults documented in docs/user/computeclass.md. */
  public static final MapperSettings DEFAULTS =
      new MapperSettings(".computeclass.kdra.io", "accelerator");

  public MapperSettings {
    Objects.requireNonNull(deviceClassSuffix);
    Objects.requireNonNull(requestName);
  }

  /** The DeviceClass name for an accelerator type. */
  public String deviceClassName(String acceleratorType) {
    return acceleratorType + deviceClassSuffix;
  }
}
