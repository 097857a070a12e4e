package io.kdra.devicedriver.discovery;

/**
 * Finds this node's devices. Implementations are called from one thread at a time, repeatedly; each
 * call returns the full current inventory (never a delta).
 */
public interface DiscoveryBackend {

  /** Short name for logs and the {@code kdra.device-driver.backend} setting. */
  String name();

  /**
   * Runs one discovery pass.
   *
   * @throws DiscoveryException when the devices cannot be listed; the message says what failed and
   *     where (file and line, command and field) so an operator can act on it
   */
  Inventory discover() throws DiscoveryException;
}
