package io.kdra.claimcontroller.k8s;

import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.PodBuilder;
import io.fabric8.kubernetes.api.model.PodCondition;
import io.fabric8.kubernetes.api.model.PodConditionBuilder;
import io.fabric8.kubernetes.api.model.PodResourceClaimStatus;
import io.fabric8.kubernetes.api.model.PodResourceClaimStatusBuilder;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.kdra.claimcontroller.domain.Upstream;
import java.time.Clock;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;

/**
 * Writes to pod status: the generated claims ({@code status.resourceClaimStatuses}) and the {@code
 * PodScheduled} condition. Each write decides on the informer's copy of the pod first and on a
 * fresh read after a conflict, changes only its own entries, and uses the copy's {@code
 * resourceVersion}; nothing is written when nothing changes.
 */
public class PodWriter {

  private final KubernetesClient client;
  private final int conflictRetries;
  private final Clock clock;

  public PodWriter(KubernetesClient client, int conflictRetries, Clock clock) {
    this.client = client;
    this.conflictRetries = conflictRetries;
    this.clock = clock;
  }

  /**
   * Records {@code entryToClaim} (pod claim entry name to generated claim name) in {@code
   * status.resourceClaimStatuses}, replacing entries of the same name and keeping others.
   *
   * @return false when the pod is gone (or replaced: UID differs)
   */
  public boolean recordClaims(Pod pod, Map<String, String> entryToClaim) {
    Pod[] first = {pod};
    return Conflicts.retry(
        conflictRetries,
        () -> {
          Pod now = firstThenFresh(first, pod);
          if (now == null) {
            return false;
          }
          List<PodResourceClaimStatus> statuses =
              new ArrayList<>(
                  now.getStatus() == null || now.getStatus().getResourceClaimStatuses() == null
                      ? List.of()
                      : now.getStatus().getResourceClaimStatuses());
          boolean changed = false;
          for (var e : entryToClaim.entrySet()) {
            PodResourceClaimStatus want =
                new PodResourceClaimStatusBuilder()
                    .withName(e.getKey())
                    .withResourceClaimName(e.getValue())
                    .build();
            int i = indexOf(statuses, e.getKey());
            if (i < 0) {
              statuses.add(want);
              changed = true;
            } else if (!want.equals(statuses.get(i))) {
              statuses.set(i, want);
              changed = true;
            }
          }
          if (changed) {
            return Conflicts.unlessGone(
                () ->
                    client
                        .resource(
                            new PodBuilder(now)
                                .editOrNewStatus()
                                .withResourceClaimStatuses(statuses)
                                .endStatus()
                                .build())
                        .updateStatus());
          }
          return true;
        });
  }

  /**
   * Sets {@code PodScheduled=False} with reason {@code Unschedulable} and {@code message}, as
   * kube-scheduler does; {@code lastTransitionTime} changes only when the status does.
   *
   * @return whether the condition changed (callers emit Events only then, to avoid a flood)
   */
  public boolean markUnschedulable(Pod pod, String message) {
    Pod[] first = {pod};
    return Conflicts.retry(
        conflictRetries,
        () -> {
          Pod now = firstThenFresh(first, pod);
          if (now == null || now.getSpec().getNodeName() != null) {
            return false;
          }
          List<PodCondition> conds =
              new ArrayList<>(
                  now.getStatus() == null || now.getStatus().getConditions() == null
                      ? List.of()
                      : now.getStatus().getConditions());
          PodCondition old =
              conds.stream()
                  .filter(c -> Upstream.POD_SCHEDULED.equals(c.getType()))
                  .findFirst()
                  .orElse(null);
          if (old != null
              && "False".equals(old.getStatus())
              && Upstream.REASON_UNSCHEDULABLE.equals(old.getReason())
              && message.equals(old.getMessage())) {
            return false;
          }
          String since =
              old != null && "False".equals(old.getStatus())
                  ? old.getLastTransitionTime()
                  : Instant.now(clock).toString();
          PodCondition cond =
              new PodConditionBuilder()
                  .withType(Upstream.POD_SCHEDULED)
                  .withStatus("False")
                  .withReason(Upstream.REASON_UNSCHEDULABLE)
                  .withMessage(message)
                  .withLastTransitionTime(since)
                  .withLastProbeTime(null)
                  .build();
          conds.removeIf(c -> Upstream.POD_SCHEDULED.equals(c.getType()));
          conds.add(cond);
          return Conflicts.unlessGone(
              () ->
                  client
                      .resource(
                          new PodBuilder(now)
                              .editOrNewStatus()
                              .withConditions(conds)
                              .endStatus()
                              .build())
                      .updateStatus());
        });
  }

  /**
   * The pod as given (the informer's copy) on the first attempt, then as read: the usual write
   * needs no read, and a stale copy's {@code resourceVersion} makes the write fail with 409 and be
   * decided again on a fresh read.
   */
  private Pod firstThenFresh(Pod[] first, Pod pod) {
    Pod given = first[0];
    first[0] = null;
    return given != null && given.getMetadata().getResourceVersion() != null ? given : fresh(pod);
  }

  private Pod fresh(Pod pod) {
    Pod now =
        client
            .pods()
            .inNamespace(pod.getMetadata().getNamespace())
            .withName(pod.getMetadata().getName())
            .get();
    return now == null || !now.getMetadata().getUid().equals(pod.getMetadata().getUid())
        ? null
        : now;
  }

  private static int indexOf(List<PodResourceClaimStatus> l, String name) {
    for (int i = 0; i < l.size(); i++) {
      if (name.equals(l.get(i).getName())) {
        return i;
      }
    }
    return -1;
  }
}
