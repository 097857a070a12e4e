package io.kdra.slicepublisher.grpc;

/**
 * Tells which node a driver's ServiceAccount token belongs to. Implementations may block (they ask
 * the API server); callers run them off the event loop. Thread-safe.
 */
public interface TokenReviewer {

  /**
   * The node of the pod the token is bound to.
   *
   * @param token the bearer token, never null
   * @return the node name; null means "any node" (authentication is off)
   * @throws Rejected when the token is not valid or is not bound to a pod on a node
   */
  String nodeOf(String token) throws Rejected;

  /** Whether a caller without a token is refused (true unless authentication is off). */
  default boolean requiresToken() {
    return true;
  }

  /** A token that does not prove a node; the message says why, for the driver's log. */
  final class Rejected extends Exception {
    public Rejected(String message) {
      super(message);
    }
  }

  /** For local runs: everyone, with a token or without, may report every node. */
  TokenReviewer ALLOW_ALL =
      new TokenReviewer() {
        @Override
        public String nodeOf(String token) {
          return null;
        }

        @Override
        public boolean requiresToken() {
          return false;
        }
      };
}
