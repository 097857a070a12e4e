package io.kdra.claimcontroller.scheduling;

import io.fabric8.kubernetes.client.KubernetesClientException;

/**
 * A write the API server refused for what it is (its validation, an admission policy, a quota, a
 * missing permission): retrying the same request cannot help, the pod's owner or an admin must act,
 * so the pod is told with the API server's own message. Conflicts and server errors are not such
 * refusals: they are retried.
 */
final class ApiRefusal extends RuntimeException {

  ApiRefusal(String message) {
    super(message, null, false, false);
  }

  /** Whether {@code e} is such a refusal: a 4xx other than a conflict. */
  static boolean isRefusal(KubernetesClientException e) {
    return e.getCode() >= 400 && e.getCode() < 500 && e.getCode() != 409;
  }

  /** The API server's message, unchanged; the client's when the response had no status. */
  static String message(KubernetesClientException e) {
    return e.getStatus() != null && e.getStatus().getMessage() != null
        ? e.getStatus().getMessage()
        : e.getMessage();
  }
}
