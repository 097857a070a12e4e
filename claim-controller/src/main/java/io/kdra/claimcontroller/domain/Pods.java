package io.kdra.claimcontroller.domain;

import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.PodResourceClaim;
import java.util.List;

/** Facts about pods that the scheduling and cleanup rules read. Pure. */
public final class Pods {

  private Pods() {}

  /** {@code namespace/name}, for logs, Events and maps. */
  public static String key(Pod pod) {
    return pod.getMetadata().getNamespace() + "/" + pod.getMetadata().getName();
  }

  /** Whether the pod runs on a node already ({@code spec.nodeName} set). */
  public static boolean isBound(Pod pod) {
    String node = pod.getSpec() == null ? null : pod.getSpec().getNodeName();
    return node != null && !node.isEmpty();
  }

  /** Phase {@code Succeeded} or {@code Failed}: no container runs again. */
  public static boolean isTerminal(Pod pod) {
    String phase = pod.getStatus() == null ? null : pod.getStatus().getPhase();
    return "Succeeded".equals(phase) || "Failed".equals(phase);
  }

  /**
   * Upstream's {@code isPodDone}: certain that none of the pod's containers runs or will run:
   * terminal, or being deleted before it was bound. A bound pod being deleted is not done: its
   * containers may still run until the kubelet has stopped them and unprepared its devices.
   */
  public static boolean isDone(Pod pod) {
    return isTerminal(pod) || pod.getMetadata().getDeletionTimestamp() != null && !isBound(pod);
  }

  /** Whether this controller schedules the pod. */
  public static boolean isScheduledBy(Pod pod, String schedulerName) {
    return pod.getSpec() != null && schedulerName.equals(pod.getSpec().getSchedulerName());
  }

  /** The pod's {@code spec.resourceClaims}, never null. */
  public static List<PodResourceClaim> claimEntries(Pod pod) {
    List<PodResourceClaim> l = pod.getSpec() == null ? null : pod.getSpec().getResourceClaims();
    return l == null ? List.of() : l;
  }

  /** Whether the pod waits for this controller to place it. */
  public static boolean isPending(Pod pod, String schedulerName) {
    return isScheduledBy(pod, schedulerName)
        && !isBound(pod)
        && !isDone(pod)
        && pod.getMetadata().getDeletionTimestamp() == null;
  }
}
