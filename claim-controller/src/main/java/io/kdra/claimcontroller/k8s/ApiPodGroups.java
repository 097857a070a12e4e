package io.kdra.claimcontroller.k8s;

import io.fabric8.kubernetes.api.model.GenericKubernetesResource;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientException;
import io.kdra.claimcontroller.domain.PodGroupPolicy;
import java.util.Map;
import java.util.Optional;

/**
 * PodGroups read from the API server, one GET per gang attempt: fabric8 7.5 has no model for them
 * (generic resources), and no informer is started for an API the server may not serve (it is off by
 * default in 1.37). Only pods that name a group ({@code spec.schedulingGroup}, which the API server
 * keeps only with the {@code GenericWorkload} gate on) cause a read.
 */
public final class ApiPodGroups implements PodGroups {

  private final KubernetesClient client;

  public ApiPodGroups(KubernetesClient client) {
    this.client = client;
  }

  @Override
  public Optional<PodGroupPolicy> get(String namespace, String name) {
    GenericKubernetesResource g;
    try {
      g =
          client
              .genericKubernetesResources(PodGroupPolicy.API_VERSION, "PodGroup")
              .inNamespace(namespace)
              .withName(name)
              .get();
    } catch (KubernetesClientException e) {
      if (e.getCode() == 404) {
        return Optional.empty(); // the API is not served
      }
      throw e;
    }
    if (g == null || g.getMetadata().getDeletionTimestamp() != null) {
      return Optional.empty();
    }
    @SuppressWarnings("unchecked")
    Map<String, Object> spec = (Map<String, Object>) g.getAdditionalProperties().get("spec");
    return Optional.of(PodGroupPolicy.parse(name, spec));
  }
}
