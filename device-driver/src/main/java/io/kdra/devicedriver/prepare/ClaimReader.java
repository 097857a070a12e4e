package io.kdra.devicedriver.prepare;

import io.fabric8.kubernetes.api.model.resource.v1.ResourceClaim;
import java.util.Map;
import java.util.Optional;
import java.util.Set;

/**
 * Reads ResourceClaims: the one thing prepare needs from the API server (and the stale-claim
 * clean-up, which also finds claims by UID). Narrow on purpose, so tests use a map and the driver
 * never depends on a client it does not need. Thread-safe.
 */
public interface ClaimReader {

  /**
   * @return the claim, or empty if it does not exist
   * @throws ClaimReadException when the API cannot be asked (network, RBAC); the message says so
   */
  Optional<ResourceClaim> read(String namespace, String name) throws ClaimReadException;

  /**
   * Finds claims by UID alone, for checkpoint entries rebuilt from a CDI spec (which holds the UID
   * but not the name), with one consistent list of every claim: a UID absent from the answer
   * belongs to no claim in the cluster. Never answers from a partial list.
   *
   * @return the claims found, by UID
   * @throws ClaimReadException when the API cannot be asked, or the list was not read whole; by
   *     default (a reader by name alone), always: it proves no claim gone
   */
  default Map<String, ResourceClaim> findByUid(Set<String> uids) throws ClaimReadException {
    throw new ClaimReadException("this reader cannot find claims by UID", null);
  }

  /** The API server could not be asked. */
  class ClaimReadException extends Exception {
    public ClaimReadException(String message, Throwable cause) {
      super(message, cause);
    }
  }
}
