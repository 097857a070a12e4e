package io.kdra.devicedriver.prepare;

import io.fabric8.kubernetes.api.model.resource.v1.ResourceClaim;
import java.util.Optional;

/**
 * Reads a ResourceClaim: the one thing prepare needs from the API server. Narrow on purpose, so
 * tests use a map and the driver never depends on a client it does not need. Thread-safe.
 */
public interface ClaimReader {

  /**
   * @return the claim, or empty if it does not exist
   * @throws ClaimReadException when the API cannot be asked (network, RBAC); the message says so
   */
  Optional<ResourceClaim> read(String namespace, String name) throws ClaimReadException;

  /** The API server could not be asked. */
  class ClaimReadException extends Exception {
    public ClaimReadException(String message, Throwable cause) {
      super(message, cause);
    }
  }
}
