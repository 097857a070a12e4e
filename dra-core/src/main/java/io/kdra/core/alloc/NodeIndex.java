package io.kdra.core.alloc;

import io.fabric8.kubernetes.api.model.Node;
import java.util.ArrayList;
import java.util.BitSet;
import java.util.Comparator;
import java.util.List;

/**
 * A node list in name order plus which of its nodes are known to be certainly full (every usable
 * pool fully allocated, see {@link Allocator#poolsFull}), so that first-fit over a half-full
 * cluster jumps over runs of full nodes ({@link BitSet#nextClearBit}, 64 nodes a word) instead of
 * looking up each node's pools: without it every pod paid a hash lookup per full node, O(nodes).
 *
 * <p>Why the marks stay true: a pool fully allocated in one state is fully allocated in every
 * state that {@linkplain AllocatedState#includes includes} it, so marks recorded in states of one
 * history hold for any state that includes the newest of them ({@code asOf}); a mark from
 * another history restarts that set. A state that does not include {@code asOf} (an earlier
 * state, a new pass or batch branching from a common start) still sees, node by node, each
 * node's earliest mark that it includes (rebuilt once, see {@link #rebase}). Built for one list
 * object and valid while the caller passes the same node objects in the same order
 * ({@link #sameNodes}); thread-safe.
 */
final class NodeIndex {

  private static final Comparator<Node> BY_NAME =
      Comparator.comparing(n -> n.getMetadata().getName());

  private final Node[] given;
  private final List<Node> sorted;
  private final boolean partitionable;
  private final BitSet full = new BitSet();
  private AllocatedState asOf;
  /**
   * Per position, the earliest state the node was found full in (null: never): the fallback for
   * states that do not include {@code asOf}, such as each new pass or batch from a common start.
   */
  private final AllocatedState[] fullIn;
  private int marks;

  private NodeIndex(List<Node> nodes, boolean partitionable) {
    this.given = nodes.toArray(new Node[0]);
    List<Node> order = new ArrayList<>(nodes);
    order.sort(BY_NAME); // stable: equal names keep the caller's order, as before
    this.sorted = List.copyOf(order);
    this.partitionable = partitionable;
    this.fullIn = new AllocatedState[nodes.size()];
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
    if (nodes instanceof java.util.RandomAccess) {
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
   * The first position at or after {@code from} (in name order) not known to be full in
   * {@code state}; {@code from} itself when no mark holds for the state; {@code size()} or more
   * when every remaining node is known full.
   */
  synchronized int nextNotKnownFull(int from, AllocatedState state) {
    if (marks == 0) {
      return from;
    }
    if (asOf == null || !state.includes(asOf)) {
      rebase(state);
    }
    return full.nextClearBit(from); // 64 nodes a word
  }

  /**
   * Rebuilds the bits for a state that does not include {@code asOf} (an earlier state, a new
   * pass or batch from a common start): O(nodes) once, then every later state of its history
   * takes the fast path again.
   */
  private void rebase(AllocatedState state) {
    full.clear();
    for (int i = 0; i < fullIn.length; i++) {
      if (fullIn[i] != null && state.includes(fullIn[i])) {
        full.set(i);
      }
    }
    asOf = state;
  }

  /** Records that the node at {@code position} (name order) is certainly full in {@code state}. */
  synchronized void markFull(int position, AllocatedState state) {
    if (asOf == null || state.includes(asOf)) {
      asOf = state; // the newest state: includes every earlier mark's
    } else if (!asOf.includes(state)) {
      full.clear(); // another history: the old marks say nothing about it
      asOf = state;
    }
    // else an earlier state of the same history: full there means full in asOf too
    full.set(position);
    AllocatedState earlier = fullIn[position];
    if (earlier == null) {
      marks++;
    }
    if (earlier == null || !state.includes(earlier)) {
      fullIn[position] = state; // an earlier mark holds in more states: kept when it holds here
    }
  }
}
