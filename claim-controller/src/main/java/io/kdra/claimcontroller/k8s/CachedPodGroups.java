package io.kdra.claimcontroller.k8s;

import io.fabric8.kubernetes.api.model.GenericKubernetesResource;
import io.javaoperatorsdk.operator.processing.event.ResourceID;
import io.javaoperatorsdk.operator.processing.event.source.Cache;
import io.kdra.claimcontroller.domain.PodGroupPolicy;
import java.util.Map;
import java.util.Optional;

/**
 * PodGroups read from the PodGroup informer's cache, as upstream's scheduler reads its lister: no
 * request per scheduling attempt. A group the cache does not have yet is missing until its add
 * event, which brings its members back. Writes ({@link #recordClaims}) go to the API server.
 */
public final class CachedPodGroups implements PodGroups {

  private final Cache<GenericKubernetesResource> cache;
  private final PodGroups writes;

  public CachedPodGroups(Cache<GenericKubernetesResource> cache, PodGroups writes) {
    this.cache = cache;
    this.writes = writes;
  }

  @Override
  public Optional<PodGroupPolicy> get(String namespace, String name) {
    // a group being deleted reads as gone, as the API server's GET is read (ApiPodGroups)
    return cache
        .get(new ResourceID(name, namespace))
        .filter(g -> g.getMetadata().getDeletionTimestamp() == null)
        .map(ApiPodGroups::policyOf);
  }

  @Override
  public void recordClaims(String namespace, String name, Map<String, String> statuses) {
    writes.recordClaims(namespace, name, statuses);
  }

  @Override
  public void recordPreemption(String namespace, String name, String preemptorUid, String node) {
    writes.recordPreemption(namespace, name, preemptorUid, node);
  }
}
