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
import io.fabric8.kubernetes.api.model.NodeBuilder;
import io.fabric8.kubernetes.api.model.ObjectReference;
import io.fabric8.kubernetes.api.model.PersistentVolume;
import io.fabric8.kubernetes.api.model.PersistentVolumeClaim;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.Volume;
import io.fabric8.kubernetes.api.model.storage.StorageClass;
import io.kdra.core.alloc.NodeSelectors;
import io.kdra.core.model.Quantity;
import java.math.BigDecimal;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Map;
import java.util.Optional;

/**
 * kube-scheduler 1.37's VolumeBinding plugin: the pod's claims must be usable (present, not lost,
 * not being deleted, an ephemeral one the pod's own) and bound, or wait for their first consumer; a
 * bound claim's PV must allow the node, and a waiting claim must be provisionable there, with room
 * for it where its CSI driver publishes storage capacity ({@link StorageCapacity}). Unbound claims
 * of a {@code WaitForFirstConsumer} class are provisioned on the chosen node ({@link
 * #waitingForFirstConsumer}); one that existing PersistentVolumes of its class could be bound to is
 * refused with the field named, since this scheduler does not bind existing volumes. Pure.
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

  private final VolumeObjects objects;
  private final List<PersistentVolumeClaim> boundClaims;
  private final List<PersistentVolumeClaim> delayed;

  private VolumeBinding(
      VolumeObjects objects,
      List<PersistentVolumeClaim> boundClaims,
      List<PersistentVolumeClaim> delayed) {
    this.objects = objects;
    this.boundClaims = boundClaims;
    this.delayed = delayed;
  }

  /** The PreFilter: the claims' state first, then whether each is bound, waits, or should be. */
  static PreFilterStatus<VolumeBinding> prefilter(Pod pod, VolumeObjects objects) {
    String ns = pod.getMetadata().getNamespace();
    List<Volume> volumes = volumes(pod);
    List<PersistentVolumeClaim> bound = new ArrayList<>();
    boolean unboundImmediate = false;
    List<PersistentVolumeClaim> delayed = new ArrayList<>();
    String staticOnly = null;
    for (int i = 0; i < volumes.size(); i++) {
      Volume v = volumes.get(i);
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
    for (int i = 0; i < volumes.size(); i++) {
      Volume v = volumes.get(i);
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
        if (staticOnly == null
            && annotation(pvc, ANN_SELECTED_NODE) == null
            && hasStaticVolume(objects, pvc, className)) {
          staticOnly = staticVolumes(i, v, pvc, className);
        }
      } else {
        unboundImmediate = true;
      }
    }
    if (unboundImmediate) {
      return PreFilterStatus.refused(REASON_UNBOUND_IMMEDIATE);
    }
    if (staticOnly != null) {
      return PreFilterStatus.unsupported(staticOnly);
    }
    return PreFilterStatus.passed(new VolumeBinding(objects, bound, delayed));
  }

  /** The claims to be provisioned on the chosen node. */
  List<PersistentVolumeClaim> waitingForFirstConsumer() {
    return delayed;
  }

  /** The Filter's verdict for {@code node}; empty: it passes. */
  Optional<String> reject(Node node) {
    // the bound claims' PVs must allow the node
    for (PersistentVolumeClaim pvc : boundClaims) {
      Optional<PersistentVolume> pv = objects.volume(volumeName(pvc));
      if (pv.isEmpty()) {
        return Optional.of(REASON_PV_NOT_EXIST); // upstream stops at the first missing PV
      }
      if (!nodeAffinityAllows(pv.get(), node)) {
        return Optional.of(REASON_NODE_CONFLICT);
      }
    }
    // claims waiting for their first consumer, provisioned on this node
    String nodeName = node.getMetadata().getName();
    for (PersistentVolumeClaim pvc : delayed) {
      String selected = annotation(pvc, ANN_SELECTED_NODE);
      if (selected != null && !selected.equals(nodeName)) {
        return Optional.of(REASON_BIND_CONFLICT);
      }
    }
    // upstream's checkVolumeProvisions: the first claim that cannot be provisioned here decides
    for (PersistentVolumeClaim pvc : inProvisioningOrder()) {
      StorageClass sc = objects.storageClass(storageClassName(pvc)).orElse(null);
      if (sc == null
          || sc.getProvisioner() == null
          || sc.getProvisioner().isEmpty()
          || NO_PROVISIONER.equals(sc.getProvisioner())
          || !allowedTopologiesMatch(sc, node)) {
        return Optional.of(REASON_BIND_CONFLICT);
      }
      if (!StorageCapacity.enough(pvc, sc, node, objects)) {
        return Optional.of(REASON_NOT_ENOUGH_SPACE);
      }
    }
    return Optional.empty();
  }

  /**
   * The waiting claims in the order upstream's FindPodVolumes checks them for provisioning: those
   * selected for a node first, in the pod's order; then the others by increasing storage request,
   * as findMatchingVolumes sorts them before passing on those it found no volume for (equal
   * requests keep the pod's order: Go's sort is an insertion sort for up to 12 claims).
   */
  private List<PersistentVolumeClaim> inProvisioningOrder() {
    List<PersistentVolumeClaim> selected = new ArrayList<>();
    List<PersistentVolumeClaim> others = new ArrayList<>();
    for (PersistentVolumeClaim pvc : delayed) {
      (annotation(pvc, ANN_SELECTED_NODE) != null ? selected : others).add(pvc);
    }
    others.sort(Comparator.comparing(VolumeBinding::requestedStorage));
    selected.addAll(others);
    return selected;
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

  private static boolean nodeAffinityAllows(PersistentVolume pv, Node node) {
    var affinity = pv.getSpec() == null ? null : pv.getSpec().getNodeAffinity();
    if (affinity == null || affinity.getRequired() == null) {
      return true;
    }
    // upstream matches a node made of the labels alone (matchFields see an empty name)
    Node labelsOnly =
        new NodeBuilder()
            .withNewMetadata()
            .withName("")
            .withLabels(labels(node))
            .endMetadata()
            .build();
    return NodeSelectors.matches(affinity.getRequired(), labelsOnly);
  }

  /**
   * Whether a PersistentVolume of the claim's class could be bound to it (available, or pre-bound
   * to it): upstream would bind such a volume rather than provision one, which this scheduler does
   * not do.
   */
  private static boolean hasStaticVolume(
      VolumeObjects objects, PersistentVolumeClaim pvc, String className) {
    for (PersistentVolume pv : objects.volumesOfClass(className)) {
      var ref = pv.getSpec() == null ? null : pv.getSpec().getClaimRef();
      String phase = pv.getStatus() == null ? null : pv.getStatus().getPhase();
      if (ref == null ? "Available".equals(phase) : refersTo(ref, pvc)) {
        return true;
      }
    }
    return false;
  }

  private static boolean refersTo(ObjectReference ref, PersistentVolumeClaim pvc) {
    return pvc.getMetadata().getName().equals(ref.getName())
        && pvc.getMetadata().getNamespace().equals(ref.getNamespace());
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

  private static String staticVolumes(
      int index, Volume v, PersistentVolumeClaim pvc, String className) {
    return "spec.volumes["
        + index
        + "]."
        + (v.getEphemeral() != null ? "ephemeral" : "persistentVolumeClaim")
        + ": PersistentVolumeClaim \""
        + pvc.getMetadata().getName()
        + "\" waits for its first consumer and StorageClass \""
        + className
        + "\" has PersistentVolumes it could be bound to; kdra's scheduler provisions such claims"
        + " but does not bind existing volumes: bind the claim first, or schedule this pod with"
        + " kube-scheduler (leave spec.schedulerName unset)";
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
