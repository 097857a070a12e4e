package io.kdra.claimcontroller.domain;

import io.fabric8.kubernetes.api.model.Pod;
import java.time.Instant;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;

/**
 * The record of a preemption that evicted every placed member of a PodGroup, kept on the group
 * itself so that a restarted (or newly elected) scheduler still frees the group's claim for the
 * preemptor: upstream's PodGroup condition {@code DisruptionTarget} (reason {@code
 * PreemptionByScheduler}, scheduling.k8s.io/v1beta1 in 1.37), whose message names the preemptor as
 * the victims' {@code Preempted} event does. Once the group is placed again, the condition is set
 * back to False ({@link #conditionsPlacedAgain}): the group is no longer about to be disrupted, and
 * a later emptying of it is not taken for this preemption's. Pure: the group's status as JSON maps
 * and lists.
 */
public final class GroupPreemption {

  /** Upstream's {@code schedulingv1beta1.DisruptionTarget}. */
  public static final String TYPE = "DisruptionTarget";

  /** Upstream's {@code PodGroupReasonPreemptionByScheduler}. */
  public static final String REASON = "PreemptionByScheduler";

  /**
   * The reason of the condition set back to False once the group is placed again. Upstream has
   * none: kube-scheduler 1.37 never writes this condition on a PodGroup (it only defines it), and
   * its disruption controller sets a pod's stale {@code DisruptionTarget} back to False without
   * one; a PodGroup's conditions need a reason, and kubectl shows it in the group's STATUS column.
   */
  public static final String PLACED_AGAIN = "Rescheduled";

  private static final String BY = "Preempted by pod ";
  private static final String ON = " on node ";

  private GroupPreemption() {}

  /**
   * {@code conditions} with the group's {@code DisruptionTarget} set for preemptor {@code uid}
   * nominated to {@code node}; the others kept as they are, in order. The transition time stays
   * when the condition was already true.
   */
  public static List<Map<String, Object>> conditionsWith(
      List<Map<String, Object>> conditions, String uid, String node, Instant now) {
    List<Map<String, Object>> out = new ArrayList<>();
    Map<String, Object> ours = new LinkedHashMap<>();
    ours.put("type", TYPE);
    ours.put("status", "True");
    ours.put("reason", REASON);
    ours.put("message", BY + uid + ON + node);
    ours.put("lastTransitionTime", now.toString());
    boolean replaced = false;
    for (Map<String, Object> c : conditions) {
      if (TYPE.equals(c.get("type"))) {
        if ("True".equals(c.get("status")) && c.get("lastTransitionTime") != null) {
          ours.put("lastTransitionTime", c.get("lastTransitionTime"));
        }
        out.add(ours);
        replaced = true;
      } else {
        out.add(c);
      }
    }
    if (!replaced) {
      out.add(ours);
    }
    return out;
  }

  /** The conditions of a group's {@code status} (none: empty). */
  @SuppressWarnings("unchecked")
  public static List<Map<String, Object>> conditions(Map<String, Object> status) {
    if (status == null || !(status.get("conditions") instanceof List<?> l)) {
      return List.of();
    }
    List<Map<String, Object>> out = new ArrayList<>();
    for (Object o : l) {
      if (o instanceof Map<?, ?> m) {
        out.add((Map<String, Object>) m);
      }
    }
    return out;
  }

  /**
   * The UID of the preemptor that the group's {@code DisruptionTarget} condition names: true, of
   * reason {@code PreemptionByScheduler}, in the words {@link #conditionsWith} writes. Empty
   * otherwise (another component's condition included).
   */
  public static Optional<String> preemptor(Map<String, Object> status) {
    for (Map<String, Object> c : conditions(status)) {
      if (TYPE.equals(c.get("type"))
          && "True".equals(c.get("status"))
          && REASON.equals(c.get("reason"))
          && c.get("message") instanceof String m
          && m.startsWith(BY)
          && m.indexOf(ON, BY.length()) > BY.length()) {
        return Optional.of(m.substring(BY.length(), m.indexOf(ON, BY.length())));
      }
    }
    return Optional.empty();
  }

  /**
   * {@code conditions} with the {@code DisruptionTarget} this class wrote for preemptor {@code uid}
   * set back to False (reason {@link #PLACED_AGAIN}, from {@code now}), once the group's {@code
   * members} pods are placed again ({@link #placedAgain}); the others kept as they are, in order.
   * Empty when there is nothing to clear: no such condition, already False, or naming another
   * preemptor or written by another component.
   */
  public static Optional<List<Map<String, Object>>> conditionsPlacedAgain(
      List<Map<String, Object>> conditions, String uid, int members, Instant now) {
    if (!preemptor(Map.of("conditions", conditions)).filter(uid::equals).isPresent()) {
      return Optional.empty();
    }
    List<Map<String, Object>> out = new ArrayList<>();
    for (Map<String, Object> c : conditions) {
      if (TYPE.equals(c.get("type"))) {
        Map<String, Object> cleared = new LinkedHashMap<>();
        cleared.put("type", TYPE);
        cleared.put("status", "False");
        cleared.put("reason", PLACED_AGAIN);
        cleared.put("message", "all " + members + " pods of the group are placed again");
        cleared.put("lastTransitionTime", now.toString());
        out.add(cleared);
      } else {
        out.add(c);
      }
    }
    return Optional.of(out);
  }

  /**
   * Whether a group whose pods are {@code members} (those of its scheduler that have not finished)
   * is placed again after its eviction: at least one, and at least {@code minCount}, all bound and
   * none leaving (being deleted, or marked with a true {@code DisruptionTarget} before its
   * deletion: the members being evicted still look placed until then).
   */
  public static boolean placedAgain(List<Pod> members, int minCount) {
    return !members.isEmpty()
        && members.size() >= minCount
        && members.stream().allMatch(p -> Pods.isBound(p) && !leaving(p));
  }

  private static boolean leaving(Pod p) {
    return p.getMetadata().getDeletionTimestamp() != null
        || (p.getStatus() != null
            && p.getStatus().getConditions() != null
            && p.getStatus().getConditions().stream()
                .anyMatch(c -> TYPE.equals(c.getType()) && "True".equals(c.getStatus())));
  }
}
