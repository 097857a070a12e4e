package io.kdra.core.testing;

import io.fabric8.kubernetes.api.model.ObjectMeta;
import io.fabric8.kubernetes.api.model.Quantity;
import io.fabric8.kubernetes.api.model.resource.v1.CapacityRequestPolicy;
import io.fabric8.kubernetes.api.model.resource.v1.Counter;
import io.fabric8.kubernetes.api.model.resource.v1.CounterSet;
import io.fabric8.kubernetes.api.model.resource.v1.Device;
import io.fabric8.kubernetes.api.model.resource.v1.DeviceAttribute;
import io.fabric8.kubernetes.api.model.resource.v1.DeviceCapacity;
import io.fabric8.kubernetes.api.model.resource.v1.DeviceCounterConsumption;
import io.fabric8.kubernetes.api.model.resource.v1.ResourcePool;
import io.fabric8.kubernetes.api.model.resource.v1.ResourceSlice;
import io.fabric8.kubernetes.api.model.resource.v1.ResourceSliceSpec;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;

/** Small builders for the generator's inventory; they draw nothing. */
final class DeviceParts {

  private DeviceParts() {}

  static void attr(Device d, String name, DeviceAttribute a) {
    d.getAttributes().put(name, a);
  }

  static DeviceCapacity capacity(String value, CapacityRequestPolicy policy) {
    DeviceCapacity c = new DeviceCapacity();
    c.setValue(new Quantity(value));
    c.setRequestPolicy(policy);
    return c;
  }

  static CounterSet counterSet(String name, String counter, String value) {
    CounterSet s = new CounterSet();
    s.setName(name);
    Counter c = new Counter();
    c.setValue(new Quantity(value));
    s.setCounters(Map.of(counter, c));
    return s;
  }

  static DeviceCounterConsumption consumes(String set, String counter, String value) {
    DeviceCounterConsumption c = new DeviceCounterConsumption();
    c.setCounterSet(set);
    Counter q = new Counter();
    q.setValue(new Quantity(value));
    c.setCounters(Map.of(counter, q));
    return c;
  }

  /** A slice of a node's pool (named after the node), or of a pool named after the slice. */
  static ResourceSlice slice(
      String name, String driver, String node, long generation, long count, List<Device> devices) {
    ResourceSlice s = new ResourceSlice();
    ObjectMeta m = new ObjectMeta();
    m.setName(name);
    s.setMetadata(m);
    ResourceSliceSpec spec = new ResourceSliceSpec();
    spec.setDriver(driver);
    ResourcePool pool = new ResourcePool();
    pool.setName(node == null ? name : node);
    pool.setGeneration(generation);
    pool.setResourceSliceCount(count);
    spec.setPool(pool);
    spec.setDevices(new ArrayList<>(devices));
    s.setSpec(spec);
    return s;
  }
}
