package io.kdra.claimcontroller.k8s;

import io.fabric8.kubernetes.client.KubernetesClientException;
import java.util.function.Supplier;

/** Retrying a read-decide-write cycle when the API server answers 409 Conflict. */
final class Conflicts {

  private Conflicts() {}

  /**
   * Runs {@code attempt} (which must re-read what it writes) up to {@code retries + 1} times while
   * it fails with a conflict; the last conflict is rethrown for the reconciler's own retry.
   */
  static <T> T retry(int retries, Supplier<T> attempt) {
    KubernetesClientException last = null;
    for (int i = 0; i <= retries; i++) {
      try {
        return attempt.get();
      } catch (KubernetesClientException e) {
        if (e.getCode() != 409) {
          throw e;
        }
        last = e;
      }
    }
    throw last;
  }

  /**
   * Runs {@code write}; false when the object was deleted since it was read (404), which is a
   * routine race with its owner, not an error.
   */
  static boolean unlessGone(Runnable write) {
    try {
      write.run();
      return true;
    } catch (KubernetesClientException e) {
      if (!isNotFound(e)) {
        throw e;
      }
      return false;
    }
  }

  static boolean isNotFound(KubernetesClientException e) {
    return e.getCode() == 404;
  }
}
