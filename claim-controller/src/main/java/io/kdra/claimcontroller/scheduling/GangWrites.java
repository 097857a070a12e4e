package io.kdra.claimcontroller.scheduling;

import io.fabric8.kubernetes.api.model.Pod;
import io.kdra.claimcontroller.domain.GangTransaction.Committed;
import io.kdra.claimcontroller.domain.PodGroupPolicy;
import io.kdra.claimcontroller.scheduling.Decided.Placement;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;

/**
 * Outside the lock: writes a kept gang pass's placements, each member's as a lone pod's ({@link
 * BindingCycle}); when one write fails, the members after it, assumed and never written, are given
 * back.
 */
final class GangWrites {

  private final SchedulingCycle cycle;
  private final BindingCycle binding;

  GangWrites(SchedulingCycle cycle, BindingCycle binding) {
    this.cycle = cycle;
    this.binding = binding;
  }

  /** The outcome for {@code trigger}, the member whose attempt ran the pass. */
  Outcome write(Pod trigger, PodGroupPolicy policy, GangPass.Result pass) {
    Committed<CycleState, Placement> kept = pass.kept();
    GangRefusals refusals = pass.refusals();
    Outcome triggers = null;
    List<Map.Entry<CycleState, Placement>> writes = new ArrayList<>(kept.placed().entrySet());
    for (int i = 0; i < writes.size(); i++) {
      CycleState m = writes.get(i).getKey();
      Outcome o;
      try {
        o = binding.run(m, writes.get(i).getValue());
      } catch (RuntimeException e) {
        // the members after this one were assumed and never written: give them back
        synchronized (cycle.lock()) {
          for (Map.Entry<CycleState, Placement> rest : writes.subList(i + 1, writes.size())) {
            cycle.unreserve(rest.getKey(), rest.getValue());
          }
        }
        throw e;
      }
      if (m.uid().equals(trigger.getMetadata().getUid())) {
        triggers = o;
      }
    }
    if (triggers != null) {
      return triggers;
    }
    return new Outcome.Unschedulable(
        "pod group "
            + policy.name()
            + " placed "
            + writes.size()
            + " members in "
            + kept.domain()
            + "; this pod did not fit"
            + refusals.of(trigger.getMetadata().getUid()),
        Map.of(),
        "GangMemberUnschedulable");
  }
}
