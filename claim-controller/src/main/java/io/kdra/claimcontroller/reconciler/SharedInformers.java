package io.kdra.claimcontroller.reconciler;

import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.resource.v1.ResourceClaim;
import jakarta.inject.Singleton;

/**
 * The pod informer (run by {@link PodReconciler}) and the claim informer (run by {@link
 * ClaimReconciler}), each shared with the other controller: see {@link SharedInformer}.
 */
@Singleton
public class SharedInformers {

  private final SharedInformer<Pod> pods = new SharedInformer<>("pod");
  private final SharedInformer<ResourceClaim> claims = new SharedInformer<>("ResourceClaim");

  SharedInformer<Pod> pods() {
    return pods;
  }

  SharedInformer<ResourceClaim> claims() {
    return claims;
  }
}
