package io.kdra.devicedriver.prepare;

import io.kdra.devicedriver.discovery.Inventory;
import java.util.ArrayList;
import java.util.Collection;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.function.Supplier;

/**
 * The devices of the claims being prepared right now, beside the checkpoint's: the atomic half of
 * the {@link DeviceFence}. A prepare reserves its claim's devices before any setup and releases
 * them when it ends, after its checkpoint entry is written (from then on the checkpoint holds
 * them), so two prepares racing for one device never both pass the fence. Only the check and the
 * bookkeeping run under the lock; prepares themselves stay concurrent. Thread-safe.
 */
final class DeviceReservations {
  private final Map<String, DeviceFence.Holder> inFlight = new HashMap<>();

  /**
   * Reserves the claim's devices unless another claim holds them.
   *
   * @param prepared the checkpointed claims, read under this lock: an entry written and released
   *     concurrently is seen in one place or the other
   * @return why not; empty when reserved (release it with {@link #release})
   */
  synchronized Optional<String> reserve(
      DeviceFence.Holder claim, Supplier<Collection<PreparedClaim>> prepared, Inventory inventory) {
    List<DeviceFence.Holder> others = new ArrayList<>(inFlight.values());
    // only claims on contested devices: reading a claim's holdings parses its spec
    Set<String> contested = DeviceFence.contested(claim.devices(), inventory);
    prepared.get().stream()
        .filter(c -> c.devices().stream().anyMatch(d -> contested.contains(d.deviceName())))
        .forEach(c -> others.add(DeviceFence.Holder.of(c)));
    Optional<String> conflict =
        DeviceFence.conflict(claim.claim().uid(), claim.devices(), others, inventory);
    if (conflict.isEmpty()) {
      inFlight.put(claim.claim().uid(), claim);
    }
    return conflict;
  }

  /** Ends the claim's reservation (its prepare has ended, checkpointed or not). */
  synchronized void release(String uid) {
    inFlight.remove(uid);
  }
}
