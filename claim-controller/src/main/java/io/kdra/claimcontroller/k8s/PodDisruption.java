package io.kdra.claimcontroller.k8s;

import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.PodBuilder;
import io.fabric8.kubernetes.api.model.PodCondition;
import io.fabric8.kubernetes.api.model.PodConditionBuilder;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientException;
import java.time.Clock;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;

/**
 * How upstream's controllers and scheduler disrupt a pod: the {@code DisruptionTarget} condition
 * with their reason, then a delete of that pod (its UID, unchanged since it was read) with its own
 * grace period.
 */
final class PodDisruption {

  private PodDisruption() {}

  /**
   * Marks and deletes pod {@code namespace/name} if it still has {@code uid} and is not being
   * deleted. Returns whether this call deleted it; a conflict (the pod changed under it) throws.
   */
  static boolean markAndDelete(
      KubernetesClient client,
      Clock clock,
      String namespace,
      String name,
      String uid,
      String reason,
      String message) {
    Pod pod = client.pods().inNamespace(namespace).withName(name).get();
    if (pod == null
        || !uid.equals(pod.getMetadata().getUid())
        || pod.getMetadata().getDeletionTimestamp() != null) {
      return false;
    }
    List<PodCondition> conditions =
        new ArrayList<>(
            pod.getStatus() == null || pod.getStatus().getConditions() == null
                ? List.of()
                : pod.getStatus().getConditions());
    conditions.removeIf(c -> "DisruptionTarget".equals(c.getType()));
    conditions.add(
        new PodConditionBuilder()
            .withType("DisruptionTarget")
            .withStatus("True")
            .withReason(reason)
            .withMessage(message)
            .withLastTransitionTime(Instant.now(clock).toString())
            .build());
    Pod marked =
        client
            .resource(
                new PodBuilder(pod)
                    .editOrNewStatus()
                    .withConditions(conditions)
                    .endStatus()
                    .build())
            .updateStatus();
    try {
      client.resource(marked).lockResourceVersion().delete();
    } catch (KubernetesClientException e) {
      if (e.getCode() == 404) {
        return false;
      }
      throw e;
    }
    return true;
  }
}
