package io.kdra.kubectl;

import io.fabric8.kubernetes.api.model.Node;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.PodResourceClaim;
import io.fabric8.kubernetes.api.model.resource.v1.AllocationResult;
import io.fabric8.kubernetes.api.model.resource.v1.ResourceClaim;
import io.kdra.claimcontroller.domain.NodeFilter;
import io.kdra.claimcontroller.domain.Pods;
import io.kdra.claimcontroller.domain.TemplateClaims;
import io.kdra.claimcontroller.scheduling.DraCorePodAllocator;
import io.kdra.claimcontroller.scheduling.PodAllocator.Decision;
import io.kdra.core.alloc.AllocatorOptions;
import io.kdra.core.alloc.ClaimOutcome;
import io.kdra.core.alloc.PodScheduler;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Objects;

/**
 * Why a ResourceClaim is not allocated. A claim is allocated when a pod that uses it is scheduled,
 * so the answer is its first pending pod's ({@link PodWhy}), narrowed to this claim; a claim no pod
 * uses is tried alone, as for a pod without node constraints, on every ready node. Pure.
 */
final class ClaimWhy {

  private ClaimWhy() {}

  enum State {
    /** Allocated: {@link Answer#allocation} says where and what. */
    ALLOCATED,
    /** A pending pod uses it: {@link Answer#pod} says which, {@link Answer#podAnswer} why. */
    PENDING_POD,
    /** No pending pod uses it; {@link Answer#message} says whether it would fit alone. */
    UNUSED
  }

  /**
   * The answer.
   *
   * @param message for PENDING_POD the allocator's explanation for this claim (or, when the claim
   *     itself could be allocated, the pod's PodScheduled message); for UNUSED whether it would fit
   *     alone
   * @param users every pod that uses the claim ({@code namespace/name})
   * @param fitsOn for UNUSED, the node it would fit on alone, else null
   */
  record Answer(
      State state,
      String message,
      AllocationResult allocation,
      List<String> reservedFor,
      List<String> users,
      String pod,
      PodWhy.Answer podAnswer,
      String fitsOn) {}

  static Answer explain(ResourceClaim claim, ClusterState state, AllocatorOptions options) {
    List<Pod> users = users(claim, state.pods());
    List<String> userKeys = users.stream().map(Pods::key).toList();
    if (PodWhy.allocated(claim)) {
      List<String> reserved =
          claim.getStatus().getReservedFor() == null
              ? List.of()
              : claim.getStatus().getReservedFor().stream()
                  .map(r -> r.getResource() + "/" + r.getName())
                  .toList();
      return new Answer(
          State.ALLOCATED,
          "",
          claim.getStatus().getAllocation(),
          reserved,
          userKeys,
          null,
          null,
          null);
    }
    for (Pod pod : users) {
      if (!Pods.isBound(pod) && !Pods.isDone(pod)) {
        PodWhy.Answer a = PodWhy.explain(pod, state, options);
        String mine = a.perClaim().get(claim.getMetadata().getName());
        List<PodWhy.RequestRow> rows =
            a.requests().stream()
                .filter(r -> r.claim().equals(claim.getMetadata().getName()))
                .toList();
        PodWhy.Answer narrowed =
            new PodWhy.Answer(
                a.state(),
                a.message(),
                a.node(),
                a.claims(),
                a.allocations(),
                a.perClaim(),
                rows,
                a.nodes());
        return new Answer(
            State.PENDING_POD,
            mine != null ? mine : a.message(),
            null,
            List.of(),
            userKeys,
            Pods.key(pod),
            narrowed,
            null);
      }
    }
    List<Node> ready =
        state.nodes().stream()
            .filter(NodeFilter::isReady)
            .sorted(Comparator.comparing(n -> n.getMetadata().getName()))
            .toList();
    DraCorePodAllocator allocator = new DraCorePodAllocator(options);
    PodScheduler.Placement placement =
        allocator.placement(null, ready, List.of(claim), state.claims(), state);
    Decision d = DraCorePodAllocator.decide(placement);
    String prefix =
        (users.isEmpty() ? "no pod uses it" : "no pending pod uses it")
            + " (a claim is allocated when a pod that uses it is scheduled); alone, ";
    String message;
    String fitsOn = null;
    if (d instanceof Decision.Placed p) {
      fitsOn = p.node();
      message =
          prefix
              + "it would fit on "
              + p.node()
              + ": "
              + Words.devices(((ClaimOutcome.Allocated) placement.outcomes().get(0)).result());
    } else {
      message =
          prefix
              + "it would not fit: "
              + ((Decision.NotPlaced) d).perClaim().get(claim.getMetadata().getName());
    }
    return new Answer(State.UNUSED, message, null, List.of(), userKeys, null, null, fitsOn);
  }

  /**
   * Pods that use the claim: by name in {@code spec.resourceClaims}, as recorded in {@code
   * status.resourceClaimStatuses}, or as the claim's owner (a claim from a template).
   */
  static List<Pod> users(ResourceClaim claim, List<Pod> pods) {
    String ns = claim.getMetadata().getNamespace();
    String name = claim.getMetadata().getName();
    String owner = TemplateClaims.owningPod(claim).map(o -> o.getUid()).orElse(null);
    List<Pod> out = new ArrayList<>();
    for (Pod p : pods) {
      if (!Objects.equals(ns, p.getMetadata().getNamespace())) {
        continue;
      }
      boolean byName =
          Pods.claimEntries(p).stream()
              .map(PodResourceClaim::getResourceClaimName)
              .anyMatch(name::equals);
      boolean recorded =
          p.getStatus() != null
              && p.getStatus().getResourceClaimStatuses() != null
              && p.getStatus().getResourceClaimStatuses().stream()
                  .anyMatch(s -> name.equals(s.getResourceClaimName()));
      boolean owns = owner != null && owner.equals(p.getMetadata().getUid());
      if (byName || recorded || owns) {
        out.add(p);
      }
    }
    out.sort(Comparator.comparing(p -> p.getMetadata().getName()));
    return out;
  }
}
