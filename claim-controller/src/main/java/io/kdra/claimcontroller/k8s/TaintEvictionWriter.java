package io.kdra.claimcontroller.k8s;

import io.fabric8.kubernetes.api.model.Condition;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.PodBuilder;
import io.fabric8.kubernetes.api.model.PodCondition;
import io.fabric8.kubernetes.api.model.PodConditionBuilder;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientException;
import io.kdra.claimcontroller.domain.TaintRuleStatus;
import io.kdra.core.taint.DeviceTaintRule;
import io.kdra.core.taint.DeviceTaintRuleStatus;
import java.time.Clock;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;

/**
 * The writes of device-taint eviction, as upstream's controller makes them: a pod gets the {@code
 * DisruptionTarget} condition and is deleted (only the pod of that UID, unchanged since it was
 * read); a DeviceTaintRule gets its {@code EvictionInProgress} condition.
 */
public class TaintEvictionWriter {

  static final String REASON = "DeletionByDeviceTaintManager";
  static final String MESSAGE = "Device Taint manager: deleting due to NoExecute taint";

  private final KubernetesClient client;
  private final Clock clock;

  public TaintEvictionWriter(KubernetesClient client, Clock clock) {
    this.client = client;
    this.clock = clock;
  }

  /**
   * Marks and deletes pod {@code namespace/name} if it still has {@code uid} and is not being
   * deleted. Returns whether this call deleted it; a conflict (the pod changed under it) throws, so
   * the caller tries again on its next pass.
   */
  public boolean evict(String namespace, String name, String uid) {
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
            .withReason(REASON)
            .withMessage(MESSAGE)
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

  /** Replaces the rule's {@code EvictionInProgress} condition (others are kept). */
  public void writeCondition(DeviceTaintRule rule, Condition condition) {
    List<Condition> conditions =
        new ArrayList<>(
            rule.getStatus() == null || rule.getStatus().getConditions() == null
                ? List.of()
                : rule.getStatus().getConditions());
    conditions.removeIf(c -> TaintRuleStatus.TYPE.equals(c.getType()));
    conditions.add(condition);
    DeviceTaintRule updated = new DeviceTaintRule(rule.getMetadata(), rule.getSpec());
    updated.setStatus(new DeviceTaintRuleStatus(conditions));
    client.resources(DeviceTaintRule.class).resource(updated).updateStatus();
  }
}
