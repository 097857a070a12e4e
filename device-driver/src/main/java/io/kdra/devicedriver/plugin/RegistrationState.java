package io.kdra.devicedriver.plugin;

/**
 * What the kubelet last said about our registration. Thread-safe. Readiness requires {@link
 * #accepted()}; a refusal keeps its message so the readiness check can show it.
 */
public final class RegistrationState {
  private boolean notified;
  private boolean accepted;
  private String error = "";

  synchronized void update(boolean registered, String message) {
    notified = true;
    accepted = registered;
    error = message == null ? "" : message;
  }

  synchronized void reset() {
    notified = false;
    accepted = false;
    error = "";
  }

  /** Whether the kubelet has accepted the plugin (and not refused it since). */
  public synchronized boolean accepted() {
    return accepted;
  }

  /** A short description for health checks and logs. */
  public synchronized String describe() {
    if (!notified) {
      return "waiting for the kubelet";
    }
    return accepted ? "accepted" : "refused: " + error;
  }
}
