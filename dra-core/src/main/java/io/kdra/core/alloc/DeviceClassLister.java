package io.kdra.core.alloc;

import io.fabric8.kubernetes.api.model.resource.v1.DeviceClass;
import java.util.List;
import java.util.Optional;

/**
 * Read port for DeviceClasses, the only thing the allocator needs to know about them. Services
 * adapt an informer cache; tests and the command line use {@link InMemoryDeviceClassLister}.
 * Implementations must be safe for concurrent reads and must not block on I/O for long: the
 * allocator calls {@link #get} once per request per allocation.
 */
public interface DeviceClassLister {

  /** All classes, in no particular order. */
  List<DeviceClass> list();

  /** The class with this name, or empty when there is none (never throws for a missing class). */
  Optional<DeviceClass> get(String name);
}
