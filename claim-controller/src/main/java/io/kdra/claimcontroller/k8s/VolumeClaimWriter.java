package io.kdra.claimcontroller.k8s;

import io.fabric8.kubernetes.api.model.PersistentVolume;
import io.fabric8.kubernetes.api.model.PersistentVolumeClaim;
import io.fabric8.kubernetes.api.model.PersistentVolumeClaimBuilder;
import io.fabric8.kubernetes.client.KubernetesClient;

/**
 * VolumeBinding's PreBind writes ({@code bindAPIUpdate} of kube-scheduler): an existing volume's
 * claim reference, so that the PV controller binds the claim waiting for its first consumer to it;
 * the node chosen for a claim to be provisioned, so that the external provisioner creates its
 * volume there.
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

  /**
   * Writes {@code bound}, the informer's copy of a PersistentVolume with its claim reference set,
   * with its {@code resourceVersion} (a 409 Conflict is thrown: the volume changed since the
   * decision, another pod may have taken it).
   *
   * @return false when the volume is gone
   */
  public boolean bindVolume(PersistentVolume bound) {
    return Conflicts.unlessGone(() -> client.persistentVolumes().resource(bound).update());
  }
}
