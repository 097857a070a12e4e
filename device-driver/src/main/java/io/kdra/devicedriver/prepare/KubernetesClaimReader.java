package io.kdra.devicedriver.prepare;

import io.fabric8.kubernetes.api.model.resource.v1.ResourceClaim;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientException;
import java.util.Optional;

/**
 * {@link ClaimReader} over the Kubernetes API: a plain GET per claim. No informer: a node sees few
 * claims, each read once per prepare, and a cache could serve a claim older than the allocation the
 * kubelet is acting on.
 */
public final class KubernetesClaimReader implements ClaimReader {
  private final KubernetesClient client;

  public KubernetesClaimReader(KubernetesClient client) {
    this.client = client;
  }

  @Override
  public Optional<ResourceClaim> read(String namespace, String name) throws ClaimReadException {
    try {
      return Optional.ofNullable(
          client.resources(ResourceClaim.class).inNamespace(namespace).withName(name).get());
    } catch (KubernetesClientException e) {
      throw new ClaimReadException(
          "reading resourceclaim "
              + namespace
              + "/"
              + name
              + " failed: HTTP "
              + e.getCode()
              + " "
              + e.getMessage(),
          e);
    }
  }
}
