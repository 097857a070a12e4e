package io.kdra.claimcontroller.reconciler;

import io.fabric8.kubernetes.api.model.GenericKubernetesResource;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.resource.v1.ResourceClaim;
import io.javaoperatorsdk.operator.processing.event.source.Cache;
import jakarta.inject.Singleton;

/**
 * The pod informer (run by {@link PodReconciler}) and the claim informer (run by {@link
 * ClaimReconciler}), each shared with the other controller: see {@link SharedInformer}; and the
 * PodGroup informer's cache (run by {@link PodReconciler} where the API is served), which the claim
 * cleanup reads.
 */
@Singleton
public class SharedInformers {

  private final SharedInformer<Pod> pods = new SharedInformer<>("pod");
  private final SharedInformer<ResourceClaim> claims = new SharedInformer<>("ResourceClaim");

  private volatile Cache<GenericKubernetesResource> podGroups;

  SharedInformer<Pod> pods() {
    return pods;
  }

  SharedInformer<ResourceClaim> claims() {
    return claims;
  }

  /** The PodGroup informer's cache; null where none runs (the API not served) or not yet made. */
  Cache<GenericKubernetesResource> podGroups() {
    return podGroups;
  }

  /** Called by {@link PodReconciler} once it made the PodGroup informer. */
  void offerPodGroups(Cache<GenericKubernetesResource> cache) {
    this.podGroups = cache;
  }
}
