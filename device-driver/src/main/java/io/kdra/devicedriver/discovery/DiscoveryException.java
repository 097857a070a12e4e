package io.kdra.devicedriver.discovery;

/** Discovery failed; the message names the source (file, command, line, field) and the problem. */
public class DiscoveryException extends Exception {
  public DiscoveryException(String message) {
    super(message);
  }

  public DiscoveryException(String message, Throwable cause) {
    super(message, cause);
  }
}
