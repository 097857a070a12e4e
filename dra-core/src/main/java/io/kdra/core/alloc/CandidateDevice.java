package io.kdra.core.alloc;

import io.fabric8.kubernetes.api.model.resource.v1.Device;
import io.fabric8.kubernetes.api.model.resource.v1.DeviceAttribute;
import io.fabric8.kubernetes.api.model.resource.v1.DeviceCapacity;
import io.fabric8.kubernetes.api.model.resource.v1.DeviceTaint;
import io.kdra.core.model.AttributeValue;
import io.kdra.core.model.DeviceId;
import io.kdra.core.model.Quantity;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;

/**
 * One device of a slice as the allocator sees it, parsed once per snapshot: its ID, the API object,
 * its slice, and caches for selector results (devices are immutable within a snapshot, so whether a
 * device matches an expression never changes). Thread-safe.
 */
public final class CandidateDevice {

  private final DeviceId id;
  private final Device device;
  private final SliceInfo slice;
  private final Map<String, Quantity> capacity;
  private final boolean allowMultipleAllocations;
  private final ConcurrentHashMap<String, Boolean> selectorResults = new ConcurrentHashMap<>();
  private final ConcurrentHashMap<String, AttributeValue> attributes = new ConcurrentHashMap<>();
  private volatile Object selectorView;

  CandidateDevice(SliceInfo slice, Device device) {
    this.slice = slice;
    this.device = device;
    this.id = new DeviceId(slice.driver(), slice.poolName(), device.getName());
    Map<String, Quantity> caps = new HashMap<>();
    if (device.getCapacity() != null) {
      for (Map.Entry<String, DeviceCapacity> e : device.getCapacity().entrySet()) {
        caps.put(e.getKey(), Quantities.of(e.getValue().getValue()));
      }
    }
    this.capacity = Map.copyOf(caps);
    this.allowMultipleAllocations = Boolean.TRUE.equals(device.getAllowMultipleAllocations());
  }

  public DeviceId id() {
    return id;
  }

  public Device device() {
    return device;
  }

  public SliceInfo slice() {
    return slice;
  }

  public String driver() {
    return slice.driver();
  }

  /** Capacity values by the key as written in the slice. */
  Map<String, Quantity> capacity() {
    return capacity;
  }

  boolean allowMultipleAllocations() {
    return allowMultipleAllocations;
  }

  boolean hasBindingConditions() {
    return device.getBindingConditions() != null && !device.getBindingConditions().isEmpty();
  }

  boolean bindsToNode() {
    return Boolean.TRUE.equals(device.getBindsToNode());
  }

  boolean consumesCounters() {
    return device.getConsumesCounters() != null && !device.getConsumesCounters().isEmpty();
  }

  List<DeviceTaint> taints() {
    return device.getTaints() == null ? List.of() : device.getTaints();
  }

  /**
   * The attribute named by a fully qualified name, as constraints look it up: the exact key first,
   * then the bare id when the domain is the driver's. Null when absent or malformed.
   */
  AttributeValue attribute(String fullyQualifiedName) {
    AttributeValue cached = attributes.get(fullyQualifiedName);
    if (cached != null) {
      return cached;
    }
    Map<String, DeviceAttribute> all = device.getAttributes();
    if (all == null) {
      return null;
    }
    DeviceAttribute raw = all.get(fullyQualifiedName);
    if (raw == null) {
      int slash = fullyQualifiedName.indexOf('/');
      if (slash < 0 || !fullyQualifiedName.substring(0, slash).equals(driver())) {
        return null;
      }
      raw = all.get(fullyQualifiedName.substring(slash + 1));
    }
    if (raw == null) {
      return null;
    }
    AttributeValue value;
    try {
      value = AttributeValue.from(raw);
    } catch (IllegalArgumentException e) {
      return null;
    }
    attributes.put(fullyQualifiedName, value);
    return value;
  }

  /** Cached selector outcome for an expression, or null when not evaluated yet. */
  Boolean cachedMatch(String expression) {
    return selectorResults.get(expression);
  }

  void cacheMatch(String expression, boolean matches) {
    selectorResults.put(expression, matches);
  }

  /** A slot for the selector evaluator's per-device view (built once, then reused). */
  Object selectorView() {
    return selectorView;
  }

  void selectorView(Object view) {
    this.selectorView = view;
  }

  @Override
  public String toString() {
    return id.toString();
  }
}
