package io.kdra.slicepublisher.grpc;

import io.fabric8.kubernetes.api.model.Quantity;
import io.fabric8.kubernetes.api.model.resource.v1.CapacityRequestPolicy;
import io.fabric8.kubernetes.api.model.resource.v1.CapacityRequestPolicyBuilder;
import io.fabric8.kubernetes.api.model.resource.v1.CapacityRequestPolicyRangeBuilder;
import io.fabric8.kubernetes.api.model.resource.v1.Counter;
import io.fabric8.kubernetes.api.model.resource.v1.CounterSet;
import io.fabric8.kubernetes.api.model.resource.v1.CounterSetBuilder;
import io.fabric8.kubernetes.api.model.resource.v1.DeviceAttribute;
import io.fabric8.kubernetes.api.model.resource.v1.DeviceAttributeBuilder;
import io.fabric8.kubernetes.api.model.resource.v1.DeviceBuilder;
import io.fabric8.kubernetes.api.model.resource.v1.DeviceCapacity;
import io.fabric8.kubernetes.api.model.resource.v1.DeviceCapacityBuilder;
import io.fabric8.kubernetes.api.model.resource.v1.DeviceCounterConsumption;
import io.fabric8.kubernetes.api.model.resource.v1.DeviceCounterConsumptionBuilder;
import io.kdra.core.validation.Limits;
import io.kdra.core.validation.Names;
import io.kdra.core.validation.SkipNodeOperations;
import io.kdra.inventory.v1.AttributeValue;
import io.kdra.inventory.v1.CounterConsumption;
import io.kdra.inventory.v1.Device;
import io.kdra.inventory.v1.Health;
import io.kdra.inventory.v1.InventorySnapshot;
import io.kdra.slicepublisher.domain.InventoryDevice;
import io.kdra.slicepublisher.domain.NodeInventory;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.TreeMap;

/**
 * Checks an inventory snapshot against upstream's ResourceSlice rules and converts it to the API
 * model. Every problem is reported with the device (or counter set) and field it is in, so that the
 * driver's log says what to fix. Pure; one instance per configuration.
 *
 * <p>The name and value formats and the limits are dra-core's ({@link Names}, {@link Limits}), with
 * upstream's messages. Checked here because they concern the snapshot rather than a slice: unique
 * names, counter references (sets and counters that exist), the attributes+capacity limit minus the
 * attribute slots kept for node labels (which the planner adds), and a lower-case driver name
 * (slice names are made from it). The planned slices are checked again as a whole by {@code
 * PoolSyncPlanner}.
 */
public final class SnapshotConverter {

  private final int reservedAttributes;
  private final int maxDevices;

  /**
   * @param reservedAttributes attribute slots per device kept for node-label attributes
   * @param maxDevices the most devices one snapshot may hold
   *     (kdra.slice-publisher.max-devices-per-node)
   */
  public SnapshotConverter(int reservedAttributes, int maxDevices) {
    this.reservedAttributes = reservedAttributes;
    this.maxDevices = maxDevices;
  }

  /** The most devices one snapshot may hold. */
  public int maxDevices() {
    return maxDevices;
  }

  /** The outcome: an inventory, or the problems found (never both). */
  public record Result(NodeInventory inventory, List<String> errors) {
    public boolean ok() {
      return errors.isEmpty();
    }
  }

  /** Validates and converts; {@code receivedAt} becomes the inventory's timestamp. */
  public Result convert(InventorySnapshot s, Instant receivedAt) {
    if (s.getDevicesCount() > maxDevices) {
      // before anything else: reading tens of thousands of devices is the load the cap prevents
      return new Result(
          null,
          List.of(
              "node_name \""
                  + s.getNodeName()
                  + "\": "
                  + s.getDevicesCount()
                  + " devices, at most "
                  + maxDevices
                  + " allowed per driver and node (kdra.slice-publisher.max-devices-per-node)"));
    }
    List<String> errors = new ArrayList<>();
    String driver = "driver \"" + s.getDriver() + "\"";
    report(driver, Names.driverName(s.getDriver()), errors);
    if (!s.getDriver().equals(s.getDriver().toLowerCase(Locale.ROOT))) {
      errors.add(driver + ": must be lower case (slice names are made from it)");
    }
    report(
        "node_name \"" + s.getNodeName() + "\"", Names.dns1123Subdomain(s.getNodeName()), errors);
    Map<String, Set<String>> counterSets = new HashMap<>();
    List<CounterSet> sets = new ArrayList<>();
    for (io.kdra.inventory.v1.CounterSet cs : s.getSharedCountersList()) {
      String where = "shared counter set \"" + cs.getName() + "\"";
      report(where + ": name", Names.dns1123Label(cs.getName()), errors);
      if (counterSets.put(cs.getName(), cs.getCountersMap().keySet()) != null) {
        errors.add(where + ": name is not unique");
      }
      tooMany(
          where + ": counters",
          cs.getCountersCount(),
          Limits.RESOURCE_SLICE_MAX_COUNTERS_PER_COUNTER_SET,
          errors);
      sets.add(
          new CounterSetBuilder()
              .withName(cs.getName())
              .withCounters(counters(where, cs.getCountersMap(), errors))
              .build());
    }
    List<InventoryDevice> devices = new ArrayList<>();
    Set<String> names = new HashSet<>();
    for (Device d : s.getDevicesList()) {
      String where = "device \"" + d.getName() + "\"";
      report(where + ": name", Names.deviceName(d.getName()), errors);
      if (!names.add(d.getName())) {
        errors.add(where + ": name is not unique");
      }
      devices.add(device(where, d, s.getDriver(), counterSets, errors));
    }
    Optional<NodeInventory.Discovery> discovery = discovery(s, receivedAt, errors);
    report("skip_node_operations", SkipNodeOperations.check(s.getSkipNodeOperationsList()), errors);
    if (!errors.isEmpty()) {
      return new Result(null, List.copyOf(errors));
    }
    NodeInventory inventory =
        new NodeInventory(
                s.getDriver(), s.getNodeName(), s.getSequence(), devices, sets, receivedAt)
            .withSkipNodeOperations(s.getSkipNodeOperationsList());
    return new Result(
        discovery.map(d -> inventory.withDiscovery(d.at(), d.interval())).orElse(inventory),
        List.of());
  }

  /**
   * The driver's last successful discovery by the publisher's clock: the receipt minus the age the
   * snapshot says. Empty when the driver says no age or no interval (older drivers).
   */
  private static Optional<NodeInventory.Discovery> discovery(
      InventorySnapshot s, Instant receivedAt, List<String> errors) {
    long age = s.getDiscoveryAgeMillis();
    long interval = s.getDiscoveryIntervalMillis();
    if (age < 0) {
      errors.add("discovery_age_millis: must not be negative, not " + age);
    }
    if (interval < 0) {
      errors.add("discovery_interval_millis: must not be negative, not " + interval);
    }
    if (!s.hasDiscoveryAgeMillis() || age < 0 || interval <= 0) {
      return Optional.empty();
    }
    return Optional.of(
        new NodeInventory.Discovery(receivedAt.minusMillis(age), Duration.ofMillis(interval)));
  }

  private InventoryDevice device(
      String where,
      Device d,
      String driver,
      Map<String, Set<String>> counterSets,
      List<String> errors) {
    int max = Limits.RESOURCE_SLICE_MAX_ATTRIBUTES_AND_CAPACITIES_PER_DEVICE;
    int limit = max - reservedAttributes;
    if (d.getAttributesCount() + d.getCapacityCount() > limit) {
      errors.add(
          where
              + ": attributes + capacity: "
              + (d.getAttributesCount() + d.getCapacityCount())
              + " entries, at most "
              + limit
              + " allowed ("
              + max
              + " minus "
              + reservedAttributes
              + " kept for node-label attributes)");
    }
    Map<String, DeviceAttribute> attributes = new TreeMap<>();
    d.getAttributesMap()
        .forEach(
            (key, value) -> {
              String field = where + ": attribute \"" + key + "\"";
              checkQualifiedName(field, key, errors);
              attributes.put(key, attribute(field, value, errors));
            });
    Map<String, DeviceCapacity> capacity = new TreeMap<>();
    d.getCapacityMap()
        .forEach(
            (key, value) -> {
              String field = where + ": capacity \"" + key + "\"";
              checkQualifiedName(field, key, errors);
              DeviceCapacityBuilder c =
                  new DeviceCapacityBuilder().withValue(quantity(field, value, errors));
              if (d.containsRequestPolicies(key)) {
                c.withRequestPolicy(
                    policy(field + ": request_policy", d.getRequestPoliciesOrThrow(key), errors));
              }
              capacity.put(key, c.build());
            });
    d.getRequestPoliciesMap().keySet().stream()
        .filter(k -> !d.containsCapacity(k))
        .sorted()
        .forEach(
            k -> errors.add(where + ": request_policies \"" + k + "\": no capacity of that name"));
    if (d.getRequestPoliciesCount() > 0 && !d.getAllowMultipleAllocations()) {
      errors.add(where + ": request_policies: only allowed with allow_multiple_allocations");
    }
    tooMany(
        where + ": consumes_counters",
        d.getConsumesCountersCount(),
        Limits.RESOURCE_SLICE_MAX_DEVICE_COUNTER_CONSUMPTIONS_PER_DEVICE,
        errors);
    List<DeviceCounterConsumption> consumes = new ArrayList<>();
    for (CounterConsumption c : d.getConsumesCountersList()) {
      String field = where + ": consumes_counters \"" + c.getCounterSet() + "\"";
      Set<String> known = counterSets.get(c.getCounterSet());
      if (known == null) {
        errors.add(field + ": no shared counter set of that name");
      } else {
        c.getCountersMap().keySet().stream()
            .filter(n -> !known.contains(n))
            .sorted()
            .forEach(n -> errors.add(field + ": counter \"" + n + "\" is not in the set"));
      }
      tooMany(
          field + ": counters",
          c.getCountersCount(),
          Limits.RESOURCE_SLICE_MAX_COUNTERS_PER_DEVICE_COUNTER_CONSUMPTION,
          errors);
      consumes.add(
          new DeviceCounterConsumptionBuilder()
              .withCounterSet(c.getCounterSet())
              .withCounters(counters(field, c.getCountersMap(), errors))
              .build());
    }
    var device =
        new DeviceBuilder()
            .withName(d.getName())
            .withAttributes(attributes)
            .withCapacity(capacity)
            .withConsumesCounters(consumes)
            .withAllowMultipleAllocations(d.getAllowMultipleAllocations() ? Boolean.TRUE : null)
            .build();
    return new InventoryDevice(device, d.getHealth() != Health.UNHEALTHY, d.getHealthMessage());
  }

  private static CapacityRequestPolicy policy(
      String field, io.kdra.inventory.v1.CapacityRequestPolicy p, List<String> errors) {
    CapacityRequestPolicyBuilder b = new CapacityRequestPolicyBuilder();
    if (!p.getDefault().isEmpty()) {
      b.withDefault(quantity(field + ": default", p.getDefault(), errors));
    }
    for (String v : p.getValidValuesList()) {
      b.addToValidValues(quantity(field + ": valid_values", v, errors));
    }
    if (p.hasValidRange()) {
      var r = p.getValidRange();
      CapacityRequestPolicyRangeBuilder range =
          new CapacityRequestPolicyRangeBuilder()
              .withMin(quantity(field + ": valid_range.min", r.getMin(), errors));
      if (!r.getMax().isEmpty()) {
        range.withMax(quantity(field + ": valid_range.max", r.getMax(), errors));
      }
      if (!r.getStep().isEmpty()) {
        range.withStep(quantity(field + ": valid_range.step", r.getStep(), errors));
      }
      b.withValidRange(range.build());
    }
    return b.build();
  }

  private static DeviceAttribute attribute(String field, AttributeValue v, List<String> errors) {
    DeviceAttributeBuilder b = new DeviceAttributeBuilder();
    switch (v.getValueCase()) {
      case INT -> b.withInt(v.getInt());
      case BOOL -> b.withBool(v.getBool());
      case STRING -> {
        report(field + ": string", Names.attributeString(v.getString()), errors);
        b.withString(v.getString());
      }
      case VERSION -> {
        report(
            field + ": version \"" + v.getVersion() + "\"",
            Names.versionValue(v.getVersion()),
            errors);
        b.withVersion(v.getVersion());
      }
      default -> errors.add(field + ": no value set");
    }
    return b.build();
  }

  private static Map<String, Counter> counters(
      String where, Map<String, String> in, List<String> errors) {
    Map<String, Counter> out = new TreeMap<>();
    if (in.isEmpty()) {
      errors.add(where + ": counters: at least one is required");
    }
    in.forEach(
        (name, value) -> {
          String field = where + ": counter \"" + name + "\"";
          report(field + ": name", Names.dns1123Label(name), errors);
          out.put(name, new Counter(quantity(field, value, errors)));
        });
    return out;
  }

  /** Parses with upstream's rules and stores the canonical text the API server would store. */
  private static Quantity quantity(String field, String text, List<String> errors) {
    try {
      return new Quantity(io.kdra.core.model.Quantity.parse(text).toString());
    } catch (IllegalArgumentException e) {
      errors.add(field + ": \"" + text + "\" is not a quantity");
      return new Quantity(text);
    }
  }

  /**
   * Names the part at fault: upstream's qualified-name messages do not say whether the domain or
   * the identifier is wrong.
   */
  private static void checkQualifiedName(String field, String key, List<String> errors) {
    int slash = key.indexOf('/');
    if (slash < 0 || key.indexOf('/', slash + 1) >= 0 || slash == 0 || slash == key.length() - 1) {
      report(field + ": name", Names.qualifiedName(key), errors);
      return;
    }
    report(field + ": domain", Names.driverName(key.substring(0, slash)), errors);
    report(field + ": name", Names.cIdentifier(key.substring(slash + 1)), errors);
  }

  private static void report(String field, List<String> messages, List<String> errors) {
    messages.forEach(m -> errors.add(field + ": " + m));
  }

  private static void tooMany(String field, int count, int max, List<String> errors) {
    if (count > max) {
      errors.add(field + ": " + count + " entries, at most " + max + " allowed");
    }
  }
}
