package io.kdra.claimcontroller.reconciler;

import io.fabric8.kubernetes.api.model.PersistentVolumeClaim;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.PodResourceClaim;
import io.fabric8.kubernetes.api.model.PodResourceClaimStatus;
import io.fabric8.kubernetes.api.model.resource.v1.ResourceClaim;
import io.javaoperatorsdk.operator.processing.event.ResourceID;
import io.javaoperatorsdk.operator.processing.event.source.IndexerResourceCache;
import io.kdra.claimcontroller.domain.PodGroupPolicy;
import io.kdra.claimcontroller.domain.Pods;
import io.kdra.claimcontroller.domain.TemplateClaims;
import io.kdra.claimcontroller.domain.VolumeFilters;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.Function;
import java.util.stream.Collectors;

/**
 * Which pods a change of a claim, node, slice or class concerns, as upstream's scheduling queue
 * hints decide: a claim concerns the pod that owns it and the pods that name it; a change that can
 * free devices or make a node usable (a claim deallocated, any node, slice or class event) concerns
 * the pods that were unschedulable. Pods not yet tried are queued already, and pods waiting for a
 * claim are woken by that claim's event, so neither is woken by every event: that fan-out (every
 * claim event to every pending pod of the namespace) cost most of the controller's CPU at 500
 * nodes. Thread-safe.
 */
final class PodTriggers {

  /** Index of the pod cache: {@code namespace/claim} for each claim a pod names. */
  static final String NAMED_CLAIM = "named-claim";

  /** Index of the pod cache: {@code namespace/podgroup} for a pod naming a PodGroup. */
  static final String POD_GROUP = "pod-group";

  /**
   * Index of the pod cache: {@code namespace/claim} for each PersistentVolumeClaim a pod's volumes
   * use (an ephemeral volume's is {@code <pod>-<volume>}).
   */
  static final String NAMED_VOLUME_CLAIM = "named-pvc";

  private final IndexerResourceCache<Pod> pods;

  /**
   * The pods marked unschedulable, each with its UID: a pod re-created under the name of one
   * deleted while it was tried must not lose its mark to the late end of the old pod's attempt.
   */
  private final Map<ResourceID, String> unschedulable = new ConcurrentHashMap<>();

  /** UIDs of claims seen allocated, so that an event without the allocation reads as freed. */
  private final Set<String> allocated = ConcurrentHashMap.newKeySet();

  /** UIDs of claims whose delete event is being dispatched ({@link #deleting}). */
  private final Set<String> deleted = ConcurrentHashMap.newKeySet();

  PodTriggers(IndexerResourceCache<Pod> pods) {
    this.pods = pods;
  }

  /** The indexer behind {@link #NAMED_CLAIM}, to add to the pod cache before it starts. */
  static Map<String, Function<Pod, List<String>>> podIndexers() {
    return Map.of(
        NAMED_CLAIM,
        PodTriggers::namedClaims,
        POD_GROUP,
        PodTriggers::podGroup,
        NAMED_VOLUME_CLAIM,
        PodTriggers::namedVolumeClaims);
  }

  static List<String> namedClaims(Pod pod) {
    String ns = pod.getMetadata().getNamespace();
    List<String> keys = new ArrayList<>();
    if (pod.getSpec() != null && pod.getSpec().getResourceClaims() != null) {
      for (PodResourceClaim e : pod.getSpec().getResourceClaims()) {
        if (e.getResourceClaimName() != null) {
          keys.add(ns + "/" + e.getResourceClaimName());
        }
      }
    }
    if (pod.getStatus() != null && pod.getStatus().getResourceClaimStatuses() != null) {
      for (PodResourceClaimStatus s : pod.getStatus().getResourceClaimStatuses()) {
        if (s.getResourceClaimName() != null) {
          keys.add(ns + "/" + s.getResourceClaimName());
        }
      }
    }
    return keys;
  }

  static List<String> namedVolumeClaims(Pod pod) {
    String ns = pod.getMetadata().getNamespace();
    return VolumeFilters.claimNames(pod).stream().map(n -> ns + "/" + n).toList();
  }

  /**
   * The pods a PersistentVolumeClaim's event concerns: the pending ones whose volumes use it (as
   * upstream's VolumeBinding hint queues the pods naming a claim created or changed).
   */
  Set<ResourceID> forVolumeClaim(PersistentVolumeClaim pvc) {
    String key = pvc.getMetadata().getNamespace() + "/" + pvc.getMetadata().getName();
    return pods.byIndex(NAMED_VOLUME_CLAIM, key).stream()
        .filter(p -> !Pods.isBound(p) && !Pods.isDone(p))
        .map(ResourceID::fromResource)
        .collect(Collectors.toSet());
  }

  static List<String> podGroup(Pod pod) {
    return PodGroupPolicy.groupOf(pod)
        .map(g -> List.of(pod.getMetadata().getNamespace() + "/" + g))
        .orElse(List.of());
  }

  /**
   * The pods a PodGroup's event concerns: its members not placed yet (upstream's gangscheduling
   * hints queue the group's pods; which events pass is {@link
   * io.kdra.claimcontroller.domain.PodGroupEvents}'s decision).
   */
  Set<ResourceID> forPodGroup(String namespace, String name) {
    return pods.byIndex(POD_GROUP, namespace + "/" + name).stream()
        .filter(p -> !Pods.isBound(p) && !Pods.isDone(p))
        .map(ResourceID::fromResource)
        .collect(Collectors.toSet());
  }

  /**
   * Records the outcome of an attempt: whether the pod is now waiting for the cluster to change.
   */
  void attempted(Pod pod, boolean isUnschedulable) {
    ResourceID id = ResourceID.fromResource(pod);
    String uid = pod.getMetadata().getUid();
    if (isUnschedulable) {
      unschedulable.put(id, uid);
    } else {
      unschedulable.remove(id, uid);
    }
  }

  /** The pods a change of {@code claim} concerns. */
  Set<ResourceID> forClaim(ResourceClaim claim) {
    Set<ResourceID> ids = new HashSet<>();
    String ns = claim.getMetadata().getNamespace();
    TemplateClaims.owningPod(claim).ifPresent(o -> ids.add(new ResourceID(o.getName(), ns)));
    for (Pod p : pods.byIndex(NAMED_CLAIM, ns + "/" + claim.getMetadata().getName())) {
      ids.add(ResourceID.fromResource(p));
    }
    if (freesDevices(claim)) {
      ids.addAll(unschedulable());
    }
    return ids;
  }

  /**
   * The pods a change of {@code pod} concerns: when a pod placed on a node is deleted or has
   * finished, it may have freed a host port, CPU or memory, or an anti-affinity or spread domain,
   * so those that did not fit anywhere (upstream's queueing hint on an assigned pod's delete).
   */
  Set<ResourceID> forPodChange(Pod pod, boolean deleted) {
    if (Pods.isBound(pod) && (deleted || Pods.isTerminal(pod))) {
      return unschedulable();
    }
    return Set.of();
  }

  /**
   * The pods a change of a node, slice, class, PersistentVolume, StorageClass, CSINode, CSIDriver
   * or CSIStorageCapacity concerns: those that did not fit anywhere.
   */
  Set<ResourceID> forClusterChange() {
    return unschedulable();
  }

  /**
   * Called for a claim's delete event before it is mapped: the event carries the claim's last
   * state, allocated or not, and frees whatever it held.
   */
  boolean deleting(ResourceClaim claim) {
    deleted.add(claim.getMetadata().getUid());
    return true;
  }

  /**
   * Whether this event of {@code claim} shows an allocation gone that an earlier one showed, or
   * deletes an allocated claim; remembers the allocated ones.
   */
  private boolean freesDevices(ResourceClaim claim) {
    String uid = claim.getMetadata().getUid();
    boolean has = claim.getStatus() != null && claim.getStatus().getAllocation() != null;
    if (deleted.remove(uid)) {
      return allocated.remove(uid) || has;
    }
    if (has) {
      allocated.add(uid);
      return false;
    }
    return allocated.remove(uid);
  }

  /**
   * The unschedulable pods that are still pending; forgets those gone (or replaced by a pod of the
   * same name) or placed since.
   */
  private Set<ResourceID> unschedulable() {
    unschedulable
        .entrySet()
        .removeIf(
            e ->
                pods.get(e.getKey())
                    .map(
                        p ->
                            !e.getValue().equals(p.getMetadata().getUid())
                                || Pods.isBound(p)
                                || Pods.isDone(p))
                    .orElse(true));
    return Set.copyOf(unschedulable.keySet());
  }

  /** The pending pods of {@code scheduler} in {@code namespace} (null: all). */
  static Set<ResourceID> pending(
      IndexerResourceCache<Pod> pods, String scheduler, String namespace) {
    return pods.list(
            p ->
                (namespace == null || namespace.equals(p.getMetadata().getNamespace()))
                    && Pods.isPending(p, scheduler))
        .map(ResourceID::fromResource)
        .collect(Collectors.toSet());
  }
}
