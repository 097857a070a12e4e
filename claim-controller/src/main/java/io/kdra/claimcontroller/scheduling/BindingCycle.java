package io.kdra.claimcontroller.scheduling;

import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.resource.v1.AllocationResult;
import io.fabric8.kubernetes.api.model.resource.v1.ResourceClaim;
import io.fabric8.kubernetes.api.model.resource.v1.ResourceClaimConsumerReference;
import io.fabric8.kubernetes.client.KubernetesClientException;
import io.kdra.claimcontroller.domain.Pods;
import io.kdra.claimcontroller.k8s.ClaimWriter;
import io.kdra.claimcontroller.k8s.ExtendedClaimWriter;
import io.kdra.claimcontroller.k8s.PodBinder;
import io.kdra.events.EventRecorder;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.function.BooleanSupplier;

/**
 * The binding cycle (kube-scheduler's {@code bindingCycle}) of a placement the {@link
 * SchedulingCycle} decided and reserved: {@link VolumePreBind} (claims waiting for their first
 * consumer provisioned on the node first), {@link PreBind} (every claim reserved for the pod), the
 * rest of PreBind for a pod with a special claim ({@link ExtendedClaimWrites}), then Bind (the
 * binding, as upstream's DefaultBinder). Runs outside the scheduling lock, several pods at once;
 * what a failed one leaves assumed goes back through {@link Reserve}'s Unreserve.
 */
final class BindingCycle {

  private final DraManager dra;
  private final Reserve reserve;
  private final PreBind preBind;
  private final VolumePreBind volumes;
  private final ExtendedClaimWrites extendedWrites;
  private final PodBinder binder;
  private final EventRecorder events;
  private final ClaimTracer tracer;
  private final BooleanSupplier mayWrite;

  /**
   * Its {@code settings.mayWrite()} is asked right before each write (this replica's Lease is
   * fresh): see {@link PreBind}.
   */
  BindingCycle(
      DraManager dra,
      Reserve reserve,
      PodScheduling.Writers writers,
      PodScheduling.Settings settings) {
    ClaimWriter claims = writers.claims();
    this.dra = dra;
    this.reserve = reserve;
    this.preBind = new PreBind(dra.view(), dra.recent(), claims, settings.mayWrite());
    this.volumes = new VolumePreBind(dra.view(), claims.volumeClaims(), settings.mayWrite());
    this.binder = writers.binder();
    this.events = writers.events();
    this.tracer = settings.tracer();
    this.mayWrite = settings.mayWrite();
    this.extendedWrites =
        new ExtendedClaimWrites(
            dra.recent(),
            ExtendedClaimWriter.of(claims),
            (pod, podClaims, node, allocations, relied, spans, beforeBind) ->
                preBindAndBind(
                    pod, podClaims, node, allocations, relied, spans, Map.of(), beforeBind),
            writers.events());
  }

  /** Writes {@code s}'s pod's placement; ends its spans. */
  Outcome run(CycleState s, Decided.Placement placement) {
    Pod pod = s.pod();
    try {
      // VolumeBinding's PreBind comes before DynamicResources': nothing of the placement is
      // written while the pod's volumes are being provisioned on its node
      Optional<Outcome> provisioning = volumes.waitFor(pod, placement.node());
      if (provisioning.isPresent()) {
        reserve.unsent(placement);
        reserve.notBound(pod);
        placement.spans().end();
        return provisioning.get();
      }
      placement.spans().linkSlices(dra.view()::poolSlices, placement.allocations());
      Outcome o =
          placement.special() == null
              ? preBindAndBind(
                  pod,
                  s.claims(),
                  placement.node(),
                  placement.allocations(),
                  placement.relied(),
                  placement.spans().byClaim(),
                  s.shared(),
                  () -> {})
              : extendedWrites.reserveAndBind(
                  pod,
                  s.claims(),
                  placement.node(),
                  placement.allocations(),
                  placement.relied(),
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

  /**
   * Reserves {@code podClaims} for {@code pod}, writing {@code allocations} (claim UID to result)
   * where given, the others only while allocated as in {@code relied} (as the decision saw them),
   * those in {@code groupClaims} (by UID) for the consumer given there (the pod's PodGroup, for the
   * claims its members share); runs {@code beforeBind} once every claim is reserved (the rest of
   * PreBind: the pod's extended resource claim status; if it fails, the reservations are undone);
   * then binds the pod to {@code node}.
   */
  Outcome preBindAndBind(
      Pod pod,
      List<ResourceClaim> podClaims,
      String node,
      Map<String, AllocationResult> allocations,
      Map<String, AllocationResult> relied,
      Map<String, ClaimTracer.TraceSpan> spans,
      Map<String, ResourceClaimConsumerReference> groupClaims,
      Runnable beforeBind) {
    Optional<Outcome> failed =
        preBind.reserveAll(pod, podClaims, allocations, relied, spans, groupClaims);
    if (failed.isPresent()) {
      return failed.get();
    }
    if (!mayWrite.getAsBoolean()) {
      return PodScheduling.FENCED; // the reservations stay, as below
    }
    try {
      beforeBind.run();
    } catch (RuntimeException e) {
      preBind.rollback(pod, podClaims, allocations);
      throw e;
    }
    if (!mayWrite.getAsBoolean()) {
      // the reservations stay: undoing them is a write too, and whoever leads next binds the pod
      // where its claims are allocated
      return PodScheduling.FENCED;
    }
    return bind(pod, podClaims, node, allocations);
  }

  private Outcome bind(
      Pod pod, List<ResourceClaim> podClaims, String node, Map<String, AllocationResult> ours) {
    List<ClaimTracer.TraceSpan> bindSpans =
        podClaims.stream()
            .map(
                c ->
                    tracer.start(c, "bind").attribute("node", node).attribute("pod", Pods.key(pod)))
            .toList();
    try {
      binder.bind(pod, node);
      bindSpans.forEach(ClaimTracer.TraceSpan::end);
    } catch (KubernetesClientException e) {
      bindSpans.forEach(s -> s.end(e));
      if (e.getCode() != 404 && e.getCode() != 409) {
        throw e;
      }
      // The pod is gone, or replaced by one of the same name (the binding names the UID):
      // nothing will use these reservations, so they are undone now rather than left to cleanup,
      // and as the cleanup would, with the allocations they leave unused.
      preBind.rollbackForGonePod(pod, podClaims, ours);
      return new Outcome.Waiting(
          "pod "
              + Pods.key(pod)
              + " was deleted or replaced while "
              + "being bound; its reservations were released");
    } catch (RuntimeException e) {
      bindSpans.forEach(s -> s.end(e));
      throw e;
    }
    events.normal(pod, "Scheduled", "Successfully assigned " + Pods.key(pod) + " to " + node);
    return new Outcome.Bound(node);
  }
}
