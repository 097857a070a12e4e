package io.kdra.core.alloc;

import java.util.List;
import java.util.function.Predicate;

/**
 * The devices of the whole cluster that one set of class and request selectors matches, in pool,
 * slice and device order, and which of them are known to be allocated ({@link StateMarks}: a device
 * allocated in a state is allocated in every state that includes it). Answers "does the cluster
 * have {@code n} free devices for this alternative?" for the early stop of {@code firstAvailable}
 * scoring ({@link Allocator#bestReachableScore}) by walking only the matching devices and jumping
 * over those found allocated before, instead of evaluating the selectors on, and looking up, every
 * device of the cluster for each pod. Which devices match depends only on the inventory and the
 * selectors, so {@link DeviceInventory} keeps one per selector set. Thread-safe.
 */
final class MatchingDevices {

  private final CandidateDevice[] devices;
  private final StateMarks allocated;

  MatchingDevices(List<CandidateDevice> devices) {
    this.devices = devices.toArray(new CandidateDevice[0]);
    this.allocated = new StateMarks(this.devices.length);
  }

  /** How many devices the selectors match, free or not. */
  int size() {
    return devices.length;
  }

  /**
   * Whether at least {@code needed} of the devices are free in {@code state} (not allocated, or
   * allowing multiple allocations) and pass {@code usable}; marks those found allocated.
   */
  boolean enoughFree(AllocatedState state, int needed, Predicate<CandidateDevice> usable) {
    int found = 0;
    for (int i = allocated.nextUnmarked(0, state);
        i < devices.length;
        i = allocated.nextUnmarked(i + 1, state)) {
      CandidateDevice d = devices[i];
      if (!d.allowMultipleAllocations() && state.isAllocated(d.id())) {
        allocated.mark(i, state);
        continue;
      }
      if (usable.test(d) && ++found >= needed) {
        return true;
      }
    }
    return false;
  }
}
