package io.kdra.claimcontroller.scheduling;

import io.fabric8.kubernetes.api.model.Node;
import io.kdra.claimcontroller.domain.NodeFilter;
import io.kdra.claimcontroller.domain.PodRequests;
import java.util.Collection;
import java.util.IdentityHashMap;
import java.util.Map;

/**
 * Each node's allocatable CPU and memory for {@link NodeFilter}, parsed once per node object (an
 * informer replaces the object on every change) instead of once per node and scheduling attempt.
 *
 * <p>Not thread-safe: the caller serialises attempts (the scheduling lock).
 */
final class AllocatableCache {

  private Map<Node, PodRequests> byNode = new IdentityHashMap<>();
  private long parses;

  /** Keeps the entries of {@code nodes} (parsing the new objects) and drops all others. */
  void refresh(Collection<Node> nodes) {
    Map<Node, PodRequests> next = new IdentityHashMap<>(nodes.size() * 2);
    for (Node n : nodes) {
      PodRequests known = byNode.get(n);
      next.put(n, known != null ? known : parse(n));
    }
    byNode = next;
  }

  /** The node's allocatable CPU and memory; parsed on the spot for a node not refreshed. */
  PodRequests of(Node node) {
    PodRequests known = byNode.get(node);
    return known != null ? known : parse(node);
  }

  /** How many node objects were parsed (for tests). */
  long parses() {
    return parses;
  }

  private PodRequests parse(Node node) {
    parses++;
    return NodeFilter.allocatable(node);
  }
}
