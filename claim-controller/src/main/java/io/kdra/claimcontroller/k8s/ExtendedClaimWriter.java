package io.kdra.claimcontroller.k8s;

import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.PodBuilder;
import io.fabric8.kubernetes.api.model.PodExtendedResourceClaimStatus;
import io.fabric8.kubernetes.api.model.resource.v1.ResourceClaim;
import io.fabric8.kubernetes.api.model.resource.v1.ResourceClaimBuilder;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientException;
import java.util.Map;

/**
 * The writes for a pod's special claim for extended resources served by DRA (KEP-5004), as
 * kube-scheduler makes them: the claim's creation, {@code pod.status.extendedResourceClaimStatus},
 * and the claim's deletion (finalizer first) when an attempt is undone or a claim from an earlier
 * attempt is found. The reservation itself goes through {@link ClaimWriter#reserve}, as for any
 * claim.
 */
public class ExtendedClaimWriter {

  private final ClaimWriter claims;
  private final KubernetesClient client;
  private final int conflictRetries;

  ExtendedClaimWriter(ClaimWriter claims, KubernetesClient client, int conflictRetries) {
    this.claims = claims;
    this.client = client;
    this.conflictRetries = conflictRetries;
  }

  /** The writer that shares {@code claims}'s client and settings. */
  public static ExtendedClaimWriter of(ClaimWriter claims) {
    return new ExtendedClaimWriter(claims, claims.client(), claims.conflictRetries());
  }

  /**
   * Creates the special claim from its in-memory form: without the placeholder name, UID and any
   * status, as upstream's {@code createExtendedResourceClaimInAPI}; returns it as stored.
   */
  public ResourceClaim create(ResourceClaim inMemory, Map<String, String> annotations) {
    ResourceClaim desired =
        new ResourceClaimBuilder(inMemory)
            .editMetadata()
            .withName(null)
            .withUid(null)
            .endMetadata()
            .withStatus(null)
            .build();
    return claims.create(desired, annotations);
  }

  /**
   * Records {@code status} as {@code pod.status.extendedResourceClaimStatus} on the pod as the API
   * server has it now (same UID), keeping the rest of its status.
   *
   * @return false when the pod is gone or replaced
   */
  public boolean recordStatus(Pod pod, PodExtendedResourceClaimStatus status) {
    return Conflicts.retry(
        conflictRetries,
        () -> {
          Pod now =
              client
                  .pods()
                  .inNamespace(pod.getMetadata().getNamespace())
                  .withName(pod.getMetadata().getName())
                  .get();
          if (now == null || !pod.getMetadata().getUid().equals(now.getMetadata().getUid())) {
            return false;
          }
          if (now.getStatus() != null
              && status.equals(now.getStatus().getExtendedResourceClaimStatus())) {
            return true;
          }
          return Conflicts.unlessGone(
              () ->
                  client
                      .resource(
                          new PodBuilder(now)
                              .editOrNewStatus()
                              .withExtendedResourceClaimStatus(status)
                              .endStatus()
                              .build())
                      .updateStatus());
        });
  }

  /**
   * Deletes claim {@code namespace/name}, removing upstream's finalizer first (upstream's {@code
   * deleteClaim}); a claim already gone is fine.
   */
  public void delete(String namespace, String name) {
    Conflicts.retry(
        conflictRetries,
        () -> {
          ResourceClaim current = claims.get(namespace, name);
          if (current == null) {
            return null;
          }
          try {
            // a JSON patch with the read resourceVersion, as every finalizer write here
            claims.removeFinalizer(current);
          } catch (KubernetesClientException e) {
            if (Conflicts.isNotFound(e)) {
              return null;
            }
            throw e;
          }
          Conflicts.unlessGone(
              () ->
                  client
                      .resources(ResourceClaim.class)
                      .inNamespace(namespace)
                      .withName(name)
                      .delete());
          return null;
        });
  }
}
