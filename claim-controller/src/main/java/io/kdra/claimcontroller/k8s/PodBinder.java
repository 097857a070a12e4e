package io.kdra.claimcontroller.k8s;

import io.fabric8.kubernetes.api.model.Pod;

/** Binds a pod to a node, as a scheduler does. */
public interface PodBinder {

  /**
   * Binds {@code pod} to {@code node}. Idempotent: binding a pod already bound to {@code node}
   * succeeds.
   *
   * @throws io.fabric8.kubernetes.client.KubernetesClientException when the API server refuses (for
   *     example the pod is bound elsewhere or gone)
   */
  void bind(Pod pod, String node);
}
