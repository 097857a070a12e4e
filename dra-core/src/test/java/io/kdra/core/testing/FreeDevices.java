package io.kdra.core.testing;

import io.fabric8.kubernetes.api.model.Quantity;
import io.fabric8.kubernetes.api.model.resource.v1.Device;
import io.fabric8.kubernetes.api.model.resource.v1.DeviceRequestAllocationResult;
import java.math.BigDecimal;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.IdentityHashMap;
import java.util.List;
import java.util.Map;

/**
 * The devices that claims allocated before the run may take, in generation order, with what is left
 * of their shared counters and shares. Pure bookkeeping: it draws nothing.
 */
final class FreeDevices {

  /** A device of a current, complete pool, with what an earlier allocation of it needs. */
  record Placed(String driver, String pool, String node, Device device, String counterKey) {}

  private final List<Placed> placed = new ArrayList<>();

  private final Map<String, BigDecimal> counterLeft = new HashMap<>();

  /** Shares of each shareable device taken before the run (each takes 8Gi of its 24Gi). */
  private final Map<Device, Integer> shares = new IdentityHashMap<>();

  private int shareIds;

  void add(Placed p) {
    placed.add(p);
  }

  /** A counter set of a node's pool, with all of its amount free. */
  void counter(String key, BigDecimal amount) {
    counterLeft.put(key, amount);
  }

  boolean isEmpty() {
    return placed.isEmpty();
  }

  int size() {
    return placed.size();
  }

  Placed get(int index) {
    return placed.get(index);
  }

  /**
   * Takes {@code p}, as request {@code req}: a share of a shareable device (which stays free until
   * its third share), or the whole device and its counters. Null when its counters are spent (the
   * device is still no longer free).
   */
  DeviceRequestAllocationResult take(Placed p) {
    DeviceRequestAllocationResult res = new DeviceRequestAllocationResult();
    res.setRequest("req");
    res.setDriver(p.driver());
    res.setPool(p.pool());
    res.setDevice(p.device().getName());
    if (Boolean.TRUE.equals(p.device().getAllowMultipleAllocations())) {
      if (shares.merge(p.device(), 1, Integer::sum) >= 3) {
        placed.remove(p);
      }
      res.setShareID(String.format("00000000-0000-4000-8000-%012d", ++shareIds));
      res.setConsumedCapacity(Map.of("memory", new Quantity("8Gi")));
    } else {
      placed.remove(p);
      if (p.counterKey() != null) {
        BigDecimal need =
            new BigDecimal(
                Long.parseLong(
                    p.device().getName().equals("part-full") ? "85899345920" : "42949672960"));
        BigDecimal left = counterLeft.get(p.counterKey());
        if (left.compareTo(need) < 0) {
          return null;
        }
        counterLeft.put(p.counterKey(), left.subtract(need));
      }
    }
    return res;
  }
}
