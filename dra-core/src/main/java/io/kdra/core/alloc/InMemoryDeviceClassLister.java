package io.kdra.core.alloc;

import io.fabric8.kubernetes.api.model.resource.v1.DeviceClass;
import java.util.Collection;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;

/**
 * An immutable {@link DeviceClassLister} over a fixed set of classes. When two classes share a name
 * the later one wins, as an update would.
 */
public final class InMemoryDeviceClassLister implements DeviceClassLister {

  private final Map<String, DeviceClass> byName;

  public InMemoryDeviceClassLister(Collection<DeviceClass> classes) {
    Map<String, DeviceClass> map = new LinkedHashMap<>();
    for (DeviceClass c : classes) {
      map.put(c.getMetadata().getName(), c);
    }
    this.byName = Map.copyOf(map);
  }

  public static InMemoryDeviceClassLister of(DeviceClass... classes) {
    return new InMemoryDeviceClassLister(List.of(classes));
  }

  @Override
  public List<DeviceClass> list() {
    return List.copyOf(byName.values());
  }

  @Override
  public Optional<DeviceClass> get(String name) {
    return Optional.ofNullable(byName.get(name));
  }
}
