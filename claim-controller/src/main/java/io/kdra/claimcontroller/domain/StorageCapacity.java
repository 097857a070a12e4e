package io.kdra.claimcontroller.domain;

import io.fabric8.kubernetes.api.model.Node;
import io.fabric8.kubernetes.api.model.PersistentVolumeClaim;
import io.fabric8.kubernetes.api.model.storage.CSIDriver;
import io.fabric8.kubernetes.api.model.storage.CSIStorageCapacity;
import io.fabric8.kubernetes.api.model.storage.StorageClass;
import io.kdra.core.model.Quantity;
import java.math.BigDecimal;
import java.math.RoundingMode;
import java.util.Map;
import java.util.Optional;

/**
 * kube-scheduler 1.37's storage capacity check of a claim to be provisioned on a node
 * (VolumeBinding, binder.go {@code hasEnoughCapacity}): only for a claim that requests storage and
 * a provisioner whose CSIDriver sets {@code spec.storageCapacity: true} (no CSIDriver: no check);
 * then some CSIStorageCapacity of the claim's class whose {@code nodeTopology} selects the node's
 * labels must offer at least the request, by its {@code maximumVolumeSize} or else its {@code
 * capacity}. Sizes are compared in whole bytes, rounded up, as upstream's {@code Quantity.Value}.
 * Pure.
 */
final class StorageCapacity {

  private StorageCapacity() {}

  /**
   * The answer for one claim on one node.
   *
   * @param enough whether the node has room for the claim, or need not have
   * @param capacity the first CSIStorageCapacity with room (null when none, or none is checked),
   *     which VolumeBinding's Score reads
   */
  record Check(boolean enough, CSIStorageCapacity capacity) {
    static final Check UNCHECKED = new Check(true, null);
    static final Check NO_ROOM = new Check(false, null);
  }

  /** Whether {@code node} has room for {@code pvc} of {@code sc}, or need not have. */
  static Check check(PersistentVolumeClaim pvc, StorageClass sc, Node node, VolumeObjects objects) {
    Optional<BigDecimal> request = bytes(VolumeHelpers.storageRequest(pvc));
    if (request.isEmpty() || !checksCapacity(objects.csiDriver(sc.getProvisioner()))) {
      return Check.UNCHECKED;
    }
    Map<String, String> labels = VolumeHelpers.labels(node);
    for (CSIStorageCapacity c : objects.storageCapacities(sc.getMetadata().getName())) {
      Optional<BigDecimal> limit = bytes(limitOf(c));
      if (limit.isPresent()
          && limit.get().compareTo(request.get()) >= 0
          && c.getNodeTopology() != null
          && LabelSelectors.of(c.getNodeTopology()).matches(labels)) {
        return new Check(true, c);
      }
    }
    return Check.NO_ROOM;
  }

  private static boolean checksCapacity(Optional<CSIDriver> driver) {
    return driver
        .map(d -> d.getSpec() != null && Boolean.TRUE.equals(d.getSpec().getStorageCapacity()))
        .orElse(false);
  }

  /** Upstream's {@code volumeLimit}: the more precise maximum volume size when set. */
  private static io.fabric8.kubernetes.api.model.Quantity limitOf(CSIStorageCapacity c) {
    return c.getMaximumVolumeSize() != null ? c.getMaximumVolumeSize() : c.getCapacity();
  }

  /** Whole bytes, rounded up; empty when absent. */
  private static Optional<BigDecimal> bytes(io.fabric8.kubernetes.api.model.Quantity q) {
    return Optional.ofNullable(Quantity.fromApi(q))
        .map(v -> v.value().setScale(0, RoundingMode.CEILING));
  }
}
