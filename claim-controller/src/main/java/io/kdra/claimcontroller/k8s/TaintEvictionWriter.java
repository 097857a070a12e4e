package io.kdra.claimcontroller.k8s;

import io.fabric8.kubernetes.api.model.Condition;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.kdra.claimcontroller.domain.TaintRuleStatus;
import io.kdra.core.taint.DeviceTaintRule;
import io.kdra.core.taint.DeviceTaintRuleStatus;
import java.time.Clock;
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
    return PodDisruption.markAndDelete(client, clock, namespace, name, uid, REASON, MESSAGE);
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
