package io.kdra.claimcontroller.scheduling;

import io.fabric8.kubernetes.api.model.PersistentVolumeClaim;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.client.KubernetesClientException;
import io.kdra.claimcontroller.domain.Pods;
import io.kdra.claimcontroller.domain.VolumeFilters;
import io.kdra.claimcontroller.k8s.VolumeClaimWriter;
import java.util.List;
import java.util.Optional;
import java.util.function.BooleanSupplier;
import java.util.stream.Collectors;

/**
 * kube-scheduler's VolumeBinding PreBind for claims that wait for their first consumer: each gets
 * the chosen node in its {@value VolumeFilters#ANN_SELECTED_NODE} annotation, for the external
 * provisioner to create the volume there, and the pod is bound only once they are bound. Upstream
 * holds the binding cycle until then (up to 10 minutes); here the attempt ends {@link
 * Outcome.Waiting}, and the claim's event brings the pod back: the annotation then allows only that
 * node, and a claim bound by then passes on to the ordinary checks of its volume.
 */
final class VolumePreBind {

  private final ClusterView view;
  private final VolumeClaimWriter writer;
  private final BooleanSupplier mayWrite;

  VolumePreBind(ClusterView view, VolumeClaimWriter writer, BooleanSupplier mayWrite) {
    this.view = view;
    this.writer = writer;
    this.mayWrite = mayWrite;
  }

  /** Empty when every claim of the pod's volumes is bound; else why the pod is not bound yet. */
  Optional<Outcome> waitFor(Pod pod, String node) {
    if (!VolumeFilters.concerns(pod)) {
      return Optional.empty();
    }
    List<PersistentVolumeClaim> waiting =
        VolumeFilters.prefilter(pod, view.volumes(), List::of).filters().waitingForFirstConsumer();
    if (waiting.isEmpty()) {
      return Optional.empty();
    }
    for (PersistentVolumeClaim pvc : waiting) {
      if (!mayWrite.getAsBoolean()) {
        return Optional.of(PodScheduling.FENCED);
      }
      try {
        if (!writer.annotate(pvc, VolumeFilters.ANN_SELECTED_NODE, node)) {
          return Optional.of(
              new Outcome.Retry("PersistentVolumeClaim " + key(pvc) + " was deleted"));
        }
      } catch (KubernetesClientException e) {
        if (e.getCode() != 409) {
          throw e;
        }
        return Optional.of(
            new Outcome.Retry("PersistentVolumeClaim " + key(pvc) + " changed meanwhile"));
      }
    }
    return Optional.of(
        new Outcome.Waiting(
            "pod "
                + Pods.key(pod)
                + " waits for PersistentVolumeClaim(s) "
                + waiting.stream().map(VolumePreBind::key).collect(Collectors.joining(", "))
                + " to be provisioned on node "
                + node
                + " and bound"));
  }

  private static String key(PersistentVolumeClaim pvc) {
    return pvc.getMetadata().getNamespace() + "/" + pvc.getMetadata().getName();
  }
}
