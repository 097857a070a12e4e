package io.kdra.claimcontroller.scheduling;

import io.fabric8.kubernetes.api.model.Node;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.resource.v1.DeviceClass;
import io.fabric8.kubernetes.api.model.resource.v1.ResourceClaim;
import io.fabric8.kubernetes.api.model.resource.v1.ResourceClaimTemplate;
import io.fabric8.kubernetes.api.model.resource.v1.ResourceSlice;
import io.kdra.claimcontroller.domain.TemplateClaims;
import io.kdra.claimcontroller.domain.VolumeObjects;
import io.kdra.core.taint.DeviceTaintRule;
import java.util.List;
import java.util.Map;
import java.util.Optional;

/**
 * Read port for scheduling: what the informers have seen. Answers may lag behind the API server;
 * {@link RecentWrites} covers this controller's own writes until the informers catch up, and every
 * write is made with optimistic concurrency so that a stale answer never overwrites newer state.
 */
public interface ClusterView {

  List<Node> nodes();

  /** All pods (to count what bound pods request on each node). */
  List<Pod> pods();

  List<ResourceClaim> claims();

  Optional<ResourceClaim> claim(String namespace, String name);

  /**
   * The claims in {@code namespace} whose controlling owner is the pod (or PodGroup) with {@code
   * podUid}.
   */
  default List<ResourceClaim> claimsOwnedBy(String namespace, String podUid) {
    return claims().stream()
        .filter(c -> namespace.equals(c.getMetadata().getNamespace()))
        .filter(c -> TemplateClaims.owningPodOrGroupUid(c).map(podUid::equals).orElse(false))
        .toList();
  }

  /** The pod {@code namespace/name}, as known. */
  default Optional<Pod> pod(String namespace, String name) {
    return pods().stream()
        .filter(
            p ->
                namespace.equals(p.getMetadata().getNamespace())
                    && name.equals(p.getMetadata().getName()))
        .findFirst();
  }

  Optional<ResourceClaimTemplate> template(String namespace, String name);

  /**
   * Each namespace's labels, by name, for pod affinity terms with a {@code namespaceSelector}. By
   * default none is known: such a selector then picks no namespace.
   */
  default Map<String, Map<String, String>> namespaceLabels() {
    return Map.of();
  }

  /**
   * The PersistentVolumeClaims, PersistentVolumes, StorageClasses, CSINodes, CSIDrivers and
   * CSIStorageCapacities that the volume filters read. By default none: a pod naming a claim then
   * finds it missing.
   */
  default VolumeObjects volumes() {
    return VolumeObjects.NONE;
  }

  /** Told the key of each claim and pod whose answer changed, once the view answers with it. */
  interface Changes {
    void claim(String namespace, String name);

    void pod(String namespace, String name);

    /** The claim with {@code uid} was deleted (told after {@link #claim} for its key). */
    default void claimDeleted(String uid) {}
  }

  /**
   * Subscribes {@code changes} to every change of the view's claims and pods. Returns false when
   * the view gives no such notices (as by default): then state kept from its answers must be read
   * again in full each time.
   */
  default boolean subscribe(Changes changes) {
    return false;
  }

  List<ResourceSlice> slices();

  /**
   * The slices of one pool of one driver: by default a filter over {@link #slices()}; an informer
   * view answers from an index.
   */
  default List<ResourceSlice> poolSlices(String driver, String pool) {
    return slices().stream().filter(s -> TraceLinks.ofPool(s, driver, pool)).toList();
  }

  List<DeviceClass> deviceClasses();

  /**
   * The DeviceTaintRules (Kubernetes 1.37): their taints count as the slices' own. None where the
   * API server does not serve them.
   */
  default List<DeviceTaintRule> deviceTaintRules() {
    return List.of();
  }
}
