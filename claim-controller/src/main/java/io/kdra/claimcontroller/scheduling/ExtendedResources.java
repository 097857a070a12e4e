package io.kdra.claimcontroller.scheduling;

import io.fabric8.kubernetes.api.model.Node;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.resource.v1.ResourceClaim;
import io.kdra.claimcontroller.domain.NodeFilter;
import io.kdra.claimcontroller.domain.Pods;
import io.kdra.core.alloc.AllocatedState;
import io.kdra.core.alloc.Deadline;
import io.kdra.core.alloc.RankedSearch;
import io.kdra.core.extended.ExtendedResourceClaims;
import io.kdra.core.extended.ExtendedResourceClasses;
import io.kdra.core.extended.ExtendedResourceFit;
import io.kdra.core.extended.ExtendedResourceFit.NodeFit;
import io.kdra.core.extended.ExtendedResourceRequests;
import java.util.ArrayList;
import java.util.Collection;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.SortedMap;
import java.util.TreeMap;
import java.util.UUID;
import java.util.function.Supplier;

/**
 * The scheduling decision's part for extended resources (KEP-5004), as kube-scheduler's
 * NodeResourcesFit and DynamicResources plugins make it: nodes that advertise a resource in {@code
 * status.allocatable} serve it by their device plugin and must have room; nodes that do not, serve
 * it through a DeviceClass that names it, by the pod's special claim, built per node and allocated
 * with the pod's other claims. The special claim exists only in memory (upstream's {@code
 * <extended-resources>}) until the writes create it ({@link ExtendedClaimWrites}).
 */
final class ExtendedResources {

  /** What the pod asks for; {@code served} whether any of it is served by a DeviceClass. */
  record Need(
      Pod pod, Map<String, Long> requests, ExtendedResourceClasses classes, boolean served) {}

  /** The pod's special claim for the chosen node, before it is created. */
  record InMemoryClaim(ResourceClaim claim, ExtendedResourceClaims.Spec spec) {
    String uid() {
      return claim.getMetadata().getUid();
    }
  }

  /** The allocator's decision with the special claim it covered, or null. */
  record Decision(PodAllocator.Decision decision, InMemoryClaim claim) {}

  private ExtendedResources() {}

  /** What {@code pod} asks for in extended resources; null when nothing. */
  static Need need(Pod pod, ClusterView view) {
    Map<String, Long> requests = ExtendedResourceRequests.of(pod);
    if (requests.isEmpty()) {
      return null;
    }
    ExtendedResourceClasses classes = ExtendedResourceClasses.of(view.deviceClasses());
    return new Need(pod, requests, classes, requests.keySet().stream().anyMatch(classes::serves));
  }

  /**
   * The nodes of {@code nodes} that fit the pod's extended resources, with what each serves by DRA;
   * the others are added to the rejected ones with NodeResourcesFit's reason.
   *
   * @param boundPods the non-terminal pods bound to nodes (with those being bound by this process),
   *     read only when some node advertises one of the resources
   */
  static Filtered filter(Need need, NodeFilter.Result nodes, Supplier<Collection<Pod>> boundPods) {
    Map<String, Map<String, Long>> used = null;
    List<Node> feasible = new ArrayList<>();
    Map<String, String> rejected = new TreeMap<>(nodes.rejected());
    Map<String, SortedMap<String, Long>> viaDra = new HashMap<>();
    for (Node node : nodes.feasible()) {
      if (used == null && advertisesAny(node, need.requests().keySet())) {
        used = usage(need, boundPods.get());
      }
      String name = node.getMetadata().getName();
      NodeFit fit =
          ExtendedResourceFit.fit(
              need.requests(),
              need.classes(),
              node,
              used == null ? Map.of() : used.getOrDefault(name, Map.of()));
      if (fit instanceof NodeFit.Fits f) {
        feasible.add(node);
        viaDra.put(name, f.viaDra());
      } else {
        rejected.put(name, ((NodeFit.Unfit) fit).reason());
      }
    }
    return new Filtered(new NodeFilter.Result(List.copyOf(feasible), rejected), viaDra);
  }

  /** The filter's answer: the nodes, and per feasible node what its special claim asks for. */
  record Filtered(NodeFilter.Result nodes, Map<String, SortedMap<String, Long>> viaDra) {}

  private static boolean advertisesAny(Node node, Collection<String> names) {
    var alloc = node.getStatus() == null ? null : node.getStatus().getAllocatable();
    return alloc != null && names.stream().anyMatch(alloc::containsKey);
  }

  private static Map<String, Map<String, Long>> usage(Need need, Collection<Pod> bound) {
    Map<String, Map<String, Long>> used = new HashMap<>();
    for (Pod p : bound) {
      if (!Pods.isBound(p)
          || Pods.isTerminal(p)
          || p.getMetadata().getUid().equals(need.pod().getMetadata().getUid())) {
        continue;
      }
      Map<String, Long> forNode =
          used.computeIfAbsent(p.getSpec().getNodeName(), k -> new HashMap<>());
      ExtendedResourceRequests.of(p)
          .forEach(
              (k, v) -> {
                if (need.requests().containsKey(k)) {
                  forNode.merge(k, v, Long::sum);
                }
              });
    }
    return used;
  }

  /**
   * Allocates the pod's claims on the best node of {@code ranked} (the feasible nodes of {@code
   * filtered}, highest score first), with the special claim each node needs: nodes are taken in
   * score order, in runs that need the same special claim, so the highest-scoring node that fits
   * wins as without extended resources. A run whose nodes serve everything by device plugins needs
   * no special claim, and, with nothing else to allocate, takes its first node.
   *
   * @param earlier the pod's claims allocated before (see {@link PodAllocator#allocateRanked})
   */
  static Decision allocate(
      Need need,
      Filtered filtered,
      RankedSearch.Ranked ranked,
      List<ResourceClaim> unallocated,
      List<ResourceClaim> earlier,
      PodAllocator allocator,
      AllocatedState allocated,
      ClusterView view,
      Deadline deadline) {
    List<Node> nodes = ranked.order();
    PodAllocator.Decision firstRefusal = null;
    int i = 0;
    while (i < nodes.size()) {
      SortedMap<String, Long> want = filtered.viaDra().get(nodes.get(i).getMetadata().getName());
      int j = i;
      while (j < nodes.size()
          && Objects.equals(want, filtered.viaDra().get(nodes.get(j).getMetadata().getName()))) {
        j++;
      }
      List<Node> run = nodes.subList(i, j);
      RankedSearch.Ranked runRanked = ScoreOrder.slice(ranked, i, j);
      i = j;
      InMemoryClaim special = null;
      List<ResourceClaim> claims = unallocated;
      if (!want.isEmpty()) {
        ExtendedResourceClaims.Spec spec =
            ExtendedResourceClaims.spec(need.pod(), want, need.classes());
        special =
            new InMemoryClaim(
                ExtendedResourceClaims.desired(need.pod(), spec, UUID.randomUUID().toString()),
                spec);
        claims = new ArrayList<>(unallocated);
        claims.add(special.claim());
      }
      if (claims.isEmpty()) {
        return new Decision(
            new PodAllocator.Decision.Placed(run.get(0).getMetadata().getName(), Map.of()), null);
      }
      PodAllocator.Decision d =
          allocator.allocateRanked(
              need.pod(), runRanked, claims, earlier, allocated, view, deadline);
      if (d instanceof PodAllocator.Decision.Placed) {
        return new Decision(d, special);
      }
      if (d instanceof PodAllocator.Decision.NotPlaced np && np.timedOut()) {
        return new Decision(d, null); // the other runs would stop at once: say why now
      }
      if (firstRefusal == null) {
        firstRefusal = d;
      }
    }
    return new Decision(firstRefusal, null);
  }

  /** {@code allocations} with the placeholder UID's entry moved to {@code realUid}. */
  static <T> Map<String, T> renamed(Map<String, T> byUid, String placeholder, String realUid) {
    Map<String, T> out = new LinkedHashMap<>();
    byUid.forEach((k, v) -> out.put(k.equals(placeholder) ? realUid : k, v));
    return out;
  }
}
