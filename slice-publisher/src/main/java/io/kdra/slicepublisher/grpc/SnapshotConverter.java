package io.kdra.slicepublisher.grpc;

import io.fabric8.kubernetes.api.model.Quantity;
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
import io.kdra.core.model.Semver;
import io.kdra.inventory.v1.AttributeValue;
import io.kdra.inventory.v1.CounterConsumption;
import io.kdra.inventory.v1.Device;
import io.kdra.inventory.v1.Health;
import io.kdra.inventory.v1.InventorySnapshot;
import io.kdra.slicepublisher.domain.InventoryDevice;
import io.kdra.slicepublisher.domain.NodeInventory;
import java.time.Instant;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.regex.Pattern;

/**
 * Checks an inventory snapshot against upstream's ResourceSlice rules and converts it to the API
 * model. Every problem is reported with the device (or counter set) and field it is in, so that
 * the driver's log says what to fix. Pure; one instance per configuration.
 *
 * <p>Own checks until dra-core's validation package arrives: names (driver, node, device,
 * counters), qualified attribute and capacity names, attribute values (one set, strings and
 * versions at most 64 characters, versions strict semver), quantities, the attributes+capacity
 * limit per device (32 minus the configured node-label attributes, which the planner adds), and
 * counter references (at most 2 consumesCounters entries, sets and counters that exist).
 */
public final class SnapshotConverter {

  static final int MAX_ATTRIBUTES_AND_CAPACITY = 32;
  static final int MAX_CONSUMES_ENTRIES = 2;
  static final int MAX_COUNTERS = 32;
  static final int MAX_VALUE_LENGTH = 64;

  private static final Pattern DNS_LABEL = Pattern.compile("[a-z0-9]([-a-z0-9]*[a-z0-9])?");
  private static final Pattern DNS_SUBDOMAIN =
      Pattern.compile("[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*");
  private static final Pattern C_IDENTIFIER = Pattern.compile("[A-Za-z_][A-Za-z0-9_]*");

  private final int reservedAttributes;

  /** @param reservedAttributes attribute slots per device kept for node-label attributes */
  public SnapshotConverter(int reservedAttributes) {
    this.reservedAttributes = reservedAttributes;
  }

  /** The outcome: an inventory, or the problems found (never both). */
  public record Result(NodeInventory inventory, List<String> errors) {
    public boolean ok() {
      return errors.isEmpty();
    }
  }

  /** Validates and converts; {@code receivedAt} becomes the inventory's timestamp. */
  public Result convert(InventorySnapshot s, Instant receivedAt) {
    List<String> errors = new ArrayList<>();
    if (!isSubdomain(s.getDriver(), 63)) {
      errors.add("driver \"" + s.getDriver() + "\": must be a lower-case DNS subdomain of at most"
          + " 63 characters");
    }
    if (!isSubdomain(s.getNodeName(), 253)) {
      errors.add("node_name \"" + s.getNodeName() + "\": must be a DNS subdomain");
    }
    Map<String, Set<String>> counterSets = new HashMap<>();
    List<CounterSet> sets = new ArrayList<>();
    for (io.kdra.inventory.v1.CounterSet cs : s.getSharedCountersList()) {
      String where = "shared counter set \"" + cs.getName() + "\"";
      if (!isLabel(cs.getName())) {
        errors.add(where + ": name must be a DNS label");
      }
      if (counterSets.put(cs.getName(), cs.getCountersMap().keySet()) != null) {
        errors.add(where + ": name is not unique");
      }
      if (cs.getCountersCount() > MAX_COUNTERS) {
        errors.add(where + ": more than " + MAX_COUNTERS + " counters");
      }
      sets.add(new CounterSetBuilder().withName(cs.getName())
          .withCounters(counters(where, cs.getCountersMap(), errors)).build());
    }
    List<InventoryDevice> devices = new ArrayList<>();
    Set<String> names = new HashSet<>();
    for (Device d : s.getDevicesList()) {
      String where = "device \"" + d.getName() + "\"";
      if (!isLabel(d.getName())) {
        errors.add(where + ": name must be a DNS label of at most 63 characters");
      }
      if (!names.add(d.getName())) {
        errors.add(where + ": name is not unique");
      }
      devices.add(device(where, d, s.getDriver(), counterSets, errors));
    }
    if (!errors.isEmpty()) {
      return new Result(null, List.copyOf(errors));
    }
    return new Result(new NodeInventory(s.getDriver(), s.getNodeName(), s.getSequence(), devices,
        sets, receivedAt), List.of());
  }

  private InventoryDevice device(String where, Device d, String driver,
      Map<String, Set<String>> counterSets, List<String> errors) {
    int limit = MAX_ATTRIBUTES_AND_CAPACITY - reservedAttributes;
    if (d.getAttributesCount() + d.getCapacityCount() > limit) {
      errors.add(where + ": attributes + capacity: " + (d.getAttributesCount()
          + d.getCapacityCount()) + " entries, at most " + limit + " allowed ("
          + MAX_ATTRIBUTES_AND_CAPACITY + " minus " + reservedAttributes
          + " kept for node-label attributes)");
    }
    Map<String, DeviceAttribute> attributes = new TreeMap<>();
    d.getAttributesMap().forEach((key, value) -> {
      String field = where + ": attribute \"" + key + "\"";
      checkQualifiedName(field, key, errors);
      attributes.put(key, attribute(field, value, errors));
    });
    Map<String, DeviceCapacity> capacity = new TreeMap<>();
    d.getCapacityMap().forEach((key, value) -> {
      String field = where + ": capacity \"" + key + "\"";
      checkQualifiedName(field, key, errors);
      capacity.put(key, new DeviceCapacityBuilder().withValue(quantity(field, value, errors))
          .build());
    });
    if (d.getConsumesCountersCount() > MAX_CONSUMES_ENTRIES) {
      errors.add(where + ": consumes_counters: more than " + MAX_CONSUMES_ENTRIES + " entries");
    }
    List<DeviceCounterConsumption> consumes = new ArrayList<>();
    for (CounterConsumption c : d.getConsumesCountersList()) {
      String field = where + ": consumes_counters \"" + c.getCounterSet() + "\"";
      Set<String> known = counterSets.get(c.getCounterSet());
      if (known == null) {
        errors.add(field + ": no shared counter set of that name");
      } else {
        c.getCountersMap().keySet().stream().filter(n -> !known.contains(n)).sorted()
            .forEach(n -> errors.add(field + ": counter \"" + n + "\" is not in the set"));
      }
      if (c.getCountersCount() > MAX_COUNTERS) {
        errors.add(field + ": more than " + MAX_COUNTERS + " counters");
      }
      consumes.add(new DeviceCounterConsumptionBuilder().withCounterSet(c.getCounterSet())
          .withCounters(counters(field, c.getCountersMap(), errors)).build());
    }
    var device = new DeviceBuilder().withName(d.getName()).withAttributes(attributes)
        .withCapacity(capacity).withConsumesCounters(consumes)
        .withAllowMultipleAllocations(d.getAllowMultipleAllocations() ? Boolean.TRUE : null)
        .build();
    return new InventoryDevice(device, d.getHealth() != Health.UNHEALTHY, d.getHealthMessage());
  }

  private static DeviceAttribute attribute(String field, AttributeValue v, List<String> errors) {
    DeviceAttributeBuilder b = new DeviceAttributeBuilder();
    switch (v.getValueCase()) {
      case INT -> b.withInt(v.getInt());
      case BOOL -> b.withBool(v.getBool());
      case STRING -> {
        if (v.getString().length() > MAX_VALUE_LENGTH) {
          errors.add(field + ": string longer than " + MAX_VALUE_LENGTH + " characters");
        }
        b.withString(v.getString());
      }
      case VERSION -> {
        if (v.getVersion().length() > MAX_VALUE_LENGTH || !Semver.isSemver(v.getVersion(), false)) {
          errors.add(field + ": version \"" + v.getVersion()
              + "\" is not a strict semantic version of at most 64 characters");
        }
        b.withVersion(v.getVersion());
      }
      default -> errors.add(field + ": no value set");
    }
    return b.build();
  }

  private static Map<String, Counter> counters(String where, Map<String, String> in,
      List<String> errors) {
    Map<String, Counter> out = new TreeMap<>();
    in.forEach((name, value) -> {
      String field = where + ": counter \"" + name + "\"";
      if (!isLabel(name)) {
        errors.add(field + ": name must be a DNS label");
      }
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

  private static void checkQualifiedName(String field, String key, List<String> errors) {
    int slash = key.indexOf('/');
    String domain = slash < 0 ? null : key.substring(0, slash);
    String id = key.substring(slash + 1);
    if (domain != null && !isSubdomain(domain, 63)) {
      errors.add(field + ": domain must be a DNS subdomain of at most 63 characters");
    }
    if (id.length() > 32 || !C_IDENTIFIER.matcher(id).matches()) {
      errors.add(field + ": name must be a C identifier of at most 32 characters");
    }
  }

  private static boolean isLabel(String s) {
    return s.length() <= 63 && DNS_LABEL.matcher(s).matches();
  }

  private static boolean isSubdomain(String s, int max) {
    return !s.isEmpty() && s.length() <= max && DNS_SUBDOMAIN.matcher(s).matches();
  }
}
