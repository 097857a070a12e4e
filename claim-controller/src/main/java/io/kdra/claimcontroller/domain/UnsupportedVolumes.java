package io.kdra.claimcontroller.domain;

import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.Volume;
import java.util.List;
import java.util.Optional;

/**
 * Volumes whose placement rules this scheduler does not model: a {@code persistentVolumeClaim} or
 * {@code ephemeral} volume may be bound to a PersistentVolume with node affinity (a zone, a local
 * disk) or wait for its first consumer (kube-scheduler's VolumeBinding, VolumeZone and
 * NodeVolumeLimits plugins). Rather than bind such a pod where its volume cannot follow, the pod is
 * refused with the field named. Pure.
 */
public final class UnsupportedVolumes {

  private UnsupportedVolumes() {}

  /** Why the pod is refused, naming the first such volume's field; empty: none. */
  public static Optional<String> refusal(Pod pod) {
    List<Volume> volumes = pod.getSpec() == null ? null : pod.getSpec().getVolumes();
    if (volumes == null) {
      return Optional.empty();
    }
    for (int i = 0; i < volumes.size(); i++) {
      Volume v = volumes.get(i);
      String field =
          v.getPersistentVolumeClaim() != null
              ? "persistentVolumeClaim"
              : v.getEphemeral() != null ? "ephemeral" : null;
      if (field != null) {
        return Optional.of(
            "spec.volumes["
                + i
                + "]."
                + field
                + ": volume topology is not checked by kdra's scheduler; schedule this pod with"
                + " kube-scheduler (leave spec.schedulerName unset)");
      }
    }
    return Optional.empty();
  }
}
