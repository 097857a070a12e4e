package io.kdra.kubectl;

import io.fabric8.kubernetes.api.model.Node;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.resource.v1.AllocationResult;
import io.fabric8.kubernetes.api.model.resource.v1.ResourceClaim;
import io.kdra.claimcontroller.domain.NodeFilter;
import io.kdra.claimcontroller.domain.PodClaimResolver;
import io.kdra.claimcontroller.domain.PodClaimResolver.Step;
import io.kdra.claimcontroller.domain.Pods;
import io.kdra.claimcontroller.domain.TemplateMode;
import io.kdra.claimcontroller.scheduling.DraCorePodAllocator;
import io.kdra.claimcontroller.scheduling.PodAllocator.Decision;
import io.kdra.claimcontroller.scheduling.PreEnqueue;
import io.kdra.claimcontroller.scheduling.PreFilter;
import io.kdra.core.alloc.Allocator;
import io.kdra.core.alloc.AllocatorOptions;
import io.kdra.core.alloc.ClaimOutcome;
import io.kdra.core.alloc.NodeSelectors;
import io.kdra.core.alloc.PodScheduler;
import io.kdra.core.alloc.RequestReport;
import java.util.ArrayList;
import java.util.Collection;
import java.util.Comparator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.stream.Collectors;

/**
 * Why a pod is not running yet, decided as the claim-controller decides it, step by step with the
 * controller's own functions (claims resolved, nodes filtered, claims allocated together on one
 * node) and worded with its own texts: the message is the one the controller writes to the pod's
 * {@code PodScheduled} condition for the same cluster state. Adds what the condition has no room
 * for: the allocator's counts per request and its answer on each node. Pure.
 */
final class PodWhy {

  /**
   * Nodes shown per answer, first by name: each feasible one costs an allocation attempt, and a
   * large cluster's list would bury the answer; the message covers all nodes.
   */
  static final int NODES_SHOWN = 50;

  private PodWhy() {}

  /** Where the pod stands. */
  enum State {
    /** On a node already. */
    BOUND,
    /** Waiting for something other than devices (a claim being created, ...). */
    WAITING,
    /** No node fits now: {@link Answer#message} is the controller's PodScheduled message. */
    UNSCHEDULABLE,
    /** It would fit now, on {@link Answer#node}: the controller places it at its next try. */
    FITS
  }

  /** One node: the node filter's reason, or the allocator's answer on that node alone. */
  record NodeRow(String node, String result) {}

  /** One request's (or subrequest's) counts, over all nodes tried, for one claim. */
  record RequestRow(String claim, RequestReport report) {}

  /**
   * The answer.
   *
   * @param message the PodScheduled message (UNSCHEDULABLE), what it waits for (WAITING), or empty
   * @param node the node it is bound to or would fit on, else null
   * @param claims the pod's claims that exist, in spec order
   * @param allocations claim UID to the allocation it would get (FITS), else empty
   * @param perClaim claim name to the allocator's explanation, for claims it could not allocate
   */
  record Answer(
      State state,
      String message,
      String node,
      List<ResourceClaim> claims,
      Map<String, AllocationResult> allocations,
      Map<String, String> perClaim,
      List<RequestRow> requests,
      List<NodeRow> nodes) {

    static Answer of(State state, String message, String node, List<ResourceClaim> claims) {
      return new Answer(state, message, node, claims, Map.of(), Map.of(), List.of(), List.of());
    }
  }

  static Answer explain(Pod pod, ClusterState state, AllocatorOptions options) {
    if (Pods.isBound(pod)) {
      return Answer.of(State.BOUND, "", pod.getSpec().getNodeName(), existingClaims(pod, state));
    }
    PodClaimResolver.Resolution r = PodClaimResolver.resolve(pod, state.lookup(), TemplateMode.OWN);
    List<ResourceClaim> claims = distinct(r.claims().values());
    List<String> missing = PreEnqueue.missing(r);
    if (!missing.isEmpty()) {
      return Answer.of(State.UNSCHEDULABLE, String.join("; ", missing), null, claims);
    }
    for (Step s : r.steps()) {
      if (s instanceof Step.Create c) {
        return Answer.of(
            State.WAITING,
            "pod claim entry "
                + c.entry()
                + ": its claim is not "
                + "created yet from ResourceClaimTemplate "
                + pod.getSpec().getResourceClaims().stream()
                    .filter(e -> e.getName().equals(c.entry()))
                    .findFirst()
                    .map(e -> e.getResourceClaimTemplateName())
                    .orElse("?"),
            null,
            claims);
      }
      if (s instanceof Step.Wait w) {
        return Answer.of(State.WAITING, w.reason(), null, claims);
      }
    }
    if (state.volumeObjects() != null) {
      var refused = PreFilter.refusalMessage(pod, state);
      if (refused.isPresent()) {
        return Answer.of(State.UNSCHEDULABLE, refused.get(), null, claims);
      }
    }
    List<ResourceClaim> unallocated = claims.stream().filter(c -> !allocated(c)).toList();
    NodeFilter.Result filtered =
        NodeFilter.filter(
            pod,
            state.nodes(),
            state.pods(),
            NodeSelectors.ofAllocated(claims),
            state.namespaceLabels(),
            state.volumeObjects());
    Set<String> shown = shown(state);
    List<NodeRow> rows = new ArrayList<>();
    filtered
        .rejected()
        .forEach(
            (node, why) -> {
              if (shown.contains(node)) {
                rows.add(new NodeRow(node, why));
              }
            });
    if (filtered.feasible().isEmpty()) {
      return new Answer(
          State.UNSCHEDULABLE,
          filtered.summary(),
          null,
          claims,
          Map.of(),
          Map.of(),
          List.of(),
          sorted(rows, state));
    }
    if (unallocated.isEmpty()) {
      String node = filtered.feasible().get(0).getMetadata().getName();
      filtered.feasible().stream()
          .filter(n -> shown.contains(n.getMetadata().getName()))
          .forEach(
              n ->
                  rows.add(
                      new NodeRow(
                          n.getMetadata().getName(), "fits: its claims are allocated already")));
      return new Answer(
          State.FITS, "", node, claims, Map.of(), Map.of(), List.of(), sorted(rows, state));
    }
    DraCorePodAllocator allocator = new DraCorePodAllocator(options);
    PodScheduler.Placement placement =
        allocator.placement(pod, filtered.feasible(), unallocated, state.claims(), state);
    Allocator perNode = allocator.allocator(state.claims(), state);
    for (Node n : filtered.feasible()) {
      if (shown.contains(n.getMetadata().getName())) {
        rows.add(new NodeRow(n.getMetadata().getName(), onNode(perNode.allocate(n, unallocated))));
      }
    }
    Decision d = DraCorePodAllocator.decide(placement);
    if (d instanceof Decision.Placed p) {
      return new Answer(
          State.FITS,
          "",
          p.node(),
          claims,
          p.allocations(),
          Map.of(),
          List.of(),
          sorted(rows, state));
    }
    Decision.NotPlaced np = (Decision.NotPlaced) d;
    List<RequestRow> requests = new ArrayList<>();
    for (ClaimOutcome o : placement.outcomes()) {
      if (o instanceof ClaimOutcome.NotAllocated na) {
        na.explanation()
            .requests()
            .forEach(rr -> requests.add(new RequestRow(o.claim().getMetadata().getName(), rr)));
      }
    }
    return new Answer(
        State.UNSCHEDULABLE,
        np.message(filtered),
        null,
        claims,
        Map.of(),
        np.perClaim(),
        requests,
        sorted(rows, state));
  }

  /** The allocator's answer on one node: the devices it would pick, or why none. */
  static String onNode(List<ClaimOutcome> outcomes) {
    if (outcomes.stream().allMatch(o -> o instanceof ClaimOutcome.Allocated)) {
      List<String> parts = new ArrayList<>();
      for (ClaimOutcome o : outcomes) {
        parts.add(
            "claim "
                + o.claim().getMetadata().getName()
                + ": "
                + Words.devices(((ClaimOutcome.Allocated) o).result()));
      }
      return "fits: " + String.join("; ", parts);
    }
    return DraCorePodAllocator.message(DraCorePodAllocator.perClaim(outcomes));
  }

  static boolean allocated(ResourceClaim c) {
    return c.getStatus() != null && c.getStatus().getAllocation() != null;
  }

  /** The claims of a bound pod that exist, as its status records them or by name. */
  private static List<ResourceClaim> existingClaims(Pod pod, ClusterState state) {
    return distinct(
        PodClaimResolver.resolve(pod, state.lookup(), TemplateMode.ADOPT).claims().values());
  }

  /** The names of the first {@link #NODES_SHOWN} nodes by name. */
  private static Set<String> shown(ClusterState state) {
    return state.nodes().stream()
        .map(n -> n.getMetadata().getName())
        .sorted()
        .limit(NODES_SHOWN)
        .collect(Collectors.toSet());
  }

  /** By node name, and a last row counting the nodes not shown. */
  private static List<NodeRow> sorted(List<NodeRow> rows, ClusterState state) {
    List<NodeRow> out = new ArrayList<>(rows);
    out.sort(Comparator.comparing(NodeRow::node));
    int hidden = state.nodes().size() - NODES_SHOWN;
    if (hidden > 0) {
      out.add(new NodeRow("...", hidden + " more nodes, not shown"));
    }
    return out;
  }

  private static List<ResourceClaim> distinct(Collection<ResourceClaim> cs) {
    Map<String, ResourceClaim> byName = new LinkedHashMap<>();
    cs.forEach(c -> byName.putIfAbsent(c.getMetadata().getName(), c));
    return new ArrayList<>(byName.values());
  }
}
