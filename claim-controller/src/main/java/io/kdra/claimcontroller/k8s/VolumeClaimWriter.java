package io.kdra.claimcontroller.k8s;

import io.fabric8.kubernetes.api.model.PersistentVolumeClaim;
import io.fabric8.kubernetes.api.model.PersistentVolumeClaimBuilder;
import io.fabric8.kubernetes.client.KubernetesClient;

/**
 * Writes to PersistentVolumeClaims: the node chosen for a claim that waits for its first consumer,
 * as kube-scheduler's VolumeBinding PreBind does ({@code bindAPIUpdate}), so that the external
 * provisioner creates its volume there.
 */
public class VolumeClaimWriter {

  private final KubernetesClient client;

  public VolumeClaimWriter(KubernetesClient client) {
    this.client = client;
  }

  /**
   * Sets {@code annotation} to {@code node} on the informer's copy {@code pvc}, with its {@code
   * resourceVersion} (a 409 Conflict is thrown: the claim changed since the decision). Nothing is
   * written when it says so already.
   *
   * @return false when the claim is gone
   */
  public boolean annotate(PersistentVolumeClaim pvc, String annotation, String node) {
    var ann = pvc.getMetadata().getAnnotations();
    if (ann != null && node.equals(ann.get(annotation))) {
      return true;
    }
    PersistentVolumeClaim marked =
        new PersistentVolumeClaimBuilder(pvc)
            .editMetadata()
            .addToAnnotations(annotation, node)
            .endMetadata()
            .build();
    return Conflicts.unlessGone(
        () ->
            client
                .persistentVolumeClaims()
                .inNamespace(pvc.getMetadata().getNamespace())
                .resource(marked)
                .update());
  }
}
