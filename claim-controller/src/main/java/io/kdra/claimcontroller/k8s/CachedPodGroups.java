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
 * Whether a group is gone ({@link #gone}) is answered from the cache when it has the group, and
 * asked of the API server otherwise: the answer drops a claim's reservation, never on a guess.
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
  public boolean gone(String namespace, String name, String uid) {
    // a group the cache has (being deleted too) is there; one it lacks, or has under another
    // UID, may be one it has not seen yet
    boolean cached =
        cache
            .get(new ResourceID(name, namespace))
            .filter(g -> uid.equals(g.getMetadata().getUid()))
            .isPresent();
    return !cached && writes.gone(namespace, name, uid);
  }

  @Override
  public void recordClaims(String namespace, String name, Map<String, String> statuses) {
    writes.recordClaims(namespace, name, statuses);
  }

  @Override
  public void recordPlacedAgain(String namespace, String name, String preemptorUid, int members) {
    writes.recordPlacedAgain(namespace, name, preemptorUid, members);
  }

  @Override
  public void recordPreemption(String namespace, String name, String preemptorUid, String node) {
    writes.recordPreemption(namespace, name, preemptorUid, node);
  }
}
