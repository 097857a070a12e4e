package io.kdra.claimcontroller.domain;

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
 * the victims' {@code Preempted} event does. Pure: the group's status as JSON maps and lists.
 */
public final class GroupPreemption {

  /** Upstream's {@code schedulingv1beta1.DisruptionTarget}. */
  public static final String TYPE = "DisruptionTarget";

  /** Upstream's {@code PodGroupReasonPreemptionByScheduler}. */
  public static final String REASON = "PreemptionByScheduler";

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
}
