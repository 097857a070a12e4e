package io.kdra.core.alloc;

import io.fabric8.kubernetes.api.model.Node;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.IdentityHashMap;
import java.util.List;
import java.util.Map;
import java.util.RandomAccess;

/**
 * A node list in name order plus which of its nodes are known to be certainly full (every usable
 * pool fully allocated, see {@link Allocator#poolsFull}), so that first-fit over a half-full
 * cluster jumps over runs of full nodes ({@code BitSet.nextClearBit}, 64 nodes a word) instead of
 * looking up each node's pools: without it every pod paid a hash lookup per full node, O(nodes).
 *
 * <p>Why the marks stay true: a pool fully allocated in one state is fully allocated in every state
 * that {@linkplain AllocatedState#includes includes} it ({@link StateMarks} keeps them). Built for
 * one list object and valid while the caller passes the same node objects in the same order ({@link
 * #sameNodes}); thread-safe.
 */
final class NodeIndex {

  private static final Comparator<Node> BY_NAME =
      Comparator.comparing(n -> n.getMetadata().getName());

  private final Node[] given;
  private final List<Node> sorted;
  private final boolean partitionable;
  private final StateMarks full;

  /** Each node object's position in name order, for searches that walk another order. */
  private final Map<Node, Integer> positions = new IdentityHashMap<>();

  private NodeIndex(List<Node> nodes, boolean partitionable) {
    this.given = nodes.toArray(new Node[0]);
    List<Node> order = new ArrayList<>(nodes);
    order.sort(BY_NAME); // stable: equal names keep the caller's order, as before
    this.sorted = List.copyOf(order);
    for (int i = 0; i < sorted.size(); i++) {
      positions.put(sorted.get(i), i);
    }
    this.partitionable = partitionable;
    this.full = new StateMarks(nodes.size());
  }

  /** An index over {@code nodes} for pools gathered with or without partitionable devices. */
  static NodeIndex of(List<Node> nodes, boolean partitionable) {
    return new NodeIndex(nodes, partitionable);
  }

  /**
   * Whether this index was built from these very node objects in this order, for these features:
   * O(nodes) identity checks, far cheaper than a pool lookup per node.
   */
  boolean sameNodes(List<Node> nodes, boolean partitionable) {
    if (partitionable != this.partitionable || nodes.size() != given.length) {
      return false;
    }
    if (nodes instanceof RandomAccess) {
      for (int i = 0; i < given.length; i++) {
        if (nodes.get(i) != given[i]) {
          return false;
        }
      }
      return true;
    }
    int i = 0;
    for (Node n : nodes) {
      if (n != given[i++]) {
        return false;
      }
    }
    return true;
  }

  /** The nodes in name order. */
  List<Node> sorted() {
    return sorted;
  }

  /**
   * The first position at or after {@code from} (in name order) not known to be full in {@code
   * state}; {@code from} itself when no mark holds for the state; {@code size()} or more when every
   * remaining node is known full.
   */
  int nextNotKnownFull(int from, AllocatedState state) {
    return full.nextUnmarked(from, state);
  }

  /** The node object's position in name order; -1 for a node not in this index. */
  int position(Node node) {
    Integer p = positions.get(node);
    return p == null ? -1 : p;
  }

  /** Records that the node at {@code position} (name order) is certainly full in {@code state}. */
  void markFull(int position, AllocatedState state) {
    full.mark(position, state);
  }
}
