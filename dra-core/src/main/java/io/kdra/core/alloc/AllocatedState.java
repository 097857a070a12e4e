package io.kdra.core.alloc;

import io.fabric8.kubernetes.api.model.resource.v1.AllocationResult;
import io.fabric8.kubernetes.api.model.resource.v1.DeviceRequestAllocationResult;
import io.fabric8.kubernetes.api.model.resource.v1.ResourceClaim;
import io.kdra.core.model.DeviceId;
import io.kdra.core.model.Quantity;
import java.util.Collection;
import java.util.HashMap;
import java.util.HashSet;
import java.util.Map;
import java.util.Set;

/**
 * What existing allocations already hold, as upstream's {@code AllocatedState}: devices allocated
 * exclusively, devices allocated as shares ({@code shareID} set, consumable capacity), and the
 * capacity those shares consume. Results with {@code adminAccess: true} hold nothing, because
 * admin access never blocks other claims. Immutable; {@link #plus} returns a new state.
 */
public final class AllocatedState {

  private static final AllocatedState EMPTY = new AllocatedState(Set.of(), Set.of(), Map.of());

  private final Set<DeviceId> devices;
  private final Set<DeviceId> sharedDevices;
  private final Map<DeviceId, Map<String, Quantity>> consumedCapacity;

  private AllocatedState(Set<DeviceId> devices, Set<DeviceId> sharedDevices,
      Map<DeviceId, Map<String, Quantity>> consumedCapacity) {
    this.devices = devices;
    this.sharedDevices = sharedDevices;
    this.consumedCapacity = consumedCapacity;
  }

  public static AllocatedState empty() {
    return EMPTY;
  }

  /** The state held by the allocations of these claims; claims without allocation add nothing. */
  public static AllocatedState fromClaims(Collection<ResourceClaim> claims) {
    AllocatedState state = EMPTY;
    for (ResourceClaim claim : claims) {
      if (claim.getStatus() != null && claim.getStatus().getAllocation() != null) {
        state = state.plus(claim.getStatus().getAllocation());
      }
    }
    return state;
  }

  /** This state plus what {@code allocation} holds. */
  public AllocatedState plus(AllocationResult allocation) {
    if (allocation == null || allocation.getDevices() == null
        || allocation.getDevices().getResults() == null) {
      return this;
    }
    Set<DeviceId> newDevices = new HashSet<>(devices);
    Set<DeviceId> newShared = new HashSet<>(sharedDevices);
    Map<DeviceId, Map<String, Quantity>> newCapacity = new HashMap<>(consumedCapacity);
    for (DeviceRequestAllocationResult r : allocation.getDevices().getResults()) {
      if (Boolean.TRUE.equals(r.getAdminAccess())) {
        continue;
      }
      DeviceId id = new DeviceId(r.getDriver(), r.getPool(), r.getDevice());
      if (r.getShareID() == null || r.getShareID().isEmpty()) {
        newDevices.add(id);
        continue;
      }
      newShared.add(id);
      Map<String, Quantity> sum = new HashMap<>(newCapacity.getOrDefault(id, Map.of()));
      if (r.getConsumedCapacity() != null) {
        r.getConsumedCapacity().forEach((name, q) -> sum.merge(name, Quantities.of(q), Quantity::add));
      }
      newCapacity.put(id, Map.copyOf(sum));
    }
    return new AllocatedState(Set.copyOf(newDevices), Set.copyOf(newShared),
        Map.copyOf(newCapacity));
  }

  /** Allocated exclusively: unusable except through admin access. */
  public boolean isAllocated(DeviceId id) {
    return devices.contains(id);
  }

  /** Allocated exclusively or as a share: counts against shared counters. */
  public boolean holdsCounters(DeviceId id) {
    return devices.contains(id) || sharedDevices.contains(id);
  }

  /** Whether any share of this device is allocated. */
  public boolean isShared(DeviceId id) {
    return consumedCapacity.containsKey(id) || sharedDevices.contains(id);
  }

  /** Capacity consumed by existing shares of the device, by capacity name; empty when none. */
  public Map<String, Quantity> consumedCapacity(DeviceId id) {
    return consumedCapacity.getOrDefault(id, Map.of());
  }

  /** The exclusively allocated devices. */
  public Set<DeviceId> devices() {
    return devices;
  }
}
