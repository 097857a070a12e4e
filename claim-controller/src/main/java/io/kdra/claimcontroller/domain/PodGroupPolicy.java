package io.kdra.claimcontroller.domain;

import io.fabric8.kubernetes.api.model.Pod;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;

/**
 * What the scheduler reads of a {@code scheduling.k8s.io/v1beta1} PodGroup (Kubernetes 1.37,
 * feature gate {@code GenericWorkload}, beta and off by default), and how a pod names its group
 * ({@code spec.schedulingGroup.podGroupName}). Pure: parsed from the object's JSON map, since
 * fabric8 7.5 has no model for these kinds.
 *
 * @param name the PodGroup's name
 * @param minCount {@code spec.schedulingPolicy.gang.minCount}; 0 for the basic policy (each pod on
 *     its own, as upstream's gangscheduling plugin treats a group without a gang policy)
 * @param topologyKey the first {@code spec.schedulingConstraints.topology[].key}, or null:
 *     upstream's topologyaware plugin reads only the first (the API allows one); honoured only with
 *     {@code TopologyAwareWorkloadScheduling} on, see {@link #scheduledWith}
 * @param claims the group's own claims ({@code spec.resourceClaims}) and their status
 * @param disruptedWhole whether preemption evicts its placed pods all together or none of them:
 *     {@code spec.disruptionMode.all}; with {@code single} each pod on its own (upstream's
 *     DefaultPreemption both); without a mode, ours: a gang is never left partially evicted
 *     (upstream evicts its pods one by one), a group of the basic policy is
 * @param priority {@code spec.priority}, set by admission from {@code priorityClassName}; none
 *     counts as 0 (upstream's {@code PodGroupPriority}). Preemption weighs a member as a victim by
 *     it, as upstream's DefaultPreemption does with the gate on ({@code GetPodPriority})
 * @param preemptor the UID of the pod for which preemption evicted every placed member of the
 *     group, as its {@code DisruptionTarget} condition records it ({@link GroupPreemption}); null
 *     when none
 */
public record PodGroupPolicy(
    String name,
    int minCount,
    String topologyKey,
    PodGroupClaims claims,
    boolean disruptedWhole,
    int priority,
    String preemptor) {

  /** A group no preemption has emptied. */
  public PodGroupPolicy(
      String name,
      int minCount,
      String topologyKey,
      PodGroupClaims claims,
      boolean disruptedWhole,
      int priority) {
    this(name, minCount, topologyKey, claims, disruptedWhole, priority, null);
  }

  /** A group of priority 0 (none set). */
  public PodGroupPolicy(
      String name,
      int minCount,
      String topologyKey,
      PodGroupClaims claims,
      boolean disruptedWhole) {
    this(name, minCount, topologyKey, claims, disruptedWhole, 0);
  }

  /** A group without a disruption mode: disrupted whole if it is a gang. */
  public PodGroupPolicy(String name, int minCount, String topologyKey, PodGroupClaims claims) {
    this(name, minCount, topologyKey, claims, minCount > 0);
  }

  /** A group without claims of its own nor a disruption mode. */
  public PodGroupPolicy(String name, int minCount, String topologyKey) {
    this(name, minCount, topologyKey, PodGroupClaims.none(name, null));
  }

  /** The API group and version that serve PodGroups in 1.37. */
  public static final String API_VERSION = "scheduling.k8s.io/v1beta1";

  /** Whether the group is placed all or nothing. */
  public boolean gang() {
    return minCount > 0;
  }

  /** Whether anything about the group changes where its pods go. */
  public boolean constrains() {
    return gang() || topologyKey != null;
  }

  /**
   * The group as kube-scheduler with {@code features} schedules it: without its topology key when
   * {@code TopologyAwareWorkloadScheduling} is off. The API server drops a new constraint with its
   * gate off but keeps one written while the gate was on (its podgroup strategy's {@code
   * dropDisabledSchedulingConstraintsFields}); kube-scheduler then places the group anywhere.
   */
  public PodGroupPolicy scheduledWith(SchedulerFeatures features) {
    if (topologyKey == null || features.topologyAwareWorkloadScheduling()) {
      return this;
    }
    return new PodGroupPolicy(name, minCount, null, claims, disruptedWhole, priority, preemptor);
  }

  /** The PodGroup named in the pod's {@code spec.schedulingGroup}, if any. */
  public static Optional<String> groupOf(Pod pod) {
    if (pod.getSpec() == null || pod.getSpec().getAdditionalProperties() == null) {
      return Optional.empty();
    }
    // fabric8 7.5's PodSpec predates the field: it is kept among the unknown properties
    if (pod.getSpec().getAdditionalProperties().get("schedulingGroup") instanceof Map<?, ?> g
        && g.get("podGroupName") instanceof String name
        && !name.isEmpty()) {
      return Optional.of(name);
    }
    return Optional.empty();
  }

  /** Parses a whole PodGroup: its UID, {@code spec} and {@code status}, as JSON maps and lists. */
  public static PodGroupPolicy parse(
      String name, String uid, Map<String, Object> spec, Map<String, Object> status) {
    PodGroupPolicy p = parse(name, spec);
    return new PodGroupPolicy(
        name,
        p.minCount(),
        p.topologyKey(),
        PodGroupClaims.parse(name, uid, spec, status),
        p.disruptedWhole(),
        p.priority(),
        GroupPreemption.preemptor(status).orElse(null));
  }

  /** Parses a PodGroup's {@code spec}, as JSON maps and lists. */
  public static PodGroupPolicy parse(String name, Map<String, Object> spec) {
    int minCount = 0;
    if (spec != null
        && spec.get("schedulingPolicy") instanceof Map<?, ?> policy
        && policy.get("gang") instanceof Map<?, ?> gang
        && gang.get("minCount") instanceof Number n) {
      minCount = Math.max(1, n.intValue());
    }
    String key = null;
    if (spec != null
        && spec.get("schedulingConstraints") instanceof Map<?, ?> constraints
        && constraints.get("topology") instanceof List<?> topology) {
      List<String> keys = new ArrayList<>();
      for (Object t : topology) {
        if (t instanceof Map<?, ?> m && m.get("key") instanceof String k && !k.isEmpty()) {
          keys.add(k);
        }
      }
      key = keys.isEmpty() ? null : keys.get(0);
    }
    boolean whole = minCount > 0;
    if (spec != null && spec.get("disruptionMode") instanceof Map<?, ?> mode) {
      whole = mode.get("all") != null || (mode.get("single") == null && whole);
    }
    int priority = spec != null && spec.get("priority") instanceof Number n ? n.intValue() : 0;
    return new PodGroupPolicy(
        name, minCount, key, PodGroupClaims.none(name, null), whole, priority);
  }
}
