package io.kdra.computeclassbridge;

import io.fabric8.kubernetes.client.KubernetesClientException;
import io.fabric8.kubernetes.client.dsl.Resource;
import java.util.function.UnaryOperator;

/**
 * How a test writes an object that the reconciler writes too (its status, finalizers, a template it
 * reconciles back): as any client must, by reading it again and applying the change again when the
 * API server answers 409 Conflict. fabric8's {@code edit} sends the resourceVersion it read, so a
 * reconciler's write between that read and the patch makes it fail; the plain {@code edit} flakes
 * on a loaded machine. fabric8 has no retry-on-conflict of its own (client-go has {@code
 * retry.RetryOnConflict}), hence this loop.
 */
public final class RetryOnConflict {

  /** Enough for a reconciler that writes a few times per change, never forever. */
  static final int ATTEMPTS = 10;

  private RetryOnConflict() {}

  /** {@code resource.edit(change)}, read and applied again on each conflict. */
  public static <T> T edit(Resource<T> resource, UnaryOperator<T> change) {
    for (int attempt = 1; ; attempt++) {
      try {
        return resource.edit(change);
      } catch (KubernetesClientException e) {
        if (e.getCode() != 409 || attempt == ATTEMPTS) {
          throw e;
        }
      }
    }
  }
}
