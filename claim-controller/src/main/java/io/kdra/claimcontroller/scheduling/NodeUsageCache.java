package io.kdra.claimcontroller.scheduling;

import io.fabric8.kubernetes.api.model.Pod;
import io.kdra.claimcontroller.domain.NodeFilter.NodeUsage;
import io.kdra.claimcontroller.domain.PodRequests;
import io.kdra.claimcontroller.domain.Pods;
import java.util.Collection;
import java.util.HashMap;
import java.util.Map;

/**
 * What the pods bound to each node request, for {@link io.kdra.claimcontroller.domain.NodeFilter}:
 * each pod's requests are parsed once per pod object (an informer replaces the object on every
 * change) instead of once per scheduling attempt, and pods this controller is binding count on
 * their node before the informer shows them bound.
 *
 * <p>Not thread-safe: the caller serialises attempts (the scheduling lock).
 */
final class NodeUsageCache {

  private record Parsed(Pod pod, PodRequests requests) {}

  private Map<String, Parsed> byUid = new HashMap<>();

  /** Node name to what its bound, non-terminal pods ({@code informed} and {@code binding}) use. */
  Map<String, NodeUsage> usage(Collection<Pod> informed, Collection<Pod> binding) {
    Map<String, Parsed> next = new HashMap<>(byUid.size() * 2 + 16);
    Map<String, NodeUsage> usage = new HashMap<>();
    for (Pod p : informed) {
      count(p, next, usage);
    }
    for (Pod p : binding) {
      count(p, next, usage);
    }
    byUid = next;
    return usage;
  }

  private void count(Pod p, Map<String, Parsed> next, Map<String, NodeUsage> usage) {
    if (!Pods.isBound(p) || Pods.isTerminal(p) || next.containsKey(p.getMetadata().getUid())) {
      return;
    }
    Parsed known = byUid.get(p.getMetadata().getUid());
    if (known == null || known.pod() != p) {
      known = new Parsed(p, PodRequests.of(p));
    }
    next.put(p.getMetadata().getUid(), known);
    usage.merge(p.getSpec().getNodeName(), NodeUsage.of(known.requests()), NodeUsage::plus);
  }
}
