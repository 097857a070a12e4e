package io.kdra.claimcontroller.domain;

import io.fabric8.kubernetes.api.model.Pod;
import java.util.Optional;

/**
 * Read port for the cleanup rules. An empty answer must be definitive: implementations that read an
 * informer cache ask the API server before saying a pod does not exist, because removing a
 * reservation of a pod the cache has not seen yet would let its devices be taken while it starts.
 */
@FunctionalInterface
public interface PodSource {

  /** The pod {@code namespace/name}, or empty when the API server does not have it. */
  Optional<Pod> pod(String namespace, String name);

  /**
   * Whether the PodGroup {@code namespace/name} with {@code uid} is gone or replaced (another UID),
   * as the API server says. By default never: a PodGroup's reservations and claims are then kept.
   */
  default boolean podGroupGone(String namespace, String name, String uid) {
    return false;
  }
}
