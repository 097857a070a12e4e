package io.kdra.claimcontroller.domain;

import static io.kdra.claimcontroller.domain.VolumeHelpers.WAIT_FOR_FIRST_CONSUMER;
import static io.kdra.claimcontroller.domain.VolumeHelpers.claimName;
import static io.kdra.claimcontroller.domain.VolumeHelpers.isControlledBy;
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
import io.kdra.core.model.Quantity;
import java.math.BigDecimal;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;

/**
 * kube-scheduler 1.37's VolumeBinding plugin: the pod's claims must be usable (present, not lost,
 * not being deleted, an ephemeral one the pod's own) and bound, or wait for their first consumer; a
 * bound claim's PV must allow the node. A claim waiting for its first consumer is bound to an
 * existing volume that fits it on the node ({@link MatchingVolume}, smallest first), or else must
 * be provisionable there, with room for it where its CSI driver publishes storage capacity ({@link
 * StorageCapacity}); {@link #decide} gives, per node, the verdict and which volumes are bound and
 * which claims provisioned ({@link PodVolumes}), as upstream's {@code FindPodVolumes}. Pure, but
 * for remembering each node's decision within one attempt.
 */
final class VolumeBinding {

  /** Upstream's {@code ErrReasonNodeConflict}. */
  static final String REASON_NODE_CONFLICT =
      "node(s) didn't match PersistentVolume's node affinity";

  /** Upstream's {@code ErrReasonBindConflict}. */
  static final String REASON_BIND_CONFLICT =
      "node(s) didn't find available persistent volumes to bind";

  /** Upstream's {@code ErrReasonNotEnoughSpace}. */
  static final String REASON_NOT_ENOUGH_SPACE = "node(s) did not have enough free storage";

  /** Upstream's {@code ErrReasonPVNotExist}. */
  static final String REASON_PV_NOT_EXIST =
      "node(s) unavailable due to one or more pvc(s) bound to non-existent pv(s)";

  /** Upstream's PreFilter reason for claims that should have been bound already. */
  static final String REASON_UNBOUND_IMMEDIATE = "pod has unbound immediate PersistentVolumeClaims";

  static final String ANN_BIND_COMPLETED = "pv.kubernetes.io/bind-completed";

  /** The node a claim waiting for its first consumer is provisioned for (set at PreBind). */
  static final String ANN_SELECTED_NODE = "volume.kubernetes.io/selected-node";

  private static final String NO_PROVISIONER = "kubernetes.io/no-provisioner";

  /**
   * One node's answer: upstream's reasons, in its order (empty: the node passes), and what would be
   * bound and provisioned there.
   */
  record Decision(List<String> reasons, PodVolumes volumes) {}

  private final VolumeObjects objects;
  private final List<PersistentVolumeClaim> boundClaims;
  private final List<PersistentVolumeClaim> delayed;
  private final Map<String, List<PersistentVolume>> volumesByClass;
  private final Map<String, Decision> byNode = new HashMap<>();

  private VolumeBinding(
      VolumeObjects objects,
      List<PersistentVolumeClaim> boundClaims,
      List<PersistentVolumeClaim> delayed,
      Map<String, List<PersistentVolume>> volumesByClass) {
    this.objects = objects;
    this.boundClaims = boundClaims;
    this.delayed = delayed;
    this.volumesByClass = volumesByClass;
  }

  /** The PreFilter: the claims' state first, then whether each is bound, waits, or should be. */
  static PreFilterStatus<VolumeBinding> prefilter(Pod pod, VolumeObjects objects) {
    String ns = pod.getMetadata().getNamespace();
    List<Volume> volumes = volumes(pod);
    List<PersistentVolumeClaim> bound = new ArrayList<>();
    boolean unboundImmediate = false;
    List<PersistentVolumeClaim> delayed = new ArrayList<>();
    for (Volume v : volumes) {
      boolean ephemeral = v.getEphemeral() != null;
      if (v.getPersistentVolumeClaim() == null && !ephemeral) {
        continue;
      }
      String name = claimName(pod, v);
      Optional<PersistentVolumeClaim> found = objects.claim(ns, name);
      if (found.isEmpty()) {
        return PreFilterStatus.refused(
            ephemeral
                ? "waiting for ephemeral volume controller to create the persistentvolumeclaim \""
                    + name
                    + "\""
                : notFound("persistentvolumeclaim", name));
      }
      PersistentVolumeClaim pvc = found.get();
      if (pvc.getStatus() != null && "Lost".equals(pvc.getStatus().getPhase())) {
        return PreFilterStatus.refused(
            "persistentvolumeclaim \""
                + name
                + "\" bound to non-existent persistentvolume \""
                + volumeName(pvc)
                + "\"");
      }
      if (pvc.getMetadata().getDeletionTimestamp() != null) {
        return PreFilterStatus.refused("persistentvolumeclaim \"" + name + "\" is being deleted");
      }
      if (ephemeral && !isControlledBy(pvc, pod)) {
        return PreFilterStatus.refused(notOwner(pvc, pod));
      }
    }
    Map<String, List<PersistentVolume>> volumesByClass = new HashMap<>();
    for (Volume v : volumes) {
      if (v.getPersistentVolumeClaim() == null && v.getEphemeral() == null) {
        continue;
      }
      PersistentVolumeClaim pvc = objects.claim(ns, claimName(pod, v)).orElseThrow();
      if (isFullyBound(pvc)) {
        bound.add(pvc);
        continue;
      }
      String className = storageClassName(pvc);
      Optional<StorageClass> sc =
          className.isEmpty() ? Optional.empty() : objects.storageClass(className);
      if (sc.isPresent() && sc.get().getVolumeBindingMode() == null) {
        return PreFilterStatus.refused(
            "VolumeBindingMode not set for StorageClass \"" + className + "\"");
      }
      boolean delay =
          sc.isPresent() && WAIT_FOR_FIRST_CONSUMER.equals(sc.get().getVolumeBindingMode());
      if (delay && volumeName(pvc).isEmpty()) {
        delayed.add(pvc);
        volumesByClass.computeIfAbsent(className, c -> byName(objects.volumesOfClass(c)));
      } else {
        unboundImmediate = true;
      }
    }
    if (unboundImmediate) {
      return PreFilterStatus.refused(REASON_UNBOUND_IMMEDIATE);
    }
    return PreFilterStatus.passed(new VolumeBinding(objects, bound, delayed, volumesByClass));
  }

  /** Whether any of the pod's claims waits for its first consumer. */
  boolean waitsForFirstConsumer() {
    return !delayed.isEmpty();
  }

  /** The Filter's verdict for {@code node}; empty: it passes. */
  Optional<String> reject(Node node) {
    return decide(node).reasons().stream().findFirst();
  }

  /**
   * Upstream's {@code FindPodVolumes} for {@code node}: the bound claims' volumes must allow it;
   * then the claims waiting for their first consumer, those selected for a node first (for another
   * node: rejected at once), the others matched to existing volumes by increasing request ({@code
   * findMatchingVolumes}; equal requests keep the pod's order, as Go's insertion sort does for up
   * to 12 claims), and those left, after the selected ones, checked for provisioning ({@code
   * checkVolumeProvisions}: the first that cannot be provisioned decides). Remembered per node.
   */
  Decision decide(Node node) {
    return byNode.computeIfAbsent(node.getMetadata().getName(), n -> decideAnew(node));
  }

  private Decision decideAnew(Node node) {
    boolean boundSatisfied = true;
    boolean boundVolumesFound = true;
    for (PersistentVolumeClaim pvc : boundClaims) {
      Optional<PersistentVolume> pv = objects.volume(volumeName(pvc));
      if (pv.isEmpty()) {
        boundVolumesFound = false; // upstream stops at the first missing PV
        break;
      }
      if (!MatchingVolume.nodeAffinityAllows(pv.get(), node)) {
        boundSatisfied = false;
        break;
      }
    }
    Unbound unbound = delayed.isEmpty() ? Unbound.NONE : unbound(node);
    List<String> reasons = new ArrayList<>();
    if (!boundSatisfied) {
      reasons.add(REASON_NODE_CONFLICT);
    }
    if (!unbound.satisfied()) {
      reasons.add(REASON_BIND_CONFLICT);
    }
    if (!unbound.sufficientStorage()) {
      reasons.add(REASON_NOT_ENOUGH_SPACE);
    }
    if (!boundVolumesFound) {
      reasons.add(REASON_PV_NOT_EXIST);
    }
    return new Decision(
        List.copyOf(reasons), reasons.isEmpty() ? unbound.volumes() : PodVolumes.NONE);
  }

  /** The claims waiting for their first consumer on one node. */
  private record Unbound(boolean satisfied, boolean sufficientStorage, PodVolumes volumes) {
    static final Unbound NONE = new Unbound(true, true, PodVolumes.NONE);
    static final Unbound CONFLICT = new Unbound(false, true, PodVolumes.NONE);
  }

  private Unbound unbound(Node node) {
    String nodeName = node.getMetadata().getName();
    List<PersistentVolumeClaim> toProvision = new ArrayList<>();
    List<PersistentVolumeClaim> toMatch = new ArrayList<>();
    for (PersistentVolumeClaim pvc : delayed) {
      String selected = annotation(pvc, ANN_SELECTED_NODE);
      if (selected == null) {
        toMatch.add(pvc);
      } else if (selected.equals(nodeName)) {
        toProvision.add(pvc);
      } else {
        return Unbound.CONFLICT;
      }
    }
    toMatch.sort(Comparator.comparing(VolumeBinding::requestedStorage));
    List<PodVolumes.StaticBinding> bindings = new ArrayList<>();
    Set<String> chosen = new HashSet<>();
    boolean satisfied = true;
    for (PersistentVolumeClaim pvc : toMatch) {
      List<PersistentVolume> candidates =
          volumesByClass.getOrDefault(storageClassName(pvc), List.of());
      Optional<PersistentVolume> pv = MatchingVolume.find(pvc, candidates, node, chosen);
      if (pv.isEmpty()) {
        toProvision.add(pvc);
        satisfied = false;
      } else {
        chosen.add(pv.get().getMetadata().getName());
        bindings.add(new PodVolumes.StaticBinding(pvc, pv.get()));
      }
    }
    if (toProvision.isEmpty()) {
      return new Unbound(satisfied, true, new PodVolumes(List.copyOf(bindings), List.of()));
    }
    List<PodVolumes.DynamicProvision> provisions = new ArrayList<>();
    for (PersistentVolumeClaim pvc : toProvision) {
      StorageClass sc = objects.storageClass(storageClassName(pvc)).orElse(null);
      if (sc == null
          || sc.getProvisioner() == null
          || sc.getProvisioner().isEmpty()
          || NO_PROVISIONER.equals(sc.getProvisioner())
          || !allowedTopologiesMatch(sc, node)) {
        return Unbound.CONFLICT;
      }
      StorageCapacity.Check room = StorageCapacity.check(pvc, sc, node, objects);
      if (!room.enough()) {
        return new Unbound(true, false, PodVolumes.NONE);
      }
      provisions.add(new PodVolumes.DynamicProvision(pvc, room.capacity()));
    }
    return new Unbound(true, true, new PodVolumes(List.copyOf(bindings), List.copyOf(provisions)));
  }

  /** The claim's storage request, exactly; none is zero (upstream's zero {@code Quantity}). */
  private static BigDecimal requestedStorage(PersistentVolumeClaim pvc) {
    Quantity q = Quantity.fromApi(VolumeHelpers.storageRequest(pvc));
    return q == null ? BigDecimal.ZERO : q.value();
  }

  private static boolean isFullyBound(PersistentVolumeClaim pvc) {
    return !volumeName(pvc).isEmpty()
        && pvc.getMetadata().getAnnotations() != null
        && pvc.getMetadata().getAnnotations().containsKey(ANN_BIND_COMPLETED);
  }

  /**
   * The class's volumes by name: upstream lists them from an informer index, in no set order, so
   * that which of two equally small volumes it takes is not defined; ours is the first by name.
   */
  private static List<PersistentVolume> byName(List<PersistentVolume> volumes) {
    List<PersistentVolume> sorted = new ArrayList<>(volumes);
    sorted.sort(Comparator.comparing(pv -> pv.getMetadata().getName()));
    return sorted;
  }

  /** Upstream's {@code MatchTopologySelectorTerms}: none is all; an empty term matches nothing. */
  private static boolean allowedTopologiesMatch(StorageClass sc, Node node) {
    var terms = sc.getAllowedTopologies();
    if (terms == null || terms.isEmpty()) {
      return true;
    }
    Map<String, String> labels = labels(node);
    for (var term : terms) {
      var exprs = term.getMatchLabelExpressions();
      if (exprs == null || exprs.isEmpty()) {
        continue;
      }
      boolean all = true;
      for (var e : exprs) {
        String value = labels.get(e.getKey());
        if (value == null || e.getValues() == null || !e.getValues().contains(value)) {
          all = false;
          break;
        }
      }
      if (all) {
        return true;
      }
    }
    return false;
  }

  private static String annotation(PersistentVolumeClaim pvc, String key) {
    Map<String, String> ann = pvc.getMetadata().getAnnotations();
    return ann == null ? null : ann.get(key);
  }

  private static String notOwner(PersistentVolumeClaim pvc, Pod pod) {
    return "PVC "
        + pvc.getMetadata().getNamespace()
        + "/"
        + pvc.getMetadata().getName()
        + " was not created for pod "
        + pod.getMetadata().getNamespace()
        + "/"
        + pod.getMetadata().getName()
        + " (pod is not owner)";
  }
}
