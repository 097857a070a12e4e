package io.kdra.core.alloc;

import java.util.BitSet;

/**
 * Positions (of nodes, of devices) marked with a fact that, once true in an allocated state, stays
 * true in every state that {@linkplain AllocatedState#includes includes} it: "this node's pools are
 * all allocated", "this device is allocated". Lets a walk over many positions jump over runs of
 * marked ones ({@link BitSet#nextClearBit}, 64 a word) instead of checking each.
 *
 * <p>Marks recorded in states of one history hold for any state that includes the newest of them
 * ({@code asOf}); a mark from another history restarts that set. A state that does not include
 * {@code asOf} (an earlier state, a new pass or batch branching from a common start) still sees,
 * position by position, each position's earliest mark that it includes (rebuilt once, see {@link
 * #rebase}). Thread-safe.
 */
final class StateMarks {

  private final BitSet marked = new BitSet();
  private AllocatedState asOf;

  /**
   * Per position, the earliest state it was marked in (null: never): the fallback for states that
   * do not include {@code asOf}, such as each new pass or batch from a common start.
   */
  private final AllocatedState[] markedIn;

  private int marks;

  StateMarks(int size) {
    this.markedIn = new AllocatedState[size];
  }

  /**
   * The first position at or after {@code from} not known to be marked in {@code state}; {@code
   * from} itself when no mark holds for the state; {@code size} or more when every remaining
   * position is marked.
   */
  synchronized int nextUnmarked(int from, AllocatedState state) {
    if (marks == 0) {
      return from;
    }
    if (asOf == null || !state.includes(asOf)) {
      rebase(state);
    }
    return marked.nextClearBit(from); // 64 positions a word
  }

  /**
   * Rebuilds the bits for a state that does not include {@code asOf} (an earlier state, a new pass
   * or batch from a common start): O(positions) once, then every later state of its history takes
   * the fast path again.
   */
  private void rebase(AllocatedState state) {
    marked.clear();
    for (int i = 0; i < markedIn.length; i++) {
      if (markedIn[i] != null && state.includes(markedIn[i])) {
        marked.set(i);
      }
    }
    asOf = state;
  }

  /** Records that the fact holds for {@code position} in {@code state}. */
  synchronized void mark(int position, AllocatedState state) {
    if (asOf == null || state.includes(asOf)) {
      asOf = state; // the newest state: includes every earlier mark's
    } else if (!asOf.includes(state)) {
      marked.clear(); // another history: the old marks say nothing about it
      asOf = state;
    }
    // else an earlier state of the same history: true there means true in asOf too
    marked.set(position);
    AllocatedState earlier = markedIn[position];
    if (earlier == null) {
      marks++;
    }
    if (earlier == null || !state.includes(earlier)) {
      markedIn[position] = state; // an earlier mark holds in more states: kept when it holds here
    }
  }
}
