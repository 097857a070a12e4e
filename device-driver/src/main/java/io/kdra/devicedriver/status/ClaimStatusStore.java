package io.kdra.devicedriver.status;

import io.fabric8.kubernetes.api.model.resource.v1.AllocatedDeviceStatus;
import io.fabric8.kubernetes.api.model.resource.v1.ResourceClaim;
import java.util.List;
import java.util.Optional;

/** Where claims' device status is read and written: the API server, or a map in tests. */
public interface ClaimStatusStore {

  /** The claim as stored now; empty when it does not exist. */
  Optional<ResourceClaim> get(String namespace, String name);

  /**
   * Sets the claim's {@code status.devices} to {@code devices}, provided the claim is still at the
   * {@code resourceVersion} it was {@code read} at (optimistic concurrency).
   *
   * @throws Conflict when it changed since (the caller reads again and recomputes)
   */
  void writeDevices(ResourceClaim read, List<AllocatedDeviceStatus> devices) throws Conflict;

  /** The claim changed since it was read. */
  final class Conflict extends Exception {
    public Conflict(String message) {
      super(message);
    }
  }
}
