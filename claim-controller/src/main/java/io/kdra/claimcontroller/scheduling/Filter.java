package io.kdra.claimcontroller.scheduling;

import io.fabric8.kubernetes.api.model.Node;
import io.fabric8.kubernetes.api.model.Pod;
import io.kdra.claimcontroller.domain.NodeFilter;
import io.kdra.claimcontroller.domain.NodeScoring;
import io.kdra.claimcontroller.domain.PlacedPodFilters;
import io.kdra.claimcontroller.domain.SearchDeadline;
import io.kdra.claimcontroller.domain.VolumeFilters;
import io.kdra.core.alloc.AllocatedState;
import io.kdra.core.alloc.Deadline;
import io.kdra.core.alloc.NodeSelectors;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.HashSet;
import java.util.IdentityHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.function.LongSupplier;
import java.util.function.Predicate;

/**
 * kube-scheduler's Filter for this scheduler, in two steps around {@link Score}: the nodes the pod
 * may go to ({@link #nodes}: {@link NodeFilter}'s rules, the pods placed already ({@link
 * PlacedPodFilters}), the devices of its claims allocated before, its PodGroup's domain, its
 * extended resources), then its unallocated claims' devices ({@link #allocate}). Upstream's
 * DynamicResources runs the allocator on every node in Filter; here it walks the feasible nodes in
 * score order ({@link ScoreOrder}) and stops at the best that fits, so Score comes first. Both read
 * what the pods of higher priority were promised ({@link Nominations}). Under the scheduling lock.
 */
final class Filter {

  /**
   * The nodes the pod may go to ({@code result}), with what the steps after read: every node by
   * name, each node's usage and every claim's allocation as this attempt counts them (with the
   * nominations held against the pod), what each feasible node serves of its extended resources by
   * DRA (null without extended resources), and the volume plugins' state (what VolumeBinding
   * decided per node, which its Score reads).
   */
  record Nodes(
      NodeFilter.Result result,
      List<Node> all,
      Map<String, NodeFilter.NodeUsage> used,
      AllocatedState state,
      ExtendedResources.Filtered byExtended,
      VolumeFilters volumes) {}

  /**
   * The nodes an attempt is narrowed to, and why the others are left out (the reason shown for them
   * in the pod's condition).
   */
  record Within(Predicate<Node> accepts, String outside) {

    /** Only the node named {@code node}: a placement found off the lock, redone under it. */
    static Within node(String node) {
      return new Within(
          n -> node.equals(n.getMetadata().getName()),
          "node(s) other than " + node + ", the one found off the scheduling lock");
    }
  }

  /** The allocator's decision, with the special claim it covered, or null. */
  record Allocation(PodAllocator.Decision decision, ExtendedResources.InMemoryClaim special) {}

  private final DraManager dra;
  private final Nominations nominations;
  private final AllocatableCache allocatable;
  private final PodAllocator allocator;
  private final SearchDeadline deadline;
  private final LongSupplier nanoClock;
  private List<Node> sortedNodes = List.of();
  private Set<Node> sortedNodeSet = Set.of();

  Filter(
      DraManager dra,
      Nominations nominations,
      AllocatableCache allocatable,
      PodAllocator allocator,
      SearchDeadline deadline,
      LongSupplier nanoClock) {
    this.dra = dra;
    this.nominations = nominations;
    this.allocatable = allocatable;
    this.allocator = allocator;
    this.deadline = deadline;
    this.nanoClock = nanoClock;
  }

  /** The nodes {@code s}'s pod may go to; with {@code within} (or null), only those it accepts. */
  Nodes nodes(CycleState s, Within within) {
    ClusterView view = dra.view();
    NodeUsageCache usage = dra.usage();
    List<Pod> assumedBound =
        dra.recent()
            .assumedBound(
                p -> {
                  // rechecked now: the informer's cache may show the pod bound before its event's
                  // notice comes, and it no longer counts as being bound from here on
                  usage.podChanged(p.getMetadata().getNamespace(), p.getMetadata().getName());
                  return view.pod(p.getMetadata().getNamespace(), p.getMetadata().getName());
                });
    List<Node> allNodes = sortedNodes();
    Pod pod = s.pod();
    Set<String> beingBound = new HashSet<>();
    assumedBound.forEach(p -> beingBound.add(p.getMetadata().getUid()));
    // a preemptor being bound counts on its node already, as bound
    List<Nominations.Hold> held =
        nominations.against(pod, view::pod).stream()
            .filter(h -> !beingBound.contains(h.uid()))
            .toList();
    Map<String, NodeFilter.NodeUsage> used = Nominations.withHeld(held, usage.usage(assumedBound));
    AllocatedState state = Nominations.withHeld(held, dra.allocated().state());
    String uid = s.uid();
    PlacedPodFilters others =
        PlacedPodFilters.prefilter(
            pod,
            allNodes,
            () -> others(uid, usage.placed()),
            others(uid, usage.placedWithAntiAffinity()),
            view::namespaceLabels);
    if (VolumeFilters.concerns(pod)) {
      // read again under the lock: a claim may have changed since the PreFilter's look
      others =
          others.withVolumes(
              VolumeFilters.prefilter(pod, view.volumes(), () -> others(uid, usage.placed()))
                  .filters());
    }
    NodeFilter.Result nodes =
        NodeFilter.filter(
            pod, allNodes, used, NodeSelectors.ofAllocated(s.claims()), allocatable::of, others);
    if (within != null) {
      nodes = within(nodes, within);
    }
    ExtendedResources.Filtered byExtended = null;
    if (s.extended() != null) {
      byExtended =
          ExtendedResources.filter(
              s.extended(),
              nodes,
              () -> {
                List<Pod> all = new ArrayList<>(assumedBound);
                all.addAll(view.pods());
                return all;
              });
      nodes = byExtended.nodes();
    }
    return new Nodes(nodes, allNodes, used, state, byExtended, others.volumes());
  }

  /**
   * Allocates {@code s}'s unallocated claims (and its special claim, for extended resources a
   * DeviceClass serves) on the best of the feasible {@code nodes}, highest {@code scores} first;
   * the search stops at the deadline of the pod's attempt number {@code attempt}, counted from now.
   */
  Allocation allocate(CycleState s, Nodes nodes, NodeScoring.Scores scores, int attempt) {
    Duration limit = deadline.limit(attempt);
    long start = nanoClock.getAsLong();
    Deadline searchDeadline = () -> SearchDeadline.passed(start, limit, nanoClock.getAsLong());
    if (s.extended() != null && s.extended().served()) {
      ExtendedResources.Decision xd =
          ExtendedResources.allocate(
              s.extended(),
              nodes.byExtended(),
              ScoreOrder.of(scores),
              s.unallocated(),
              s.earlier(),
              allocator,
              nodes.state(),
              dra.view(),
              searchDeadline);
      return new Allocation(xd.decision(), xd.claim());
    }
    if (s.unallocated().isEmpty()) {
      return new Allocation(
          new PodAllocator.Decision.Placed(scores.best().getMetadata().getName(), Map.of()), null);
    }
    return new Allocation(
        allocator.allocateRanked(
            s.pod(),
            ScoreOrder.of(scores),
            s.unallocated(),
            s.earlier(),
            nodes.state(),
            dra.view(),
            searchDeadline),
        null);
  }

  /** {@code pods} without the pod of {@code uid}. */
  static List<Pod> others(String uid, List<Pod> pods) {
    return pods.stream().filter(p -> !uid.equals(p.getMetadata().getUid())).toList();
  }

  /**
   * The view's nodes sorted by name, sorted again only when a node changed: the same list of the
   * same objects from one pod to the next also lets the allocator keep its node index.
   */
  private List<Node> sortedNodes() {
    List<Node> current = dra.view().nodes();
    if (current.size() != sortedNodes.size()
        || !current.stream().allMatch(sortedNodeSet::contains)) {
      Set<Node> set = Collections.newSetFromMap(new IdentityHashMap<>());
      set.addAll(current);
      sortedNodes = NodeFilter.sortedByName(current);
      sortedNodeSet = set;
      allocatable.refresh(current);
    }
    return sortedNodes;
  }

  /**
   * The filter's result with the nodes {@code within} does not accept moved to the rejected ones,
   * with its reason.
   */
  private static NodeFilter.Result within(NodeFilter.Result nodes, Within within) {
    List<Node> feasible = new ArrayList<>();
    Map<String, String> rejected = new TreeMap<>(nodes.rejected());
    for (Node n : nodes.feasible()) {
      if (within.accepts().test(n)) {
        feasible.add(n);
      } else {
        rejected.put(n.getMetadata().getName(), within.outside());
      }
    }
    return new NodeFilter.Result(feasible, rejected);
  }
}
