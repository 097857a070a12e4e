package io.kdra.claimcontroller.scheduling;

import io.fabric8.kubernetes.api.model.Node;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.resource.v1.AllocationResult;
import io.fabric8.kubernetes.api.model.resource.v1.ResourceClaim;
import io.fabric8.kubernetes.api.model.resource.v1.ResourceClaimConsumerReference;
import io.kdra.claimcontroller.domain.NodeFilter;
import io.kdra.claimcontroller.domain.PodGroupClaims;
import io.kdra.claimcontroller.domain.PodGroupPolicy;
import io.kdra.claimcontroller.domain.VictimSearch;
import io.kdra.claimcontroller.domain.VolumeObjects;
import io.kdra.core.alloc.Allocator;
import io.kdra.core.alloc.NodeSelectors;
import io.kdra.core.alloc.PodScheduler;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.function.Function;
import java.util.stream.Collectors;

/**
 * Whether a pod fits on a node once some pods are gone, as the scheduler would decide it: the node
 * filters over the pods that stay (their CPU, memory, ports, affinity and spread), then the
 * allocator for the pod's unallocated claims with the gone pods' claims freed (their devices,
 * counters and capacity). A claim is freed only when no pod it is reserved for stays: one still
 * reserved by a pod that stays keeps its devices, and one reserved only for pods already gone is
 * being released (its deallocation is under way). A claim reserved for a PodGroup is freed only
 * when every placed member of the group goes (then {@link Preemption} releases it: nobody else
 * would while the group exists). Reads one snapshot of the cluster taken when it is made; the
 * allocator is built afresh per question (preemption is rare, and each question frees different
 * claims).
 */
final class PreemptionFits implements VictimSearch.Fits {

  private final Pod pod;
  private final List<ResourceClaim> podClaims;
  private final List<ResourceClaim> unallocated;
  private final Map<String, Node> nodes;
  private final List<Pod> placed;
  private final Set<String> live;
  private final List<ResourceClaim> claims;
  private final Function<List<ResourceClaim>, Allocator> allocatorOf;
  private final Map<String, Map<String, String>> namespaceLabels;
  private final Map<String, Set<String>> groupMembers;
  private final Set<String> emptiedGroups;
  private final VolumeObjects volumes;

  PreemptionFits(
      Pod pod,
      List<ResourceClaim> podClaims,
      List<Node> nodes,
      List<Pod> placed,
      Set<String> live,
      List<ResourceClaim> claims,
      Map<String, Map<String, String>> namespaceLabels,
      Set<String> emptiedGroups,
      Function<List<ResourceClaim>, Allocator> allocatorOf,
      VolumeObjects volumes) {
    this.pod = pod;
    this.podClaims = podClaims;
    this.unallocated =
        podClaims.stream()
            .filter(c -> c.getStatus() == null || c.getStatus().getAllocation() == null)
            .toList();
    this.nodes = nodes.stream().collect(Collectors.toMap(n -> n.getMetadata().getName(), n -> n));
    this.placed = placed;
    this.groupMembers = groupMembers(placed);
    this.emptiedGroups = emptiedGroups;
    this.live = live;
    this.claims = claims;
    this.namespaceLabels = namespaceLabels;
    this.allocatorOf = allocatorOf;
    this.volumes = volumes;
  }

  @Override
  public boolean fits(String node, List<Pod> gone) {
    return allocations(node, gone).isPresent();
  }

  /**
   * The allocations the pod's unallocated claims would get on {@code node} once {@code gone} are
   * gone (none to make: an empty map); empty when it would not fit.
   */
  Optional<Map<String, AllocationResult>> allocations(String node, List<Pod> gone) {
    Node n = nodes.get(node);
    if (n == null) {
      return Optional.empty();
    }
    Set<String> goneUids =
        gone.stream().map(p -> p.getMetadata().getUid()).collect(Collectors.toSet());
    List<Pod> staying =
        placed.stream().filter(p -> !goneUids.contains(p.getMetadata().getUid())).toList();
    NodeFilter.Result filtered =
        NodeFilter.filter(
            pod,
            List.of(n),
            staying,
            NodeSelectors.ofAllocated(podClaims),
            namespaceLabels,
            volumes);
    if (filtered.feasible().isEmpty()) {
      return Optional.empty();
    }
    if (unallocated.isEmpty()) {
      return Optional.of(Map.of());
    }
    List<ResourceClaim> held =
        claims.stream()
            .filter(c -> !freed(c, live, goneUids, groupMembers, emptiedGroups))
            .toList();
    PodScheduler.Placement placement =
        PodScheduler.schedule(allocatorOf.apply(held), List.of(n), pod, unallocated);
    if (!placement.allocated()) {
      return Optional.empty();
    }
    return Optional.of(
        ((PodAllocator.Decision.Placed) DraCorePodAllocator.decide(placement)).allocations());
  }

  /**
   * Whether no consumer the claim is reserved for stays: each pod goes or is gone already ({@code
   * live}: the UIDs of the pods that exist and have not finished), and of each PodGroup every
   * placed member goes ({@code groupMembers}: {@code namespace/group} to its placed members' UIDs),
   * or, none placed, the preemptor's eviction emptied it ({@code emptiedGroups}): a group merely
   * idle keeps its claim, as upstream's controller keeps it. A claim reserved for none stays.
   */
  static boolean freed(
      ResourceClaim c,
      Set<String> live,
      Set<String> goneUids,
      Map<String, Set<String>> groupMembers,
      Set<String> emptiedGroups) {
    if (c.getStatus() == null || c.getStatus().getReservedFor() == null) {
      return false;
    }
    List<ResourceClaimConsumerReference> users = c.getStatus().getReservedFor();
    String ns = c.getMetadata().getNamespace();
    return !users.isEmpty()
        && users.stream()
            .noneMatch(
                r ->
                    PodGroupClaims.isPodGroup(r)
                        ? groupStays(
                            groupMembers.getOrDefault(ns + "/" + r.getName(), Set.of()),
                            goneUids,
                            emptiedGroups.contains(ns + "/" + r.getName()))
                        : live.contains(r.getUid()) && !goneUids.contains(r.getUid()));
  }

  private static boolean groupStays(Set<String> placed, Set<String> goneUids, boolean emptied) {
    return placed.isEmpty() ? !emptied : !goneUids.containsAll(placed);
  }

  /** The placed pods' UIDs by their PodGroup ({@code namespace/group}). */
  static Map<String, Set<String>> groupMembers(List<Pod> placed) {
    Map<String, Set<String>> members = new HashMap<>();
    for (Pod p : placed) {
      PodGroupPolicy.groupOf(p)
          .ifPresent(
              g ->
                  members
                      .computeIfAbsent(
                          p.getMetadata().getNamespace() + "/" + g, k -> new HashSet<>())
                      .add(p.getMetadata().getUid()));
    }
    return members;
  }
}
