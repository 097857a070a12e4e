package io.kdra.claimcontroller.domain;

import io.fabric8.kubernetes.api.model.PersistentVolume;
import io.fabric8.kubernetes.api.model.PersistentVolumeClaim;
import io.fabric8.kubernetes.api.model.storage.CSIDriver;
import io.fabric8.kubernetes.api.model.storage.CSINode;
import io.fabric8.kubernetes.api.model.storage.CSIStorageCapacity;
import io.fabric8.kubernetes.api.model.storage.StorageClass;
import java.util.Collection;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;

/**
 * What the volume filters ({@link VolumeFilters}) read: the PersistentVolumeClaims,
 * PersistentVolumes, StorageClasses, CSINodes, CSIDrivers and CSIStorageCapacities as the informers
 * have them.
 */
public interface VolumeObjects {

  /** None known: every claim a pod names is missing. */
  VolumeObjects NONE = of(List.of(), List.of(), List.of(), List.of());

  Optional<PersistentVolumeClaim> claim(String namespace, String name);

  Optional<PersistentVolume> volume(String name);

  Optional<StorageClass> storageClass(String name);

  /** The CSINode of {@code nodeName} (same name as its node). */
  Optional<CSINode> csiNode(String nodeName);

  /** The CSIDriver named {@code name} (a StorageClass's provisioner). */
  Optional<CSIDriver> csiDriver(String name);

  /**
   * The CSIStorageCapacities of {@code storageClass} ({@code storageClassName}), of every
   * namespace.
   */
  List<CSIStorageCapacity> storageCapacities(String storageClass);

  /**
   * The PersistentVolumes of {@code storageClass} (the beta annotation first, then {@code
   * spec.storageClassName}, as upstream reads a PV's class).
   */
  List<PersistentVolume> volumesOfClass(String storageClass);

  /** A PV's storage class, as component-helpers' {@code GetPersistentVolumeClass}. */
  static String classOf(PersistentVolume pv) {
    Map<String, String> ann = pv.getMetadata().getAnnotations();
    if (ann != null && ann.containsKey(VolumeHelpers.ANN_BETA_STORAGE_CLASS)) {
      return ann.get(VolumeHelpers.ANN_BETA_STORAGE_CLASS);
    }
    String name = pv.getSpec() == null ? null : pv.getSpec().getStorageClassName();
    return name == null ? "" : name;
  }

  /** A fixed set of objects without CSIDrivers (so no capacity is checked, as upstream). */
  static VolumeObjects of(
      Collection<PersistentVolumeClaim> claims,
      Collection<PersistentVolume> volumes,
      Collection<StorageClass> classes,
      Collection<CSINode> csiNodes) {
    return of(claims, volumes, classes, csiNodes, List.of(), List.of());
  }

  /** A fixed set of objects (tests, the differential). */
  static VolumeObjects of(
      Collection<PersistentVolumeClaim> claims,
      Collection<PersistentVolume> volumes,
      Collection<StorageClass> classes,
      Collection<CSINode> csiNodes,
      Collection<CSIDriver> csiDrivers,
      Collection<CSIStorageCapacity> capacities) {
    Map<String, PersistentVolumeClaim> byKey = new HashMap<>();
    claims.forEach(
        c -> byKey.put(c.getMetadata().getNamespace() + "/" + c.getMetadata().getName(), c));
    Map<String, PersistentVolume> pvs = byName(volumes);
    Map<String, StorageClass> scs = byName(classes);
    Map<String, CSINode> nodes = byName(csiNodes);
    Map<String, CSIDriver> drivers = byName(csiDrivers);
    return new VolumeObjects() {
      @Override
      public Optional<PersistentVolumeClaim> claim(String namespace, String name) {
        return Optional.ofNullable(byKey.get(namespace + "/" + name));
      }

      @Override
      public Optional<PersistentVolume> volume(String name) {
        return Optional.ofNullable(pvs.get(name));
      }

      @Override
      public Optional<StorageClass> storageClass(String name) {
        return Optional.ofNullable(scs.get(name));
      }

      @Override
      public Optional<CSINode> csiNode(String nodeName) {
        return Optional.ofNullable(nodes.get(nodeName));
      }

      @Override
      public Optional<CSIDriver> csiDriver(String name) {
        return Optional.ofNullable(drivers.get(name));
      }

      @Override
      public List<CSIStorageCapacity> storageCapacities(String storageClass) {
        return capacities.stream()
            .filter(c -> storageClass.equals(c.getStorageClassName()))
            .toList();
      }

      @Override
      public List<PersistentVolume> volumesOfClass(String storageClass) {
        return volumes.stream().filter(v -> storageClass.equals(classOf(v))).toList();
      }
    };
  }

  private static <T extends io.fabric8.kubernetes.api.model.HasMetadata> Map<String, T> byName(
      Collection<T> objects) {
    Map<String, T> out = new HashMap<>();
    objects.forEach(o -> out.put(o.getMetadata().getName(), o));
    return out;
  }
}
