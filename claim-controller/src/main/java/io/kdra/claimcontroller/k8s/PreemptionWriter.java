package io.kdra.claimcontroller.k8s;

import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.PodBuilder;
import io.fabric8.kubernetes.client.KubernetesClient;
import java.time.Clock;
import java.util.Objects;

/**
 * The writes of preemption, as kube-scheduler makes them: each victim gets {@code DisruptionTarget}
 * (reason {@code PreemptionByScheduler}) and is deleted with its own grace period; the preemptor's
 * {@code status.nominatedNodeName} is set, or cleared when it gives up.
 */
public class PreemptionWriter {

  /** Upstream's {@code v1.PodReasonPreemptionByScheduler}. */
  public static final String REASON = "PreemptionByScheduler";

  private final KubernetesClient client;
  private final Clock clock;
  private final int conflictRetries;

  public PreemptionWriter(KubernetesClient client, Clock clock, int conflictRetries) {
    this.client = client;
    this.clock = clock;
    this.conflictRetries = conflictRetries;
  }

  /**
   * Marks and deletes {@code victim} (the pod of its UID, if not already being deleted); {@code
   * scheduler} words the condition's message as upstream's. Returns whether this call deleted it.
   */
  public boolean evict(Pod victim, String scheduler) {
    return PodDisruption.markAndDelete(
        client,
        clock,
        victim.getMetadata().getNamespace(),
        victim.getMetadata().getName(),
        victim.getMetadata().getUid(),
        REASON,
        scheduler + ": preempting to accommodate a higher priority pod");
  }

  /** Sets the pod's {@code status.nominatedNodeName} to {@code node} (null clears it). */
  public void nominate(Pod pod, String node) {
    Conflicts.retry(
        conflictRetries,
        () -> {
          Pod now =
              client
                  .pods()
                  .inNamespace(pod.getMetadata().getNamespace())
                  .withName(pod.getMetadata().getName())
                  .get();
          if (now == null
              || !now.getMetadata().getUid().equals(pod.getMetadata().getUid())
              || now.getSpec().getNodeName() != null
              || Objects.equals(
                  node, now.getStatus() == null ? null : now.getStatus().getNominatedNodeName())) {
            return false;
          }
          return Conflicts.unlessGone(
              () ->
                  client
                      .resource(
                          new PodBuilder(now)
                              .editOrNewStatus()
                              .withNominatedNodeName(node)
                              .endStatus()
                              .build())
                      .updateStatus());
        });
  }
}
