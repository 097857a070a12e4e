package io.kdra.core.cel;

import io.fabric8.kubernetes.api.model.resource.v1.Device;
import io.fabric8.kubernetes.api.model.resource.v1.DeviceAttribute;
import io.fabric8.kubernetes.api.model.resource.v1.DeviceCapacity;
import io.kdra.core.model.AttributeValue;
import io.kdra.core.model.QualifiedName;
import io.kdra.core.model.Quantity;
import java.util.HashMap;
import java.util.Map;
import java.util.Optional;

/**
 * One device as a CEL selector sees it, the {@code device} variable of upstream's DRA
 * environment: {@code driver}, {@code attributes[domain][id]} (int, bool, string or Semver),
 * {@code capacity[domain][id]} (Quantity) and {@code allowMultipleAllocations}. Keys without a
 * domain belong to the driver's domain. Built once per device and then evaluated against any
 * number of selectors without further allocation; immutable and thread-safe.
 */
public final class CelDevice {

  static final String DRIVER = "driver";
  static final String ATTRIBUTES = "attributes";
  static final String CAPACITY = "capacity";
  static final String ALLOW_MULTIPLE_ALLOCATIONS = "allowMultipleAllocations";

  private final String driver;
  private final Map<String, Object> fields;
  private final Optional<Object> resolved;

  private CelDevice(String driver, Map<String, Object> fields) {
    this.driver = driver;
    this.fields = fields;
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
          throw new IllegalArgumentException("device " + device.getName() + ": attribute "
              + e.getKey() + ": " + ex.getMessage(), ex);
        }
      }
    }
    Map<QualifiedName, Quantity> capacity = new HashMap<>();
    if (device.getCapacity() != null) {
      for (Map.Entry<String, DeviceCapacity> e : device.getCapacity().entrySet()) {
        io.fabric8.kubernetes.api.model.Quantity value = e.getValue().getValue();
        try {
          capacity.put(QualifiedName.of(e.getKey(), driver),
              Quantity.parse(value == null ? null : value.toString()));
        } catch (IllegalArgumentException ex) {
          throw new IllegalArgumentException("device " + device.getName() + ": capacity "
              + e.getKey() + ": " + ex.getMessage(), ex);
        }
      }
    }
    return of(driver, attributes, capacity, Boolean.TRUE.equals(device.getAllowMultipleAllocations()));
  }

  /** A device from already-typed values. */
  public static CelDevice of(String driver, Map<QualifiedName, AttributeValue> attributes,
      Map<QualifiedName, Quantity> capacity, boolean allowMultipleAllocations) {
    Map<String, Map<String, Object>> attributeDomains = new HashMap<>();
    attributes.forEach((name, value) -> attributeDomains
        .computeIfAbsent(name.domain(), d -> new HashMap<>()).put(name.id(), value.celValue()));
    Map<String, Map<String, Object>> capacityDomains = new HashMap<>();
    capacity.forEach((name, value) -> capacityDomains
        .computeIfAbsent(name.domain(), d -> new HashMap<>()).put(name.id(), value));
    Map<String, Object> fields = Map.of(
        DRIVER, driver,
        ATTRIBUTES, new DomainMap(attributeDomains),
        CAPACITY, new DomainMap(capacityDomains),
        ALLOW_MULTIPLE_ALLOCATIONS, allowMultipleAllocations);
    return new CelDevice(driver, fields);
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
    return DeviceSelectorEnvironment.DEVICE_VAR.equals(name) ? resolved : Optional.empty();
  }
}
