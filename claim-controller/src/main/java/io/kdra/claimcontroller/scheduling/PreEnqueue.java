package io.kdra.claimcontroller.scheduling;

import io.fabric8.kubernetes.api.model.Pod;
import io.kdra.claimcontroller.domain.PodClaimResolver;
import io.kdra.claimcontroller.domain.PodClaimResolver.Step;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;

/**
 * kube-scheduler's PreEnqueue for this scheduler: whether the pod may be tried now. The
 * SchedulingGates plugin's rule (no gate left) and DynamicResources' (every claim the pod names
 * exists and is not being deleted), and, ours, that the claims just created from templates show in
 * the informers first. Pure.
 */
public final class PreEnqueue {

  private PreEnqueue() {}

  /**
   * Why {@code pod}, its claims resolved as {@code r}, is not tried now: waiting (its own update or
   * its claims' events bring it back) or unschedulable until a user acts; empty when it goes on.
   */
  static Optional<Outcome> check(Pod pod, PodClaimResolver.Resolution r) {
    if (pod.getSpec().getSchedulingGates() != null
        && !pod.getSpec().getSchedulingGates().isEmpty()) {
      // upstream's SchedulingGates PreEnqueue: not tried until the gates are gone (the pod's own
      // update brings it back); its claims are created meanwhile, as kube-controller-manager does
      return Optional.of(
          new Outcome.Waiting("Scheduling is blocked due to non-empty scheduling gates"));
    }
    if (!r.of(Step.Create.class).isEmpty()) {
      return Optional.of(
          new Outcome.Waiting("created claims; scheduling once the informers show them"));
    }
    List<String> missing = missing(r);
    if (!missing.isEmpty()) {
      return Optional.of(
          new Outcome.Unschedulable(String.join("; ", missing), Map.of(), "ClaimMissing"));
    }
    if (!r.complete()) {
      return Optional.of(
          new Outcome.Waiting(
              r.steps().stream()
                  .filter(s -> s instanceof Step.Wait)
                  .map(s -> ((Step.Wait) s).reason())
                  .findFirst()
                  .orElse("waiting for claims")));
    }
    List<String> deleting = beingDeleted(r);
    if (!deleting.isEmpty()) {
      // as kube-scheduler: unschedulable, with the reason on the pod; a claim kept by its
      // delete-protection finalizer (another pod still uses it) may stay so for long
      return Optional.of(
          new Outcome.Unschedulable(String.join("; ", deleting), Map.of(), "ClaimBeingDeleted"));
    }
    return Optional.empty();
  }

  /**
   * Why the pod cannot be scheduled until a user acts: claims and templates it names that do not
   * exist (kube-scheduler's PreEnqueue reports these too, as unschedulable); joined with {@code ";
   * "}, the {@code PodScheduled} message. Public for {@code kubectl dra}.
   */
  public static List<String> missing(PodClaimResolver.Resolution r) {
    List<String> why = new ArrayList<>();
    for (Step.MissingClaim m : r.of(Step.MissingClaim.class)) {
      why.add("pod claim entry " + m.entry() + ": ResourceClaim " + m.claim() + " does not exist");
    }
    for (Step.MissingTemplate m : r.of(Step.MissingTemplate.class)) {
      why.add(
          "pod claim entry "
              + m.entry()
              + ": ResourceClaimTemplate "
              + m.template()
              + " does not exist");
    }
    return why;
  }

  /** Why each claim entry whose claim is being deleted keeps the pod off every node. */
  static List<String> beingDeleted(PodClaimResolver.Resolution r) {
    List<String> why = new ArrayList<>();
    r.claims()
        .forEach(
            (entry, claim) -> {
              if (claim.getMetadata().getDeletionTimestamp() != null) {
                why.add(
                    "pod claim entry "
                        + entry
                        + ": ResourceClaim "
                        + claim.getMetadata().getName()
                        + " is being deleted");
              }
            });
    return why;
  }
}
