package io.kdra.claimcontroller.domain;

import io.fabric8.kubernetes.api.model.Node;
import io.fabric8.kubernetes.api.model.NodeBuilder;
import io.fabric8.kubernetes.api.model.ObjectReference;
import io.fabric8.kubernetes.api.model.PersistentVolume;
import io.fabric8.kubernetes.api.model.PersistentVolumeClaim;
import io.kdra.core.alloc.NodeSelectors;
import io.kdra.core.model.Quantity;
import java.math.BigDecimal;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.Set;

/**
 * component-helpers 1.37.2's {@code FindMatchingVolume} on kube-scheduler's path (a node given,
 * {@code delayBinding} set, VolumeAttributesClass on, as it is GA): the volume an unbound claim
 * would be bound to on a node. A volume pre-bound to the claim decides alone (none when its node
 * affinity excludes the node); else the smallest volume, by capacity, that is not claimed, is big
 * enough, of the same volume mode and VolumeAttributesClass, not being deleted, {@code Available},
 * selected by the claim's selector, of the claim's class, allowed on the node, and offering every
 * access mode the claim asks for. Equal capacities keep the first in {@code volumes}' order. Pure.
 */
final class MatchingVolume {

  private MatchingVolume() {}

  /**
   * The volume for {@code pvc} among {@code volumes} (its class's) on {@code node}; those named in
   * {@code excluded} are taken by the pod's other claims already.
   */
  static Optional<PersistentVolume> find(
      PersistentVolumeClaim pvc, List<PersistentVolume> volumes, Node node, Set<String> excluded) {
    BigDecimal requested = bytes(VolumeHelpers.storageRequest(pvc));
    String requestedClass = VolumeHelpers.storageClassName(pvc);
    var selector = pvc.getSpec().getSelector();
    LabelSelectors.Selector matches = selector == null ? null : LabelSelectors.of(selector);
    PersistentVolume smallest = null;
    BigDecimal smallestQty = null;
    for (PersistentVolume pv : volumes) {
      if (excluded.contains(pv.getMetadata().getName())) {
        continue;
      }
      var spec = pv.getSpec();
      boolean boundToClaim = isBoundToClaim(pv, pvc);
      if (spec.getClaimRef() != null && !boundToClaim) {
        continue;
      }
      BigDecimal capacity =
          bytes(spec.getCapacity() == null ? null : spec.getCapacity().get("storage"));
      if (capacity.compareTo(requested) < 0
          || !volumeMode(pvc.getSpec().getVolumeMode()).equals(volumeMode(spec.getVolumeMode()))
          || !Objects.equals(
              orEmpty(pvc.getSpec().getVolumeAttributesClassName()),
              orEmpty(spec.getVolumeAttributesClassName()))
          || pv.getMetadata().getDeletionTimestamp() != null) {
        continue;
      }
      boolean allowed = nodeAffinityAllows(pv, node);
      if (boundToClaim) {
        // a pre-bound volume is the claim's answer: none when it may not be on this node
        return allowed ? Optional.of(pv) : Optional.empty();
      }
      String phase = pv.getStatus() == null ? null : pv.getStatus().getPhase();
      if (!"Available".equals(phase)
          || (matches != null && !matches.matches(labels(pv)))
          || !VolumeObjects.classOf(pv).equals(requestedClass)
          || !allowed
          || !offersAccessModes(pv, pvc)) {
        continue;
      }
      if (smallest == null || smallestQty.compareTo(capacity) > 0) {
        smallest = pv;
        smallestQty = capacity;
      }
    }
    return Optional.ofNullable(smallest);
  }

  /**
   * component-helpers' {@code IsVolumeBoundToClaim}: the volume's claim reference names the claim
   * (and its uid, when it has one).
   */
  static boolean isBoundToClaim(PersistentVolume pv, PersistentVolumeClaim pvc) {
    ObjectReference ref = pv.getSpec() == null ? null : pv.getSpec().getClaimRef();
    if (ref == null
        || !pvc.getMetadata().getName().equals(ref.getName())
        || !pvc.getMetadata().getNamespace().equals(ref.getNamespace())) {
      return false;
    }
    String uid = ref.getUid();
    return uid == null || uid.isEmpty() || uid.equals(pvc.getMetadata().getUid());
  }

  /**
   * component-helpers' {@code CheckNodeAffinity}: the volume's required node affinity matches a
   * node made of the labels alone (so {@code matchFields} see an empty name).
   */
  static boolean nodeAffinityAllows(PersistentVolume pv, Node node) {
    var affinity = pv.getSpec() == null ? null : pv.getSpec().getNodeAffinity();
    if (affinity == null || affinity.getRequired() == null) {
      return true;
    }
    Node labelsOnly =
        new NodeBuilder()
            .withNewMetadata()
            .withName("")
            .withLabels(VolumeHelpers.labels(node))
            .endMetadata()
            .build();
    return NodeSelectors.matches(affinity.getRequired(), labelsOnly);
  }

  /** {@code CheckAccessModes}: the volume offers every mode the claim asks for. */
  private static boolean offersAccessModes(PersistentVolume pv, PersistentVolumeClaim pvc) {
    Set<String> offered =
        new HashSet<>(
            pv.getSpec().getAccessModes() == null ? List.of() : pv.getSpec().getAccessModes());
    List<String> asked = pvc.getSpec().getAccessModes();
    return asked == null || offered.containsAll(asked);
  }

  /** {@code CheckVolumeModeMismatches} defaults an unset mode to Filesystem. */
  private static String volumeMode(String mode) {
    return mode == null ? "Filesystem" : mode;
  }

  private static String orEmpty(String s) {
    return s == null ? "" : s;
  }

  private static Map<String, String> labels(PersistentVolume pv) {
    return pv.getMetadata().getLabels() == null ? Map.of() : pv.getMetadata().getLabels();
  }

  /** The quantity's exact value (upstream's {@code Quantity.Cmp}); absent is zero. */
  private static BigDecimal bytes(io.fabric8.kubernetes.api.model.Quantity q) {
    Quantity v = Quantity.fromApi(q);
    return v == null ? BigDecimal.ZERO : v.value();
  }
}
