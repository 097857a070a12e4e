package io.kdra.devicedriver.publisher;

import io.kdra.core.model.AttributeValue;
import io.kdra.core.model.Quantity;
import io.kdra.devicedriver.discovery.CapacityPolicy;
import io.kdra.devicedriver.discovery.CounterSet;
import io.kdra.devicedriver.discovery.Inventory;
import io.kdra.devicedriver.discovery.NodeDevice;
import io.kdra.inventory.v1.CapacityRequestPolicy;
import io.kdra.inventory.v1.CapacityRequestPolicyRange;
import io.kdra.inventory.v1.CounterConsumption;
import io.kdra.inventory.v1.Device;
import io.kdra.inventory.v1.Health;
import io.kdra.inventory.v1.InventorySnapshot;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.TreeMap;

/** Maps the domain {@link Inventory} to the inventory API's snapshot. Pure. */
public final class SnapshotMapper {
  private SnapshotMapper() {}

  public static InventorySnapshot snapshot(
      String driver, String node, long sequence, Inventory inventory) {
    InventorySnapshot.Builder s =
        InventorySnapshot.newBuilder().setDriver(driver).setNodeName(node).setSequence(sequence);
    for (NodeDevice d : inventory.devices()) {
      Device.Builder b =
          Device.newBuilder()
              .setName(d.name())
              .setHealth(
                  d.health() == NodeDevice.Health.HEALTHY ? Health.HEALTHY : Health.UNHEALTHY)
              .setHealthMessage(d.healthMessage());
      d.attributes().forEach((k, v) -> b.putAttributes(k, attribute(v)));
      b.putAllCapacity(quantities(d.capacity()));
      for (NodeDevice.CounterConsumption c : d.consumesCounters()) {
        b.addConsumesCounters(
            CounterConsumption.newBuilder()
                .setCounterSet(c.counterSet())
                .putAllCounters(quantities(c.counters())));
      }
      b.setAllowMultipleAllocations(d.allowMultipleAllocations());
      d.requestPolicies().forEach((k, p) -> b.putRequestPolicies(k, policy(p)));
      s.addDevices(b);
    }
    for (CounterSet c : inventory.sharedCounters()) {
      s.addSharedCounters(
          io.kdra.inventory.v1.CounterSet.newBuilder()
              .setName(c.name())
              .putAllCounters(quantities(c.counters())));
    }
    return s.build();
  }

  /**
   * The snapshot with its discovery: the age of the last successful pass (none before the first;
   * never negative, should the clock step back) and the interval (none when zero).
   */
  public static InventorySnapshot withDiscovery(
      InventorySnapshot snapshot, Optional<Duration> age, Duration interval) {
    if (age.isEmpty() && interval.isZero()) {
      return snapshot;
    }
    InventorySnapshot.Builder b =
        snapshot.toBuilder().setDiscoveryIntervalMillis(interval.toMillis());
    age.ifPresent(a -> b.setDiscoveryAgeMillis(Math.max(0, a.toMillis())));
    return b.build();
  }

  /**
   * The snapshot saying that this node's devices need none of {@code operations} (the slices'
   * {@code skipNodeOperations}); unchanged when there are none.
   */
  public static InventorySnapshot withSkipNodeOperations(
      InventorySnapshot snapshot, List<String> operations) {
    return operations.isEmpty()
        ? snapshot
        : snapshot.toBuilder().addAllSkipNodeOperations(operations).build();
  }

  static CapacityRequestPolicy policy(CapacityPolicy p) {
    var b = CapacityRequestPolicy.newBuilder().setDefault(p.defaultValue().toString());
    p.validValues().forEach(v -> b.addValidValues(v.toString()));
    p.min()
        .ifPresent(
            min -> {
              var r = CapacityRequestPolicyRange.newBuilder().setMin(min.toString());
              p.max().ifPresent(max -> r.setMax(max.toString()));
              p.step().ifPresent(step -> r.setStep(step.toString()));
              b.setValidRange(r);
            });
    return b.build();
  }

  static io.kdra.inventory.v1.AttributeValue attribute(AttributeValue v) {
    var b = io.kdra.inventory.v1.AttributeValue.newBuilder();
    if (v instanceof AttributeValue.IntValue i) {
      b.setInt(i.value());
    } else if (v instanceof AttributeValue.BoolValue x) {
      b.setBool(x.value());
    } else if (v instanceof AttributeValue.StringValue x) {
      b.setString(x.value());
    } else if (v instanceof AttributeValue.VersionValue x) {
      b.setVersion(x.value().toString());
    }
    return b.build();
  }

  private static Map<String, String> quantities(Map<String, Quantity> q) {
    Map<String, String> out = new TreeMap<>();
    q.forEach((k, v) -> out.put(k, v.toString()));
    return out;
  }
}
