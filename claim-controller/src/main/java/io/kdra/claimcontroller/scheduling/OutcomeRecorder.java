package io.kdra.claimcontroller.scheduling;

import io.fabric8.kubernetes.api.model.Pod;
import io.kdra.claimcontroller.k8s.PodWriter;
import io.kdra.events.EventRecorder;
import java.util.Objects;
import java.util.function.Consumer;

/**
 * Records on the cluster what one scheduling attempt's {@link Outcome} means for the pod and its
 * claims, so that the reconciler has only the requeue left to decide.
 *
 * <p>An {@link Outcome.Unschedulable} pod gets {@code PodScheduled=False}; only when that condition
 * changed (a new message) do the pod and each claim the allocator explained get a {@code
 * FailedScheduling} Event, so that a pod retried with backoff does not flood its Events. Every such
 * attempt is counted by reason. Other outcomes record nothing: binding and claim writes are part of
 * the attempt itself. Thread-safe as its collaborators; Events are best effort.
 */
public final class OutcomeRecorder {

  /** Event reason of an attempt that placed nothing, as kube-scheduler's. */
  public static final String FAILED_SCHEDULING = "FailedScheduling";

  private final ClusterView view;
  private final PodWriter pods;
  private final EventRecorder events;
  private final Consumer<String> failures;

  /**
   * @param view where the claims that an explanation names are looked up
   * @param failures counts one failed attempt, by its short reason (the metric)
   */
  public OutcomeRecorder(
      ClusterView view, PodWriter pods, EventRecorder events, Consumer<String> failures) {
    this.view = Objects.requireNonNull(view, "view");
    this.pods = Objects.requireNonNull(pods, "pods");
    this.events = Objects.requireNonNull(events, "events");
    this.failures = Objects.requireNonNull(failures, "failures");
  }

  /** Records {@code outcome} of an attempt to schedule {@code pod}. */
  public void record(Pod pod, Outcome outcome) {
    if (!(outcome instanceof Outcome.Unschedulable u)) {
      return;
    }
    failures.accept(u.reason());
    if (!pods.markUnschedulable(pod, u.message())) {
      return;
    }
    events.warning(pod, FAILED_SCHEDULING, u.message());
    u.perClaim()
        .forEach(
            (claim, why) ->
                view.claim(pod.getMetadata().getNamespace(), claim)
                    .ifPresent(c -> events.warning(c, FAILED_SCHEDULING, why)));
  }
}
