package io.kdra.claimcontroller.domain;

/**
 * Which PodGroup events bring its waiting members back to the scheduler: upstream's gangscheduling
 * queueing hints ({@code isSchedulableAfterPodGroupAdded}, {@code
 * isSchedulableAfterPodGroupUpdated}), and, ours, the group's claims recorded by another
 * controller. A group's creation always does (its members waited for it); its deletion never does.
 * Pure.
 */
public final class PodGroupEvents {

  private PodGroupEvents() {}

  /**
   * Whether the update of a PodGroup from {@code old} to {@code now} can let its waiting members
   * in: a gang's {@code minCount} lowered (upstream), or, where kube-controller-manager makes the
   * group's claims ({@link TemplateMode#ADOPT}), their names recorded in its status, which the
   * members wait for (in {@link TemplateMode#OWN} that record is this controller's own write).
   */
  public static boolean wakesOnUpdate(PodGroupPolicy old, PodGroupPolicy now, TemplateMode mode) {
    if (old.gang() && now.gang() && now.minCount() < old.minCount()) {
      return true;
    }
    return mode == TemplateMode.ADOPT && !old.claims().statuses().equals(now.claims().statuses());
  }
}
