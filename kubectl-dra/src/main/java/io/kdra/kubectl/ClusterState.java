package io.kdra.kubectl;

import io.fabric8.kubernetes.api.model.HasMetadata;
import io.fabric8.kubernetes.api.model.Node;
import io.fabric8.kubernetes.api.model.ObjectMeta;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.resource.v1.DeviceClass;
import io.fabric8.kubernetes.api.model.resource.v1.ResourceClaim;
import io.fabric8.kubernetes.api.model.resource.v1.ResourceClaimTemplate;
import io.fabric8.kubernetes.api.model.resource.v1.ResourceSlice;
import io.kdra.claimcontroller.domain.ClaimLookup;
import io.kdra.claimcontroller.domain.TemplateClaims;
import io.kdra.claimcontroller.domain.VolumeObjects;
import io.kdra.claimcontroller.scheduling.ClusterView;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;

/**
 * What the plugin read from the cluster (or a what-if made of it): the objects the
 * claim-controller's informers hold, as the controller's own {@link ClusterView}, so that its
 * decisions run unchanged on them. Immutable.
 *
 * @param namespaceLabels each namespace's labels, by name (pod affinity's namespace selectors)
 * @param volumeObjects the PersistentVolumeClaims, PersistentVolumes, StorageClasses, CSINodes,
 *     CSIDrivers and CSIStorageCapacities the volume filters read; null where they could not be
 *     read (the volume filters are then not applied)
 */
record ClusterState(
    List<Node> nodes,
    List<Pod> pods,
    List<ResourceClaim> claims,
    List<ResourceClaimTemplate> templates,
    List<ResourceSlice> slices,
    List<DeviceClass> deviceClasses,
    Map<String, Map<String, String>> namespaceLabels,
    VolumeObjects volumeObjects)
    implements ClusterView {

  ClusterState {
    nodes = List.copyOf(nodes);
    pods = List.copyOf(pods);
    claims = List.copyOf(claims);
    templates = List.copyOf(templates);
    slices = List.copyOf(slices);
    deviceClasses = List.copyOf(deviceClasses);
    namespaceLabels = Map.copyOf(namespaceLabels);
  }

  /** The DRA objects alone: no namespace labels, no volumes (the volume filters not applied). */
  ClusterState(
      List<Node> nodes,
      List<Pod> pods,
      List<ResourceClaim> claims,
      List<ResourceClaimTemplate> templates,
      List<ResourceSlice> slices,
      List<DeviceClass> deviceClasses) {
    this(nodes, pods, claims, templates, slices, deviceClasses, Map.of(), null);
  }

  @Override
  public VolumeObjects volumes() {
    return volumeObjects == null ? VolumeObjects.NONE : volumeObjects;
  }

  @Override
  public Optional<ResourceClaim> claim(String namespace, String name) {
    return claims.stream().filter(c -> is(c.getMetadata(), namespace, name)).findFirst();
  }

  @Override
  public Optional<ResourceClaimTemplate> template(String namespace, String name) {
    return templates.stream().filter(t -> is(t.getMetadata(), namespace, name)).findFirst();
  }

  @Override
  public Optional<Pod> pod(String namespace, String name) {
    return pods.stream().filter(p -> is(p.getMetadata(), namespace, name)).findFirst();
  }

  /** The claim-controller's look-up port over these objects. */
  ClaimLookup lookup() {
    return new ClaimLookup() {
      @Override
      public Optional<ResourceClaim> claim(String namespace, String name) {
        return ClusterState.this.claim(namespace, name);
      }

      @Override
      public List<ResourceClaim> ownedBy(String namespace, String podUid) {
        return claims.stream()
            .filter(c -> namespace.equals(c.getMetadata().getNamespace()))
            .filter(
                c -> TemplateClaims.owningPod(c).map(o -> podUid.equals(o.getUid())).orElse(false))
            .toList();
      }

      @Override
      public Optional<ResourceClaimTemplate> template(String namespace, String name) {
        return ClusterState.this.template(namespace, name);
      }
    };
  }

  /** The same state with {@code claim} added, replacing one of the same namespace and name. */
  ClusterState withClaim(ResourceClaim claim) {
    List<ResourceClaim> cs = new ArrayList<>(claims);
    cs.removeIf(
        c ->
            is(c.getMetadata(), claim.getMetadata().getNamespace(), claim.getMetadata().getName()));
    cs.add(claim);
    return new ClusterState(
        nodes, pods, cs, templates, slices, deviceClasses, namespaceLabels, volumeObjects);
  }

  /** The same state with {@code pod} added, replacing one of the same namespace and name. */
  ClusterState withPod(Pod pod) {
    List<Pod> ps = new ArrayList<>(pods);
    ps.removeIf(
        p -> is(p.getMetadata(), pod.getMetadata().getNamespace(), pod.getMetadata().getName()));
    ps.add(pod);
    return new ClusterState(
        nodes, ps, claims, templates, slices, deviceClasses, namespaceLabels, volumeObjects);
  }

  /**
   * The same state with a manifest's templates, classes, slices and nodes added, each replacing the
   * object of the same namespace and name.
   */
  ClusterState plus(
      List<ResourceClaimTemplate> ts, List<DeviceClass> cs, List<ResourceSlice> ss, List<Node> ns) {
    return new ClusterState(
        merge(nodes, ns),
        pods,
        claims,
        merge(templates, ts),
        merge(slices, ss),
        merge(deviceClasses, cs),
        namespaceLabels,
        volumeObjects);
  }

  private static <T extends HasMetadata> List<T> merge(List<T> a, List<T> b) {
    List<T> out = new ArrayList<>(a);
    for (T t : b) {
      out.removeIf(
          x -> is(x.getMetadata(), t.getMetadata().getNamespace(), t.getMetadata().getName()));
      out.add(t);
    }
    return out;
  }

  private static boolean is(ObjectMeta m, String namespace, String name) {
    return m != null
        && Objects.equals(namespace, m.getNamespace())
        && Objects.equals(name, m.getName());
  }
}
