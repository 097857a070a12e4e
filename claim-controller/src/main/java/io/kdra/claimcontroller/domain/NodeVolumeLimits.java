package io.kdra.claimcontroller.domain;

import static io.kdra.claimcontroller.domain.VolumeHelpers.claimName;
import static io.kdra.claimcontroller.domain.VolumeHelpers.isControlledBy;
import static io.kdra.claimcontroller.domain.VolumeHelpers.storageClassName;
import static io.kdra.claimcontroller.domain.VolumeHelpers.volumeName;
import static io.kdra.claimcontroller.domain.VolumeHelpers.volumes;

import io.fabric8.kubernetes.api.model.Node;
import io.fabric8.kubernetes.api.model.PersistentVolume;
import io.fabric8.kubernetes.api.model.PersistentVolumeClaim;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.Volume;
import io.fabric8.kubernetes.api.model.storage.CSINode;
import io.fabric8.kubernetes.api.model.storage.CSINodeDriver;
import io.fabric8.kubernetes.api.model.storage.StorageClass;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;

/**
 * kube-scheduler 1.37's NodeVolumeLimits plugin (CSI): a node is rejected when the pod's new CSI
 * volumes, added to those its placed pods use, exceed a driver's allocatable count in the node's
 * CSINode. It refuses nothing at PreFilter. Pure.
 */
final class NodeVolumeLimits {

  /** Upstream's {@code ErrReasonMaxVolumeCountExceeded}. */
  static final String REASON_MAX_VOLUME_COUNT = "node(s) exceed max volume count";

  private final Pod pod;
  private final VolumeObjects objects;

  NodeVolumeLimits(Pod pod, VolumeObjects objects) {
    this.pod = pod;
    this.objects = objects;
  }

  /** The Filter's verdict for {@code node} with {@code onNode} placed on it; empty: it passes. */
  Optional<String> reject(Node node, List<Pod> onNode) {
    return exceedsVolumeLimits(node, onNode)
        ? Optional.of(REASON_MAX_VOLUME_COUNT)
        : Optional.empty();
  }

  private boolean exceedsVolumeLimits(Node node, List<Pod> onNode) {
    Optional<CSINode> csiNode = objects.csiNode(node.getMetadata().getName());
    Map<String, String> wanted = attachable(pod, true);
    if (wanted.isEmpty()) {
      return false;
    }
    Map<String, Long> limits = new HashMap<>();
    csiNode
        .map(c -> c.getSpec() == null ? null : c.getSpec().getDrivers())
        .ifPresent(
            ds -> {
              for (CSINodeDriver d : ds) {
                if (d.getAllocatable() != null && d.getAllocatable().getCount() != null) {
                  limits.put(d.getName(), d.getAllocatable().getCount().longValue());
                }
              }
            });
    if (limits.isEmpty()) {
      return false;
    }
    Map<String, String> attached = new HashMap<>();
    for (Pod p : onNode) {
      attached.putAll(attachable(p, false));
    }
    Map<String, Integer> attachedCount = new HashMap<>();
    for (Map.Entry<String, String> e : attached.entrySet()) {
      wanted.remove(e.getKey()); // a volume shared with a pod there counts once
      attachedCount.merge(e.getValue(), 1, Integer::sum);
    }
    Map<String, Integer> newCount = new HashMap<>();
    wanted.values().forEach(d -> newCount.merge(d, 1, Integer::sum));
    for (Map.Entry<String, Integer> e : newCount.entrySet()) {
      Long limit = limits.get(e.getKey());
      if (limit != null && attachedCount.getOrDefault(e.getKey(), 0) + e.getValue() > limit) {
        return true;
      }
    }
    return false;
  }

  /**
   * The pod's CSI volumes, {@code driver/handle} to driver, as upstream counts them: a claim's PV's
   * CSI source, or for a claim not bound yet its class's provisioner with a handle of its own. A
   * claim of an existing pod that cannot be read is not counted.
   */
  private Map<String, String> attachable(Pod p, boolean newPod) {
    Map<String, String> out = new LinkedHashMap<>();
    String ns = p.getMetadata().getNamespace();
    for (Volume v : volumes(p)) {
      if (v.getPersistentVolumeClaim() == null && v.getEphemeral() == null) {
        continue;
      }
      Optional<PersistentVolumeClaim> pvc = objects.claim(ns, claimName(p, v));
      if (pvc.isEmpty() || (v.getEphemeral() != null && !isControlledBy(pvc.get(), p))) {
        continue; // for the new pod, the PreFilter has refused this already
      }
      String[] driverAndHandle = csiDriverInfo(pvc.get());
      if (driverAndHandle != null) {
        out.put(driverAndHandle[0] + "/" + driverAndHandle[1], driverAndHandle[0]);
      }
    }
    return out;
  }

  private String[] csiDriverInfo(PersistentVolumeClaim pvc) {
    String pvName = volumeName(pvc);
    Optional<PersistentVolume> pv = pvName.isEmpty() ? Optional.empty() : objects.volume(pvName);
    if (pv.isPresent()) {
      var csi = pv.get().getSpec() == null ? null : pv.get().getSpec().getCsi();
      // in-tree volumes migrated to CSI are not modelled: not counted
      return csi == null ? null : new String[] {csi.getDriver(), csi.getVolumeHandle()};
    }
    String className = storageClassName(pvc);
    if (className.isEmpty()) {
      return null;
    }
    Optional<StorageClass> sc = objects.storageClass(className);
    if (sc.isEmpty() || sc.get().getProvisioner() == null) {
      return null;
    }
    String provisioner = sc.get().getProvisioner();
    if (provisioner.startsWith("kubernetes.io/")) {
      return null; // an in-tree provisioner: counted only when migrated to CSI, not modelled
    }
    return new String[] {
      provisioner, "pvc-" + pvc.getMetadata().getNamespace() + "/" + pvc.getMetadata().getName()
    };
  }
}
