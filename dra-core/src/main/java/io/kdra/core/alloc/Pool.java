package io.kdra.core.alloc;

import io.kdra.core.model.Quantity;
import java.util.List;
import java.util.Map;

/**
 * A resource pool as seen from one node (or cluster-wide for explanations): its newest generation's
 * slices, whether it is usable, and its shared counters.
 *
 * @param driver the driver
 * @param name the pool name
 * @param incomplete fewer slices of the newest generation than {@code resourceSliceCount}
 * @param invalidReason why the pool is invalid (duplicate device, dangling counter), or null
 * @param slicesPresent slices of the newest generation that exist
 * @param sliceCount the pool's {@code resourceSliceCount}
 * @param slices device slices visible from the node, sorted by name
 * @param otherSlices device slices of the pool not visible from the node (they still consume shared
 *     counters)
 * @param counterSets shared counters by counter set, then counter name
 */
record Pool(
    String driver,
    String name,
    boolean incomplete,
    String invalidReason,
    int slicesPresent,
    long sliceCount,
    List<SliceInfo> slices,
    List<SliceInfo> otherSlices,
    Map<String, Map<String, Quantity>> counterSets,
    Exhaustion exhaustion) {

  /**
   * Remembers the newest allocated state in which every device of the pool (as seen from the node)
   * was exclusively allocated. Later states of the same history include it, so a search for a
   * request without admin access can skip the pool in O(1): the common case of first-fit over many
   * full nodes. Thread-safe (one volatile reference).
   */
  static final class Exhaustion {
    private volatile AllocatedState fullIn;

    boolean isFull(AllocatedState state) {
      return state.includes(fullIn);
    }

    void markFull(AllocatedState state) {
      fullIn = state;
    }
  }

  boolean invalid() {
    return invalidReason != null;
  }

  boolean usable() {
    return !incomplete && invalidReason == null;
  }

  /** "driver/pool", the pool's identity in messages. */
  String id() {
    return driver + "/" + name;
  }

  boolean hasBindingConditions() {
    for (SliceInfo s : slices) {
      for (CandidateDevice d : s.devices()) {
        if (d.hasBindingConditions()) {
          return true;
        }
      }
    }
    return false;
  }
}
