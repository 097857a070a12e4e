package io.kdra.devicedriver.status;

import io.fabric8.kubernetes.api.model.Condition;
import io.fabric8.kubernetes.api.model.resource.v1.AllocatedDeviceStatus;
import io.fabric8.kubernetes.api.model.resource.v1.DeviceRequestAllocationResult;
import io.fabric8.kubernetes.api.model.resource.v1.ResourceClaim;
import io.fabric8.kubernetes.api.model.runtime.RawExtension;
import java.time.Instant;
import java.time.temporal.ChronoUnit;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;

/**
 * What a claim's {@code status.devices} (KEP-4817) becomes when this driver prepared or unprepared
 * it on this node. Pure: the claim as read in, the whole new list out; the caller writes it only
 * when it differs from the list read, so a repeated prepare writes nothing.
 *
 * <p>Only this driver's entries of this node's pool are touched; other drivers' (and other nodes')
 * stay as read, object for object, because the API server authorises each changed driver's entries
 * separately ({@code resourceclaims/driver}) and this driver may change only its own.
 *
 * <p>An entry is keyed as the API keys it: driver, pool, device and share ID (one entry per share
 * of a shared device). A prepared device's entry has one condition, {@code Ready=True} (reason
 * {@code Prepared}), whose transition time stays as read while it holds, and a small JSON object in
 * {@code data}: the node and the CDI device ids its containers get. Data holds strings only, so
 * that another writer's read-modify-write of the status sends it back byte for byte.
 */
final class DeviceStatuses {
  static final String READY = "Ready";
  static final String PREPARED = "Prepared";

  private DeviceStatuses() {}

  /**
   * @param cdiDeviceIds per device name, the CDI device ids the kubelet got for it
   * @param now the transition time of a condition that is new or changed
   */
  static List<AllocatedDeviceStatus> afterPrepare(
      ResourceClaim claim,
      String driver,
      String pool,
      Map<String, List<String>> cdiDeviceIds,
      Instant now) {
    Map<Key, AllocatedDeviceStatus> read = new LinkedHashMap<>();
    List<AllocatedDeviceStatus> out = new ArrayList<>();
    for (AllocatedDeviceStatus s : current(claim)) {
      if (ours(s, driver, pool)) {
        read.put(Key.of(s), s);
      } else {
        out.add(s);
      }
    }
    Long generation = claim.getMetadata() == null ? null : claim.getMetadata().getGeneration();
    for (DeviceRequestAllocationResult r : results(claim)) {
      if (!driver.equals(r.getDriver()) || !pool.equals(r.getPool())) {
        continue;
      }
      Key key = new Key(driver, pool, r.getDevice(), r.getShareID());
      if (out.stream().anyMatch(s -> Key.of(s).equals(key))) {
        continue; // a device the claim got twice without shares: one entry
      }
      AllocatedDeviceStatus before = read.get(key);
      AllocatedDeviceStatus s = new AllocatedDeviceStatus();
      s.setDriver(driver);
      s.setPool(pool);
      s.setDevice(r.getDevice());
      s.setShareID(r.getShareID());
      s.setConditions(new ArrayList<>(List.of(ready(before, pool, generation, now))));
      Map<String, Object> data = new LinkedHashMap<>();
      data.put("node", pool);
      data.put("cdiDeviceIDs", List.copyOf(cdiDeviceIds.getOrDefault(r.getDevice(), List.of())));
      // typed as a GET reads it, so that an unchanged entry compares equal
      s.setData(new RawExtension(data));
      if (before != null) {
        // what this driver does not set (network data) stays as it was
        s.setNetworkData(before.getNetworkData());
      }
      out.add(s);
    }
    return out;
  }

  /** The list without this driver's entries of this node's pool. */
  static List<AllocatedDeviceStatus> afterUnprepare(
      ResourceClaim claim, String driver, String pool) {
    return current(claim).stream().filter(s -> !ours(s, driver, pool)).toList();
  }

  /** The status.devices as read; empty when unset. */
  static List<AllocatedDeviceStatus> current(ResourceClaim claim) {
    if (claim.getStatus() == null || claim.getStatus().getDevices() == null) {
      return List.of();
    }
    return claim.getStatus().getDevices();
  }

  private static Condition ready(
      AllocatedDeviceStatus before, String pool, Long generation, Instant now) {
    Condition c = new Condition();
    c.setType(READY);
    c.setStatus("True");
    c.setReason(PREPARED);
    c.setMessage("prepared on node " + pool);
    c.setObservedGeneration(generation);
    Condition was =
        before == null || before.getConditions() == null
            ? null
            : before.getConditions().stream()
                .filter(x -> READY.equals(x.getType()))
                .findFirst()
                .orElse(null);
    c.setLastTransitionTime(
        was != null && "True".equals(was.getStatus()) && was.getLastTransitionTime() != null
            ? was.getLastTransitionTime()
            : now.truncatedTo(ChronoUnit.SECONDS).toString());
    return c;
  }

  private static boolean ours(AllocatedDeviceStatus s, String driver, String pool) {
    return driver.equals(s.getDriver()) && pool.equals(s.getPool());
  }

  private static List<DeviceRequestAllocationResult> results(ResourceClaim claim) {
    if (claim.getStatus() == null
        || claim.getStatus().getAllocation() == null
        || claim.getStatus().getAllocation().getDevices() == null
        || claim.getStatus().getAllocation().getDevices().getResults() == null) {
      return List.of();
    }
    return claim.getStatus().getAllocation().getDevices().getResults();
  }

  private record Key(String driver, String pool, String device, String shareId) {
    static Key of(AllocatedDeviceStatus s) {
      return new Key(s.getDriver(), s.getPool(), s.getDevice(), s.getShareID());
    }

    Key {
      Objects.requireNonNull(driver);
    }
  }
}
