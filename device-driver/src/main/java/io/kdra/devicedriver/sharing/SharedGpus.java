package io.kdra.devicedriver.sharing;

import io.kdra.core.model.AttributeValue;
import io.kdra.core.model.Quantity;
import io.kdra.devicedriver.discovery.CapacityPolicy;
import io.kdra.devicedriver.discovery.Inventory;
import io.kdra.devicedriver.discovery.NodeDevice;
import java.math.BigDecimal;
import java.math.RoundingMode;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;

/**
 * Turns the whole GPUs of an inventory into shared devices (consumable capacity, KEP-5075), as the
 * node's {@link SharingSettings} say: {@code allowMultipleAllocations}, a {@code shares} capacity
 * of {@link SharingSettings#shares()} (one per allocation unless more are requested), and request
 * policies so that the allocator, not the driver, accounts for what each claim takes. An attribute
 * {@code sharing} ({@code TimeSlicing} or {@code MPS}) lets DeviceClasses select shared GPUs. Pure.
 *
 * <p>Left alone: devices that are not {@code type: gpu} (MIG partitions, TPUs), GPUs with MIG
 * enabled (they are shared by partitioning instead), and devices that consume counters.
 */
public final class SharedGpus {
  /** The capacity that counts shares of a GPU. */
  public static final String SHARES = "shares";

  /** The attribute naming a shared GPU's strategy. */
  public static final String SHARING_ATTRIBUTE = "sharing";

  private SharedGpus() {}

  public static Inventory apply(Inventory inventory, SharingSettings settings) {
    if (!settings.shared()) {
      return inventory;
    }
    List<NodeDevice> out = new ArrayList<>();
    for (NodeDevice d : inventory.devices()) {
      out.add(shareable(d) ? share(d, settings) : d);
    }
    return new Inventory(out, inventory.sharedCounters(), inventory.commonDeviceNodes());
  }

  /** Whether this device is a whole GPU that sharing applies to. */
  static boolean shareable(NodeDevice d) {
    return new AttributeValue.StringValue("gpu").equals(d.attributes().get("type"))
        && !new AttributeValue.BoolValue(true).equals(d.attributes().get("migEnabled"))
        && d.consumesCounters().isEmpty();
  }

  private static NodeDevice share(NodeDevice d, SharingSettings s) {
    Map<String, Quantity> capacity = new LinkedHashMap<>(d.capacity());
    Quantity one = Quantity.of(1);
    capacity.put(SHARES, Quantity.of(s.shares()));
    Map<String, CapacityPolicy> policies = new LinkedHashMap<>();
    policies.put(
        SHARES,
        new CapacityPolicy(
            one,
            List.of(),
            Optional.of(one),
            Optional.of(Quantity.of(s.shares())),
            Optional.of(one)));
    Quantity memory = d.capacity().get("memory");
    if (memory != null && memory.compareTo(s.memoryStep()) >= 0) {
      policies.put(
          "memory", CapacityPolicy.range(defaultMemory(memory, s), s.memoryStep(), s.memoryStep()));
    }
    Map<String, AttributeValue> attributes = new LinkedHashMap<>(d.attributes());
    attributes.put(
        SHARING_ATTRIBUTE,
        new AttributeValue.StringValue(
            s.strategy() == SharingSettings.Strategy.MPS ? "MPS" : "TimeSlicing"));
    NodeDevice withAttribute =
        new NodeDevice(
            d.name(),
            attributes,
            d.capacity(),
            d.consumesCounters(),
            d.health(),
            d.healthMessage(),
            d.deviceNodes(),
            d.env());
    return withAttribute.shared(capacity, policies);
  }

  /**
   * A request that names no memory takes an equal share: memory / shares, rounded down to a
   * multiple of the step (the API requires default = min + n * step), at least one step.
   */
  static Quantity defaultMemory(Quantity memory, SharingSettings s) {
    BigDecimal step = s.memoryStep().value();
    BigDecimal perShare =
        memory.value().divide(BigDecimal.valueOf(s.shares()), 0, RoundingMode.FLOOR);
    BigDecimal steps = perShare.divide(step, 0, RoundingMode.FLOOR).max(BigDecimal.ONE);
    return Quantity.of(steps.multiply(step), s.memoryStep().format());
  }
}
