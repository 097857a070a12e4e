package io.kdra.claimcontroller.scheduling;

import io.fabric8.kubernetes.api.model.Node;
import io.kdra.claimcontroller.domain.NodeFilter;
import java.util.Collection;
import java.util.IdentityHashMap;
import java.util.Map;

/**
 * Each node's allocatable pods, CPU and memory for {@link NodeFilter}, parsed once per node object
 * (an informer replaces the object on every change) instead of once per node and scheduling
 * attempt.
 *
 * <p>Not thread-safe: the caller serialises attempts (the scheduling lock).
 */
final class AllocatableCache {

  private Map<Node, NodeFilter.Allocatable> byNode = new IdentityHashMap<>();
  private long parses;

  /** Keeps the entries of {@code nodes} (parsing the new objects) and drops all others. */
  void refresh(Collection<Node> nodes) {
    Map<Node, NodeFilter.Allocatable> next = new IdentityHashMap<>(nodes.size() * 2);
    for (Node n : nodes) {
      NodeFilter.Allocatable known = byNode.get(n);
      next.put(n, known != null ? known : parse(n));
    }
    byNode = next;
  }

  /** The node's allocatable pods, CPU and memory; parsed on the spot for a node not refreshed. */
  NodeFilter.Allocatable of(Node node) {
    NodeFilter.Allocatable known = byNode.get(node);
    return known != null ? known : parse(node);
  }

  /** How many node objects were parsed (for tests). */
  long parses() {
    return parses;
  }

  private NodeFilter.Allocatable parse(Node node) {
    parses++;
    return NodeFilter.allocatable(node);
  }
}
