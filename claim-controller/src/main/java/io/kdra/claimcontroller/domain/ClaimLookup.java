package io.kdra.claimcontroller.domain;

import io.fabric8.kubernetes.api.model.resource.v1.ResourceClaim;
import io.fabric8.kubernetes.api.model.resource.v1.ResourceClaimTemplate;
import java.util.List;
import java.util.Optional;

/**
 * Read port for what {@link PodClaimResolver} needs. Implementations answer from informer caches
 * plus the controller's own recent writes; tests use maps.
 */
public interface ClaimLookup {

  /** The claim {@code namespace/name}, if known. */
  Optional<ResourceClaim> claim(String namespace, String name);

  /** Claims whose controlling owner is the pod with this UID. */
  List<ResourceClaim> ownedBy(String namespace, String podUid);

  /** The template {@code namespace/name}, if known. */
  Optional<ResourceClaimTemplate> template(String namespace, String name);
}
