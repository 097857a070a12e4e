package io.kdra.claimcontroller.domain;

import static io.kdra.claimcontroller.domain.VolumeHelpers.notFound;
import static io.kdra.claimcontroller.domain.VolumeHelpers.volumes;

import io.fabric8.kubernetes.api.model.PersistentVolumeClaim;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.Volume;
import java.util.Collection;
import java.util.HashSet;
import java.util.List;
import java.util.Objects;
import java.util.Optional;
import java.util.Set;
import java.util.function.Supplier;

/**
 * kube-scheduler 1.37's VolumeRestrictions plugin: the claims the pod names must exist, a {@code
 * ReadWriteOncePod} claim must not be in use by a placed pod, and an inline disk (GCE PD, AWS EBS,
 * RBD, iSCSI) must not be used read-write by a pod on the node. Pure.
 */
final class VolumeRestrictions {

  /** Upstream's {@code ErrReasonDiskConflict}. */
  static final String REASON_DISK_CONFLICT = "node(s) had no available disk";

  /** Upstream's {@code ErrReasonReadWriteOncePodConflict}. */
  static final String REASON_RWOP_CONFLICT =
      "node(s) unavailable due to PersistentVolumeClaim with ReadWriteOncePod access mode already"
          + " in-use by another pod";

  private static final String RWOP = "ReadWriteOncePod";

  private final List<Volume> inlineDisks;
  private final int rwopConflicts;

  private VolumeRestrictions(List<Volume> inlineDisks, int rwopConflicts) {
    this.inlineDisks = inlineDisks;
    this.rwopConflicts = rwopConflicts;
  }

  /**
   * The PreFilter: every claim named directly must exist; the {@code ReadWriteOncePod} ones in use
   * by a placed pod are counted here, as upstream does, and refused by the Filter.
   *
   * @param placed the pods bound or being bound to a node, not terminal, not the pod
   */
  static PreFilterStatus<VolumeRestrictions> prefilter(
      Pod pod, VolumeObjects objects, Supplier<Collection<Pod>> placed) {
    String ns = pod.getMetadata().getNamespace();
    List<Volume> volumes = volumes(pod);
    Set<String> rwop = new HashSet<>();
    for (Volume v : volumes) {
      if (v.getPersistentVolumeClaim() == null) {
        continue;
      }
      String name = v.getPersistentVolumeClaim().getClaimName();
      Optional<PersistentVolumeClaim> pvc = objects.claim(ns, name);
      if (pvc.isEmpty()) {
        return PreFilterStatus.refused(notFound("persistentvolumeclaim", name));
      }
      if (accessModes(pvc.get()).contains(RWOP)) {
        rwop.add(name);
      }
    }
    int conflicts = 0;
    for (String name : rwop) {
      if (placed.get().stream()
          .anyMatch(p -> ns.equals(p.getMetadata().getNamespace()) && names(p, name))) {
        conflicts++;
      }
    }
    List<Volume> disks = volumes.stream().filter(VolumeRestrictions::isInlineDisk).toList();
    return PreFilterStatus.passed(new VolumeRestrictions(disks, conflicts));
  }

  /** The Filter's verdict for a node with {@code onNode} placed on it; empty: it passes. */
  Optional<String> reject(List<Pod> onNode) {
    for (Volume v : inlineDisks) {
      for (Pod p : onNode) {
        if (conflicts(v, p)) {
          return Optional.of(REASON_DISK_CONFLICT);
        }
      }
    }
    return rwopConflicts > 0 ? Optional.of(REASON_RWOP_CONFLICT) : Optional.empty();
  }

  static boolean isInlineDisk(Volume v) {
    return v.getGcePersistentDisk() != null
        || v.getAwsElasticBlockStore() != null
        || v.getRbd() != null
        || v.getIscsi() != null;
  }

  /** Upstream's {@code isVolumeConflict}: the same disk used by a pod there, not both read-only. */
  private static boolean conflicts(Volume v, Pod existing) {
    for (Volume e : volumes(existing)) {
      if (v.getGcePersistentDisk() != null
          && e.getGcePersistentDisk() != null
          && v.getGcePersistentDisk().getPdName().equals(e.getGcePersistentDisk().getPdName())
          && !(isTrue(v.getGcePersistentDisk().getReadOnly())
              && isTrue(e.getGcePersistentDisk().getReadOnly()))) {
        return true;
      }
      if (v.getAwsElasticBlockStore() != null
          && e.getAwsElasticBlockStore() != null
          && v.getAwsElasticBlockStore()
              .getVolumeID()
              .equals(e.getAwsElasticBlockStore().getVolumeID())) {
        return true;
      }
      if (v.getIscsi() != null
          && e.getIscsi() != null
          && v.getIscsi().getIqn().equals(e.getIscsi().getIqn())
          && !(isTrue(v.getIscsi().getReadOnly()) && isTrue(e.getIscsi().getReadOnly()))) {
        return true;
      }
      if (v.getRbd() != null && e.getRbd() != null) {
        var a = v.getRbd();
        var b = e.getRbd();
        if (overlap(a.getMonitors(), b.getMonitors())
            && Objects.equals(orDefault(a.getPool(), "rbd"), orDefault(b.getPool(), "rbd"))
            && Objects.equals(a.getImage(), b.getImage())
            && !(isTrue(a.getReadOnly()) && isTrue(b.getReadOnly()))) {
          return true;
        }
      }
    }
    return false;
  }

  private static boolean overlap(List<String> a, List<String> b) {
    if (a == null || b == null) {
      return false;
    }
    Set<String> s = new HashSet<>(a);
    return b.stream().anyMatch(s::contains);
  }

  private static List<String> accessModes(PersistentVolumeClaim pvc) {
    return pvc.getSpec() == null || pvc.getSpec().getAccessModes() == null
        ? List.of()
        : pvc.getSpec().getAccessModes();
  }

  /** Whether {@code p} names {@code claim} in a {@code persistentVolumeClaim} volume. */
  private static boolean names(Pod p, String claim) {
    return volumes(p).stream()
        .anyMatch(
            v ->
                v.getPersistentVolumeClaim() != null
                    && claim.equals(v.getPersistentVolumeClaim().getClaimName()));
  }

  private static boolean isTrue(Boolean b) {
    return Boolean.TRUE.equals(b);
  }

  private static String orDefault(String s, String d) {
    return s == null || s.isEmpty() ? d : s;
  }
}
