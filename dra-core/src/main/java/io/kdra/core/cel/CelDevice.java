package io.kdra.core.cel;

import io.fabric8.kubernetes.api.model.resource.v1.Device;
import io.fabric8.kubernetes.api.model.resource.v1.DeviceAttribute;
import io.fabric8.kubernetes.api.model.resource.v1.DeviceCapacity;
import io.kdra.core.cel.golang.GoQuantity;
import io.kdra.core.cel.k8slib.DeviceFields;
import io.kdra.core.model.AttributeValue;
import io.kdra.core.model.QualifiedName;
import io.kdra.core.model.Quantity;
import java.util.HashMap;
import java.util.Map;
import java.util.Optional;

/**
 * One device as a CEL selector sees it, the {@code device} variable of upstream's DRA environment:
 * {@code driver}, {@code attributes[domain][id]} (int, bool, string or Semver), {@code
 * capacity[domain][id]} (GoQuantity) and {@code allowMultipleAllocations}. Keys without a domain
 * belong to the driver's domain. Built once per device and then evaluated against any number of
 * selectors without further allocation; immutable and thread-safe.
 */
public final class CelDevice {

  private final String driver;
  private final Map<String, Object> fields;
  private final Optional<Object> resolved;
  private final boolean hasCapacity;

  private CelDevice(String driver, Map<String, Object> fields, boolean hasCapacity) {
    this.driver = driver;
    this.fields = fields;
    this.hasCapacity = hasCapacity;
    this.resolved = Optional.of(fields);
  }

  /**
   * Converts a device of a ResourceSlice.
   *
   * @throws IllegalArgumentException naming the attribute or capacity that is malformed
   */
  public static CelDevice of(String driver, Device device) {
    Map<QualifiedName, AttributeValue> attributes = new HashMap<>();
    if (device.getAttributes() != null) {
      for (Map.Entry<String, DeviceAttribute> e : device.getAttributes().entrySet()) {
        try {
          attributes.put(QualifiedName.of(e.getKey(), driver), AttributeValue.from(e.getValue()));
        } catch (IllegalArgumentException ex) {
          throw new IllegalArgumentException(
              "device " + device.getName() + ": attribute " + e.getKey() + ": " + ex.getMessage(),
              ex);
        }
      }
    }
    Map<QualifiedName, GoQuantity> capacity = new HashMap<>();
    if (device.getCapacity() != null) {
      for (Map.Entry<String, DeviceCapacity> e : device.getCapacity().entrySet()) {
        io.fabric8.kubernetes.api.model.Quantity value = e.getValue().getValue();
        try {
          // the text as given, as upstream decodes it (ParseQuantity)
          capacity.put(
              QualifiedName.of(e.getKey(), driver),
              GoQuantity.parse(value == null ? "" : value.toString()));
        } catch (IllegalArgumentException ex) {
          throw new IllegalArgumentException(
              "device " + device.getName() + ": capacity " + e.getKey() + ": " + ex.getMessage(),
              ex);
        }
      }
    }
    return build(
        driver, attributes, capacity, Boolean.TRUE.equals(device.getAllowMultipleAllocations()));
  }

  /**
   * A device from already-typed values. Capacities are taken as the API server serves them, in
   * canonical form ({@code resource.Quantity}'s internal form depends on the text).
   */
  public static CelDevice of(
      String driver,
      Map<QualifiedName, AttributeValue> attributes,
      Map<QualifiedName, Quantity> capacity,
      boolean allowMultipleAllocations) {
    Map<QualifiedName, GoQuantity> quantities = new HashMap<>();
    capacity.forEach((name, value) -> quantities.put(name, GoQuantity.of(value)));
    return build(driver, attributes, quantities, allowMultipleAllocations);
  }

  private static CelDevice build(
      String driver,
      Map<QualifiedName, AttributeValue> attributes,
      Map<QualifiedName, GoQuantity> capacity,
      boolean allowMultipleAllocations) {
    Map<String, Map<String, Object>> attributeDomains = new HashMap<>();
    attributes.forEach(
        (name, value) ->
            attributeDomains
                .computeIfAbsent(name.domain(), d -> new HashMap<>())
                .put(name.id(), value.celValue()));
    Map<String, Map<String, Object>> capacityDomains = new HashMap<>();
    capacity.forEach(
        (name, value) ->
            capacityDomains
                .computeIfAbsent(name.domain(), d -> new HashMap<>())
                .put(name.id(), value));
    return new CelDevice(
        driver,
        fields(driver, attributeDomains, capacityDomains, allowMultipleAllocations),
        !capacity.isEmpty());
  }

  private static Map<String, Object> fields(
      String driver,
      Map<String, Map<String, Object>> attributeDomains,
      Map<String, Map<String, Object>> capacityDomains,
      boolean allowMultipleAllocations) {
    return Map.of(
        DeviceFields.DRIVER,
        driver,
        DeviceFields.ATTRIBUTES,
        new DomainMap(attributeDomains),
        DeviceFields.CAPACITY,
        new DomainMap(capacityDomains),
        DeviceFields.ALLOW_MULTIPLE_ALLOCATIONS,
        allowMultipleAllocations);
  }

  /**
   * This device with copies of its capacities, for one evaluation of a selector that may change a
   * quantity in place as Go's methods do (see {@link GoQuantity}); upstream builds the {@code
   * device} variable anew for every evaluation too.
   */
  CelDevice withFreshCapacity() {
    if (!hasCapacity) {
      return this;
    }
    Map<String, Map<String, Object>> capacity =
        ((DomainMap) fields.get(DeviceFields.CAPACITY)).domains();
    Map<String, Map<String, Object>> copies = new HashMap<>();
    capacity.forEach(
        (domain, values) -> {
          Map<String, Object> copy = new HashMap<>();
          values.forEach((id, q) -> copy.put(id, ((GoQuantity) q).copy()));
          copies.put(domain, copy);
        });
    return new CelDevice(
        driver,
        fields(
            driver,
            ((DomainMap) fields.get(DeviceFields.ATTRIBUTES)).domains(),
            copies,
            (Boolean) fields.get(DeviceFields.ALLOW_MULTIPLE_ALLOCATIONS)),
        true);
  }

  public String driver() {
    return driver;
  }

  /** The value bound to the {@code device} variable. */
  Map<String, Object> celValue() {
    return fields;
  }

  /** Resolves the single variable of the environment without building a map per evaluation. */
  Optional<Object> resolve(String name) {
    return DeviceFields.VARIABLE.equals(name) ? resolved : Optional.empty();
  }
}
