package io.kdra.claimcontroller.scheduling;

import io.fabric8.kubernetes.api.model.Pod;
import io.kdra.claimcontroller.k8s.ClaimWriter;
import io.kdra.claimcontroller.k8s.ExtendedClaimWriter;
import io.kdra.claimcontroller.k8s.PodBinder;
import io.kdra.events.EventRecorder;
import java.util.function.BooleanSupplier;

/**
 * The binding cycle (kube-scheduler's {@code bindingCycle}) of a placement the {@link
 * SchedulingCycle} decided and reserved: every claim reserved for the pod and the binding ({@link
 * ReserveAndBind}), with the special claim's writes for a pod that has one ({@link
 * ExtendedClaimWrites}). Runs outside the scheduling lock, several pods at once; what a failed one
 * leaves assumed goes back through {@link Reserve}'s Unreserve.
 */
final class BindingCycle {

  private final DraManager dra;
  private final Reserve reserve;
  private final ReserveAndBind writes;
  private final ExtendedClaimWrites extendedWrites;

  BindingCycle(
      DraManager dra,
      Reserve reserve,
      ClaimWriter claims,
      PodBinder binder,
      EventRecorder events,
      ClaimTracer tracer,
      BooleanSupplier mayWrite) {
    this.dra = dra;
    this.reserve = reserve;
    this.writes =
        new ReserveAndBind(dra.view(), dra.recent(), claims, binder, events, tracer, mayWrite);
    this.extendedWrites =
        new ExtendedClaimWrites(dra.recent(), ExtendedClaimWriter.of(claims), writes, events);
  }

  /** Writes {@code s}'s pod's placement; ends its spans. */
  Outcome run(CycleState s, Decided.Placement placement) {
    Pod pod = s.pod();
    try {
      placement.spans().linkSlices(dra.view()::poolSlices, placement.allocations());
      Outcome o =
          placement.special() == null
              ? writes.reserveAndBind(
                  pod,
                  s.claims(),
                  placement.node(),
                  placement.allocations(),
                  placement.spans().byClaim(),
                  s.shared(),
                  () -> {})
              : extendedWrites.reserveAndBind(
                  pod,
                  s.claims(),
                  placement.node(),
                  placement.allocations(),
                  placement.spans().byClaim(),
                  placement.special());
      placement.spans().end();
      if (!(o instanceof Outcome.Bound)) {
        reserve.notBound(pod);
      }
      return o;
    } catch (RuntimeException e) {
      placement.spans().end(e);
      reserve.unsent(placement);
      throw e;
    }
  }
}
