package io.kdra.claimcontroller.domain;

import static io.kdra.claimcontroller.domain.VolumeHelpers.WAIT_FOR_FIRST_CONSUMER;
import static io.kdra.claimcontroller.domain.VolumeHelpers.labels;
import static io.kdra.claimcontroller.domain.VolumeHelpers.notFound;
import static io.kdra.claimcontroller.domain.VolumeHelpers.storageClassName;
import static io.kdra.claimcontroller.domain.VolumeHelpers.volumeName;
import static io.kdra.claimcontroller.domain.VolumeHelpers.volumes;

import io.fabric8.kubernetes.api.model.Node;
import io.fabric8.kubernetes.api.model.PersistentVolume;
import io.fabric8.kubernetes.api.model.PersistentVolumeClaim;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.Volume;
import io.fabric8.kubernetes.api.model.storage.StorageClass;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;

/**
 * kube-scheduler 1.37's VolumeZone plugin: the zone and region labels of the PVs of the claims the
 * pod names directly must include the node's, on nodes that have such a label. Pure.
 */
final class VolumeZone {

  /** Upstream's {@code ErrReasonConflict}. */
  static final String REASON_ZONE_CONFLICT = "node(s) had no available volume zone";

  /** The topology labels, beta first, as upstream lists them. */
  private static final List<String> TOPOLOGY_LABELS =
      List.of(
          "failure-domain.beta.kubernetes.io/zone",
          "failure-domain.beta.kubernetes.io/region",
          "topology.kubernetes.io/zone",
          "topology.kubernetes.io/region");

  /** One PersistentVolume's topology label: its key and the zones or regions it names. */
  private record PvTopology(String key, Set<String> values) {}

  private final List<PvTopology> topologies;

  private VolumeZone(List<PvTopology> topologies) {
    this.topologies = topologies;
  }

  /** The PreFilter: the topology labels of the PVs of the claims named directly. */
  static PreFilterStatus<VolumeZone> prefilter(Pod pod, VolumeObjects objects) {
    String ns = pod.getMetadata().getNamespace();
    List<PvTopology> topologies = new ArrayList<>();
    for (Volume v : volumes(pod)) {
      if (v.getPersistentVolumeClaim() == null) {
        continue;
      }
      String name = v.getPersistentVolumeClaim().getClaimName();
      if (name == null || name.isEmpty()) {
        return PreFilterStatus.refused("PersistentVolumeClaim had no name");
      }
      PersistentVolumeClaim pvc = objects.claim(ns, name).orElseThrow();
      if (volumeName(pvc).isEmpty()) {
        Optional<String> why = unbound(objects, pvc);
        if (why.isPresent()) {
          return PreFilterStatus.refused(why.get());
        }
        continue; // waits for its first consumer: no PV to take a zone from yet
      }
      Optional<PersistentVolume> pv = objects.volume(volumeName(pvc));
      if (pv.isEmpty()) {
        return PreFilterStatus.refused(notFound("persistentvolume", volumeName(pvc)));
      }
      topologies.addAll(topologies(pv.get()));
    }
    return PreFilterStatus.passed(new VolumeZone(topologies));
  }

  /** The Filter's verdict for {@code node}; only nodes with a topology label are checked. */
  Optional<String> reject(Node node) {
    Map<String, String> labels = labels(node);
    if (topologies.isEmpty() || TOPOLOGY_LABELS.stream().noneMatch(labels::containsKey)) {
      return Optional.empty();
    }
    for (PvTopology t : topologies) {
      String value = labels.get(t.key());
      if (value == null) {
        value = labels.get(toGa(t.key()));
      }
      if (value == null || !t.values().contains(value)) {
        return Optional.of(REASON_ZONE_CONFLICT);
      }
    }
    return Optional.empty();
  }

  private static List<PvTopology> topologies(PersistentVolume pv) {
    List<PvTopology> out = new ArrayList<>();
    Map<String, String> labels = pv.getMetadata().getLabels();
    if (labels == null) {
      return out;
    }
    for (String key : TOPOLOGY_LABELS) {
      String value = labels.get(key);
      if (value == null) {
        continue;
      }
      Set<String> zones = new HashSet<>();
      boolean valid = true;
      for (String z : value.split("__", -1)) {
        if (z.trim().isEmpty()) {
          valid = false; // upstream ignores a label it cannot parse
          break;
        }
        zones.add(z.trim());
      }
      if (valid) {
        out.add(new PvTopology(key, zones));
      }
    }
    return out;
  }

  private static String toGa(String key) {
    return switch (key) {
      case "failure-domain.beta.kubernetes.io/zone" -> "topology.kubernetes.io/zone";
      case "failure-domain.beta.kubernetes.io/region" -> "topology.kubernetes.io/region";
      default -> key;
    };
  }

  /** The PreFilter's verdict on a claim without a volume name (upstream's reasons). */
  private static Optional<String> unbound(VolumeObjects objects, PersistentVolumeClaim pvc) {
    String className = storageClassName(pvc);
    if (className.isEmpty()) {
      return Optional.of("PersistentVolumeClaim had no pv name and storageClass name");
    }
    Optional<StorageClass> sc = objects.storageClass(className);
    if (sc.isEmpty()) {
      return Optional.of(notFound("storageclass.storage.k8s.io", className));
    }
    if (sc.get().getVolumeBindingMode() == null) {
      return Optional.of("VolumeBindingMode not set for StorageClass \"" + className + "\"");
    }
    return WAIT_FOR_FIRST_CONSUMER.equals(sc.get().getVolumeBindingMode())
        ? Optional.empty()
        : Optional.of("PersistentVolume had no name");
  }
}
