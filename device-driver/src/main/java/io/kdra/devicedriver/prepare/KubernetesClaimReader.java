package io.kdra.devicedriver.prepare;

import io.fabric8.kubernetes.api.model.KubernetesResourceList;
import io.fabric8.kubernetes.api.model.ListOptionsBuilder;
import io.fabric8.kubernetes.api.model.resource.v1.ResourceClaim;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientException;
import java.util.HashMap;
import java.util.Map;
import java.util.Optional;
import java.util.Set;

/**
 * {@link ClaimReader} over the Kubernetes API: a plain GET per claim. No informer: a node sees few
 * claims, each read once per prepare, and a cache could serve a claim older than the allocation the
 * kubelet is acting on. Finding by UID lists every claim in pages (the API server selects claims by
 * name and namespace only); it is needed only after a damaged checkpoint.
 */
public final class KubernetesClaimReader implements ClaimReader {
  /** Claims per page of a list: bounds the memory of one response in a large cluster. */
  static final long PAGE = 500;

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

  @Override
  public Map<String, ResourceClaim> findByUid(Set<String> uids) throws ClaimReadException {
    Map<String, ResourceClaim> found = new HashMap<>();
    String next = null;
    try {
      // the first page without a resourceVersion is a consistent read; the continue token keeps
      // every later page at the same revision, and an expired one fails (410) rather than skips
      do {
        KubernetesResourceList<ResourceClaim> page =
            client
                .resources(ResourceClaim.class)
                .inAnyNamespace()
                .list(new ListOptionsBuilder().withLimit(PAGE).withContinue(next).build());
        for (ResourceClaim c : page.getItems()) {
          String uid = c.getMetadata() == null ? null : c.getMetadata().getUid();
          if (uid != null && uids.contains(uid)) {
            found.put(uid, c);
          }
        }
        next = page.getMetadata() == null ? null : page.getMetadata().getContinue();
      } while (next != null && !next.isEmpty());
    } catch (KubernetesClientException e) {
      throw new ClaimReadException(
          "listing resourceclaims failed: HTTP " + e.getCode() + " " + e.getMessage(), e);
    }
    return found;
  }
}
