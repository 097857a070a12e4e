package io.kdra.claimcontroller.reconciler;

import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.PodBuilder;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.kdra.claimcontroller.k8s.PodBinder;
import jakarta.enterprise.context.ApplicationScoped;
import jakarta.inject.Inject;

/**
 * Binds as the API server's binding subresource would, for the mock server, which has none: sets
 * {@code spec.nodeName}. Replaces the default {@code ApiPodBinder} in Quarkus tests.
 */
@ApplicationScoped
public class MockServerBinder implements PodBinder {

  @Inject KubernetesClient client;

  @Override
  public void bind(Pod pod, String node) {
    client
        .pods()
        .inNamespace(pod.getMetadata().getNamespace())
        .withName(pod.getMetadata().getName())
        .edit(p -> new PodBuilder(p).editSpec().withNodeName(node).endSpec().build());
  }
}
