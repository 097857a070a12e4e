package io.kdra.devicedriver.plugin;

import java.util.List;
import java.util.Objects;

/**
 * The outcome of preparing one claim: devices, or an error message. An error is never empty, so the
 * kubelet (which treats a non-empty {@code error} as failure) always sees failures.
 */
public record PrepareResult(List<PreparedDevice> devices, String error) {
  public PrepareResult {
    devices = List.copyOf(devices);
    error = error == null ? "" : error;
  }

  /** A prepared claim. */
  public static PrepareResult ok(List<PreparedDevice> devices) {
    return new PrepareResult(devices, "");
  }

  /** A failed claim; the message should name the field or step that failed. */
  public static PrepareResult failed(String error) {
    Objects.requireNonNull(error);
    return new PrepareResult(List.of(), error.isEmpty() ? "unknown error" : error);
  }

  public boolean failed() {
    return !error.isEmpty();
  }
}
