package io.kdra.claimcontroller.domain;

import io.fabric8.kubernetes.api.model.Node;
import io.fabric8.kubernetes.api.model.NodeCondition;
import io.fabric8.kubernetes.api.model.NodeSelector;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.Taint;
import io.fabric8.kubernetes.api.model.TaintBuilder;
import io.kdra.core.alloc.NodeSelectors;
import io.kdra.core.alloc.PodScheduler;
import io.kdra.core.model.Quantity;
import java.util.ArrayList;
import java.util.Collection;
import java.util.Comparator;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.TreeMap;
import java.util.function.Function;

/**
 * The nodes a pod may run on before devices are considered, with a scheduler-style reason for each
 * rejected node. The checks, in kube-scheduler's order (the first failing one is the node's
 * reason): named by the pod's {@code spec.nodeName} and required node affinity when those name
 * nodes ({@link PreFilterNodeNames}), {@code spec.nodeName} (upstream's NodeName), Ready (ours
 * alone: kube-scheduler has no Ready filter and leaves not-Ready nodes to the node lifecycle
 * controller's {@code not-ready}/{@code unreachable} taints), not cordoned (unless the pod
 * tolerates the unschedulable taint), no untolerated {@code NoSchedule}/{@code NoExecute} taint,
 * {@code spec.nodeSelector} and required node affinity, the node selectors of the pod's
 * already-allocated claims, free host ports ({@link NodePorts}), CPU, memory and pod count fitting
 * what pods bound there already request, the volume plugins ({@link VolumeFilters}), {@code
 * DoNotSchedule} topology spread ({@link PodTopologySpread}), and required pod affinity and
 * anti-affinity both ways ({@link InterPodAffinity}). Pure and deterministic: nodes come out sorted
 * by name.
 */
public final class NodeFilter {

  private static final Taint UNSCHEDULABLE_TAINT =
      new TaintBuilder().withKey(Upstream.TAINT_UNSCHEDULABLE).withEffect("NoSchedule").build();

  /**
   * Upstream's TaintToleration reason (since 1.35 without the taint, so that the scheduler's
   * message counts nodes by reason).
   */
  public static final String REASON_UNTOLERATED_TAINT = "node(s) had untolerated taint(s)";

  /** Upstream's NodeName reason ({@code nodename.ErrReason}). */
  public static final String REASON_NODE_NAME = "node(s) didn't match the requested node name";

  private NodeFilter() {}

  /**
   * The filter's answer.
   *
   * @param feasible the nodes that passed, sorted by name
   * @param rejected node name to reason, for every node that did not
   */
  public record Result(List<Node> feasible, Map<String, String> rejected) {

    /**
     * A one-line summary in kube-scheduler's style, e.g. {@code 0/3 nodes are available: 1 node is
     * not ready, 2 Insufficient memory.} Reasons are counted and sorted for stable messages.
     */
    public String summary() {
      int all = feasible.size() + rejected.size();
      Map<String, Integer> counts = new TreeMap<>();
      rejected.values().forEach(r -> counts.merge(r, 1, Integer::sum));
      List<String> parts = new ArrayList<>();
      counts.forEach((r, n) -> parts.add(n + " " + r));
      return feasible.size()
          + "/"
          + all
          + " nodes are available"
          + (parts.isEmpty() ? "." : ": " + String.join(", ", parts) + ".");
    }
  }

  /**
   * Filters {@code nodes} for {@code pod}.
   *
   * @param allPods every pod known; those bound to a node and not terminal count against it
   * @param claimSelectors the {@code allocation.nodeSelector}s of the pod's allocated claims (null
   *     entries, allocations usable everywhere, may be left out)
   */
  public static Result filter(
      Pod pod, Collection<Node> nodes, Collection<Pod> allPods, List<NodeSelector> claimSelectors) {
    return filter(pod, nodes, allPods, claimSelectors, Map.of());
  }

  /**
   * As {@link #filter(Pod, Collection, Collection, List)}, with the namespaces' labels (name to
   * labels) for pod affinity terms with a namespace selector.
   */
  public static Result filter(
      Pod pod,
      Collection<Node> nodes,
      Collection<Pod> allPods,
      List<NodeSelector> claimSelectors,
      Map<String, Map<String, String>> namespaceLabels) {
    return filter(pod, nodes, allPods, claimSelectors, namespaceLabels, null);
  }

  /**
   * As {@link #filter(Pod, Collection, Collection, List, Map)}, with the volume plugins reading
   * {@code volumes} (null: not checked). Their PreFilter's refusal is every node's reason, unless
   * node names leave no node first ({@link PreFilterNodeNames#refusal}), as in upstream's profile.
   */
  public static Result filter(
      Pod pod,
      Collection<Node> nodes,
      Collection<Pod> allPods,
      List<NodeSelector> claimSelectors,
      Map<String, Map<String, String>> namespaceLabels,
      VolumeObjects volumes) {
    Map<String, NodeUsage> usage = new HashMap<>();
    List<Pod> placed = new ArrayList<>();
    for (Pod p : allPods) {
      if (Pods.isBound(p)
          && !Pods.isTerminal(p)
          && !p.getMetadata().getUid().equals(pod.getMetadata().getUid())) {
        usage.merge(p.getSpec().getNodeName(), NodeUsage.of(p), NodeUsage::plus);
        placed.add(p);
      }
    }
    List<Node> sorted = sortedByName(nodes);
    PlacedPodFilters placedFilters =
        PlacedPodFilters.prefilter(
            pod,
            sorted,
            () -> placed,
            placed.stream().filter(InterPodAffinity::hasRequiredAntiAffinity).toList(),
            () -> namespaceLabels);
    // NodeName's and NodeAffinity's PreFilters come before the volume plugins' in the profile: when
    // they leave no node, the volume PreFilters never run and each node gets their reason below
    if (volumes != null && PreFilterNodeNames.of(pod).refusal().isEmpty()) {
      VolumeFilters.PreFiltered v = VolumeFilters.prefilter(pod, volumes, () -> placed);
      if (v.refused().isPresent()) {
        // a PreFilter's refusal is every node's reason, whatever else it would fail
        Map<String, String> all = new TreeMap<>();
        sorted.forEach(n -> all.put(n.getMetadata().getName(), v.refusal()));
        return new Result(List.of(), all);
      }
      placedFilters = placedFilters.withVolumes(v.filters());
    }
    return filter(pod, sorted, usage, claimSelectors, NodeFilter::allocatable, placedFilters);
  }

  /**
   * Filters {@code sortedNodes} for {@code pod}, with what pods bound to each node already request
   * given as {@code usage} (node name to the sum; absent is none), each node's allocatable pods,
   * CPU and memory given by {@code allocatable} ({@link #allocatable} of the node), and the
   * PreFilter state of the filters that look at placed pods: the scheduler keeps the first two from
   * one pod to the next instead of summing every bound pod and parsing every node per attempt.
   *
   * @param sortedNodes the nodes, sorted by name ({@link #sortedByName})
   */
  public static Result filter(
      Pod pod,
      List<Node> sortedNodes,
      Map<String, NodeUsage> usage,
      List<NodeSelector> claimSelectors,
      Function<Node, Allocatable> allocatable,
      PlacedPodFilters placed) {
    PodRequests wanted = PodRequests.of(pod);
    PreFilterNodeNames named = PreFilterNodeNames.of(pod);
    List<Node> feasible = new ArrayList<>();
    Map<String, String> rejected = new TreeMap<>();
    for (Node node : sortedNodes) {
      // upstream's PreFilter runs before every filter, so its reason comes first
      Optional<String> why = named.reject(node.getMetadata().getName());
      if (why.isEmpty()) {
        why =
            reject(
                pod,
                wanted,
                node,
                usage.getOrDefault(node.getMetadata().getName(), NodeUsage.NONE),
                claimSelectors,
                allocatable,
                placed);
      }
      if (why.isPresent()) {
        rejected.put(node.getMetadata().getName(), why.get());
      } else {
        feasible.add(node);
      }
    }
    return new Result(List.copyOf(feasible), rejected);
  }

  /** The nodes sorted by name, the order {@link #filter} expects and answers in. */
  public static List<Node> sortedByName(Collection<Node> nodes) {
    List<Node> sorted = new ArrayList<>(nodes);
    sorted.sort(Comparator.comparing(n -> n.getMetadata().getName()));
    return sorted;
  }

  /**
   * What the pods bound to one node request together.
   *
   * @param pods how many
   * @param requests their CPU and memory
   * @param nonZero their CPU and memory as the scorers count them ({@link PodRequests#nonZero})
   */
  public record NodeUsage(int pods, PodRequests requests, PodRequests nonZero) {

    public static final NodeUsage NONE = new NodeUsage(0, PodRequests.ZERO, PodRequests.ZERO);

    /** One pod's usage. */
    public static NodeUsage of(Pod pod) {
      return new NodeUsage(1, PodRequests.of(pod), PodRequests.nonZero(pod));
    }

    public NodeUsage plus(NodeUsage o) {
      return new NodeUsage(pods + o.pods, requests.plus(o.requests), nonZero.plus(o.nonZero));
    }
  }

  /**
   * What a node offers pods ({@code status.allocatable}).
   *
   * @param pods how many pods it takes; negative: no limit given
   * @param requests its CPU and memory (absent is zero)
   */
  public record Allocatable(long pods, PodRequests requests) {}

  /** The node's {@link Allocatable}, parsed from {@code status.allocatable}. */
  public static Allocatable allocatable(Node node) {
    var alloc = node.getStatus() == null ? null : node.getStatus().getAllocatable();
    long pods = alloc != null && alloc.get("pods") != null ? podCount(alloc.get("pods")) : -1;
    return new Allocatable(pods, PodRequests.of(alloc));
  }

  static Optional<String> reject(
      Pod pod,
      PodRequests wanted,
      Node node,
      NodeUsage onNode,
      List<NodeSelector> claimSelectors,
      Function<Node, Allocatable> allocatable,
      PlacedPodFilters placed) {
    var spec = pod.getSpec();
    if (spec.getNodeName() != null
        && !spec.getNodeName().isEmpty()
        && !spec.getNodeName().equals(node.getMetadata().getName())) {
      return Optional.of(REASON_NODE_NAME); // upstream's NodeName, the first filter
    }
    if (!isReady(node)) {
      return Optional.of("node(s) were not ready");
    }
    if (node.getSpec() != null
        && Boolean.TRUE.equals(node.getSpec().getUnschedulable())
        && Taints.firstUntolerated(List.of(UNSCHEDULABLE_TAINT), spec.getTolerations())
            .isPresent()) {
      return Optional.of("node(s) were unschedulable");
    }
    Optional<Taint> taint =
        Taints.firstUntolerated(
            node.getSpec() == null ? null : node.getSpec().getTaints(), spec.getTolerations());
    if (taint.isPresent()) {
      return Optional.of(REASON_UNTOLERATED_TAINT);
    }
    // dra-core's rule, the one PodScheduler applies too (its second look at these nodes always
    // passes; here it gives the node its reason)
    if (!PodScheduler.podFits(pod, node)) {
      return Optional.of("node(s) didn't match Pod's node affinity/selector");
    }
    if (!NodeSelectors.allowAll(claimSelectors, node)) {
      return Optional.of("node(s) cannot use the pod's allocated ResourceClaims");
    }
    Optional<String> why = placed.ports().reject(node);
    if (why.isEmpty()) {
      why = fits(wanted, node, onNode, allocatable);
    }
    // VolumeRestrictions, NodeVolumeLimits, VolumeBinding, VolumeZone come next
    if (why.isEmpty()) {
      why = placed.volumes().reject(node);
    }
    // the default profile's order: PodTopologySpread before InterPodAffinity
    if (why.isEmpty()) {
      why = placed.spread().reject(node);
    }
    if (why.isEmpty()) {
      why = placed.affinity().reject(node);
    }
    return why;
  }

  private static Optional<String> fits(
      PodRequests wanted, Node node, NodeUsage onNode, Function<Node, Allocatable> allocatable) {
    Allocatable offered = allocatable.apply(node);
    if (offered.pods() >= 0 && onNode.pods() + 1 > offered.pods()) {
      return Optional.of("Too many pods");
    }
    if (wanted.cpu().isZero() && wanted.memory().isZero()) {
      return Optional.empty();
    }
    PodRequests capacity = offered.requests();
    PodRequests used = onNode.requests();
    if (!wanted.cpu().isZero() && used.cpu().add(wanted.cpu()).compareTo(capacity.cpu()) > 0) {
      return Optional.of("Insufficient cpu");
    }
    Quantity mem = used.memory().add(wanted.memory());
    if (!wanted.memory().isZero() && mem.compareTo(capacity.memory()) > 0) {
      return Optional.of("Insufficient memory");
    }
    return Optional.empty();
  }

  /** The allocatable pod count; a plain integer (the usual form) without parsing a quantity. */
  private static long podCount(io.fabric8.kubernetes.api.model.Quantity pods) {
    if ((pods.getFormat() == null || pods.getFormat().isEmpty())
        && pods.getAmount() != null
        && !pods.getAmount().isEmpty()
        && pods.getAmount().length() < 18
        && pods.getAmount().chars().allMatch(Character::isDigit)) {
      return Long.parseLong(pods.getAmount());
    }
    return PodRequests.quantity(pods).asLong();
  }

  /** Whether the node's {@code Ready} condition is {@code True}. */
  public static boolean isReady(Node node) {
    List<NodeCondition> conds = node.getStatus() == null ? null : node.getStatus().getConditions();
    if (conds == null) {
      return false;
    }
    for (NodeCondition c : conds) {
      if ("Ready".equals(c.getType()) && "True".equals(c.getStatus())) {
        return true;
      }
    }
    return false;
  }
}
