package io.kdra.devicedriver.status;

import io.fabric8.kubernetes.api.model.resource.v1.AllocatedDeviceStatus;
import io.fabric8.kubernetes.api.model.resource.v1.ResourceClaim;
import io.kdra.devicedriver.plugin.ClaimRef;
import io.kdra.devicedriver.plugin.PreparedDevice;
import java.time.Clock;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.function.Function;

/**
 * Keeps this driver's entries in claims' {@code status.devices} in step with what it prepared on
 * this node ({@link DeviceStatuses} decides, {@link ClaimStatusStore} reads and writes). Each write
 * carries the read {@code resourceVersion}; a conflict means someone wrote in between (the
 * claim-controller reserving the claim for another pod), so the claim is read again and the change
 * recomputed, a few times. Thread-safe (no state of its own).
 */
public final class DeviceStatusReporter {
  private final ClaimStatusStore store;
  private final String driver;
  private final String pool;
  private final Clock clock;
  private final int attempts;

  /**
   * @param pool this node's pool name
   * @param attempts how many read-compute-write rounds before a conflict is given up
   */
  public DeviceStatusReporter(
      ClaimStatusStore store, String driver, String pool, Clock clock, int attempts) {
    this.store = store;
    this.driver = driver;
    this.pool = pool;
    this.clock = clock;
    this.attempts = Math.max(1, attempts);
  }

  /** Reports the claim's devices as prepared. */
  public void prepared(ClaimRef ref, List<PreparedDevice> devices) throws StatusWriteException {
    Map<String, List<String>> ids = new LinkedHashMap<>();
    devices.forEach(d -> ids.putIfAbsent(d.deviceName(), d.cdiDeviceIds()));
    update(ref, c -> DeviceStatuses.afterPrepare(c, driver, pool, ids, clock.instant()));
  }

  /** Removes the claim's entries of this driver on this node. */
  public void unprepared(ClaimRef ref) throws StatusWriteException {
    update(ref, c -> DeviceStatuses.afterUnprepare(c, driver, pool));
  }

  private void update(ClaimRef ref, Function<ResourceClaim, List<AllocatedDeviceStatus>> change)
      throws StatusWriteException {
    for (int attempt = 1; attempt <= attempts; attempt++) {
      Optional<ResourceClaim> read = store.get(ref.namespace(), ref.name());
      if (read.isEmpty() || !sameClaim(read.get(), ref) || !allocated(read.get())) {
        // gone, re-created under the name, or deallocated: the API server dropped the entries of a
        // deallocated claim itself, and refuses device status on an unallocated one
        return;
      }
      List<AllocatedDeviceStatus> next = change.apply(read.get());
      if (next.equals(DeviceStatuses.current(read.get()))) {
        return;
      }
      try {
        store.writeDevices(read.get(), next);
        return;
      } catch (ClaimStatusStore.Conflict e) {
        if (attempt == attempts) {
          throw new StatusWriteException(
              "status.devices of claim " + ref + " still conflicted after " + attempts + " tries",
              e);
        }
      }
    }
  }

  private static boolean sameClaim(ResourceClaim claim, ClaimRef ref) {
    return claim.getMetadata() != null && ref.uid().equals(claim.getMetadata().getUid());
  }

  private static boolean allocated(ResourceClaim claim) {
    return claim.getStatus() != null && claim.getStatus().getAllocation() != null;
  }

  /** The status could not be written; the message names the claim. */
  public static final class StatusWriteException extends Exception {
    public StatusWriteException(String message, Throwable cause) {
      super(message, cause);
    }
  }
}
