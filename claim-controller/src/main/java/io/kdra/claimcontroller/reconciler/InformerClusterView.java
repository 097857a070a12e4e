package io.kdra.claimcontroller.reconciler;

import io.fabric8.kubernetes.api.model.Namespace;
import io.fabric8.kubernetes.api.model.Node;
import io.fabric8.kubernetes.api.model.PersistentVolume;
import io.fabric8.kubernetes.api.model.PersistentVolumeClaim;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.resource.v1.DeviceClass;
import io.fabric8.kubernetes.api.model.resource.v1.ResourceClaim;
import io.fabric8.kubernetes.api.model.resource.v1.ResourceClaimTemplate;
import io.fabric8.kubernetes.api.model.resource.v1.ResourceSlice;
import io.fabric8.kubernetes.api.model.storage.CSIDriver;
import io.fabric8.kubernetes.api.model.storage.CSINode;
import io.fabric8.kubernetes.api.model.storage.CSIStorageCapacity;
import io.fabric8.kubernetes.api.model.storage.StorageClass;
import io.javaoperatorsdk.operator.processing.event.ResourceID;
import io.javaoperatorsdk.operator.processing.event.source.IndexerResourceCache;
import io.javaoperatorsdk.operator.processing.event.source.informer.InformerEventSource;
import io.kdra.claimcontroller.domain.TemplateClaims;
import io.kdra.claimcontroller.domain.VolumeObjects;
import io.kdra.claimcontroller.scheduling.ClusterView;
import io.kdra.core.taint.DeviceTaintRule;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.function.Function;

/**
 * {@link ClusterView} over the pod controller's primary cache, the claim informer it shares with
 * the cleanup controller, and its own informer event sources (DeviceTaintRules' only where served;
 * PersistentVolumeClaims, PersistentVolumes, StorageClasses, CSINodes, CSIDrivers and
 * CSIStorageCapacities for the volume filters).
 */
final class InformerClusterView implements ClusterView {

  /**
   * Index of the claim informer: the UID of each claim's controlling owner pod or PodGroup (added
   * by {@link ClaimReconciler}, whose primary informer it is).
   */
  static final String OWNER_POD = "owner-pod-uid";

  /** The indexer behind {@link #OWNER_POD}, to add to the claim informer before it starts. */
  static Map<String, Function<ResourceClaim, List<String>>> claimIndexers() {
    return Map.of(
        OWNER_POD, c -> TemplateClaims.owningPodOrGroupUid(c).map(List::of).orElse(List.of()));
  }

  /** Index of the slice informer: {@code <driver>/<pool>} (a driver name holds no slash). */
  static final String DRIVER_POOL = "driver-pool";

  /** The indexer behind {@link #DRIVER_POOL}, to add to the slice informer before it starts. */
  static Map<String, Function<ResourceSlice, List<String>>> sliceIndexers() {
    return Map.of(
        DRIVER_POOL,
        s ->
            s.getSpec() == null || s.getSpec().getPool() == null
                ? List.of()
                : List.of(poolKey(s.getSpec().getDriver(), s.getSpec().getPool().getName())));
  }

  private static String poolKey(String driver, String pool) {
    return driver + "/" + pool;
  }

  private final IndexerResourceCache<Pod> pods;
  private final SharedInformer<Pod> podEvents;
  private final SharedInformer<ResourceClaim> claims;
  private final InformerEventSource<ResourceClaimTemplate, Pod> templates;
  private final InformerEventSource<Node, Pod> nodes;
  private final InformerEventSource<ResourceSlice, Pod> slices;
  private final InformerEventSource<DeviceClass, Pod> classes;
  private final InformerEventSource<Namespace, Pod> namespaces;
  private final InformerEventSource<DeviceTaintRule, Pod> taintRules;
  private final Storage storage;

  /** The informers of the volume filters' objects ({@link VolumeObjects}). */
  record Storage(
      InformerEventSource<PersistentVolumeClaim, Pod> claims,
      InformerEventSource<PersistentVolume, Pod> volumes,
      InformerEventSource<StorageClass, Pod> classes,
      InformerEventSource<CSINode, Pod> csiNodes,
      InformerEventSource<CSIDriver, Pod> csiDrivers,
      InformerEventSource<CSIStorageCapacity, Pod> capacities) {

    boolean running() {
      return all().stream().allMatch(InformerEventSource::isRunning);
    }

    List<InformerEventSource<?, Pod>> all() {
      return List.of(claims, volumes, classes, csiNodes, csiDrivers, capacities);
    }
  }

  InformerClusterView(
      IndexerResourceCache<Pod> pods,
      SharedInformer<Pod> podEvents,
      SharedInformer<ResourceClaim> claims,
      InformerEventSource<ResourceClaimTemplate, Pod> templates,
      InformerEventSource<Node, Pod> nodes,
      InformerEventSource<ResourceSlice, Pod> slices,
      InformerEventSource<DeviceClass, Pod> classes,
      InformerEventSource<Namespace, Pod> namespaces,
      InformerEventSource<DeviceTaintRule, Pod> taintRules,
      Storage storage) {
    this.pods = pods;
    this.podEvents = podEvents;
    this.claims = claims;
    this.templates = templates;
    this.nodes = nodes;
    this.slices = slices;
    this.classes = classes;
    this.namespaces = namespaces;
    this.taintRules = taintRules;
    this.storage = storage;
  }

  /**
   * Whether every informer this view reads has started and the shared pod and claim informers have
   * synced; before that the caches are absent or partial, and a pass over them would fail or decide
   * on too little.
   */
  boolean synced() {
    return podEvents.isSynced()
        && claims.isSynced()
        && templates.isRunning()
        && nodes.isRunning()
        && slices.isRunning()
        && classes.isRunning()
        && namespaces.isRunning()
        && storage.running()
        && (taintRules == null || taintRules.isRunning());
  }

  @Override
  public List<Node> nodes() {
    return nodes.list(n -> true).toList();
  }

  @Override
  public List<Pod> pods() {
    return pods.list(p -> true).toList();
  }

  @Override
  public List<ResourceClaim> claims() {
    return claims.cache().list(c -> true).toList();
  }

  @Override
  public Optional<ResourceClaim> claim(String namespace, String name) {
    return claims.cache().get(new ResourceID(name, namespace));
  }

  @Override
  public List<ResourceClaim> claimsOwnedBy(String namespace, String podUid) {
    return claims.cache().byIndex(OWNER_POD, podUid).stream()
        .filter(c -> namespace.equals(c.getMetadata().getNamespace()))
        .toList();
  }

  @Override
  public Optional<Pod> pod(String namespace, String name) {
    return pods.get(new ResourceID(name, namespace));
  }

  @Override
  public Optional<ResourceClaimTemplate> template(String namespace, String name) {
    return templates.get(new ResourceID(name, namespace));
  }

  /** Both informers publish each event after their caches hold it. */
  @Override
  public boolean subscribe(Changes changes) {
    claims.subscribe(
        (c, deleted) -> {
          changes.claim(c.getMetadata().getNamespace(), c.getMetadata().getName());
          if (deleted) {
            changes.claimDeleted(c.getMetadata().getUid());
          }
        });
    podEvents.subscribe(
        (p, deleted) -> changes.pod(p.getMetadata().getNamespace(), p.getMetadata().getName()));
    return true;
  }

  @Override
  public Map<String, Map<String, String>> namespaceLabels() {
    Map<String, Map<String, String>> labels = new HashMap<>();
    namespaces
        .list(n -> true)
        .forEach(
            n ->
                labels.put(
                    n.getMetadata().getName(),
                    n.getMetadata().getLabels() == null ? Map.of() : n.getMetadata().getLabels()));
    return labels;
  }

  @Override
  public VolumeObjects volumes() {
    return new VolumeObjects() {
      @Override
      public Optional<PersistentVolumeClaim> claim(String namespace, String name) {
        return storage.claims().get(new ResourceID(name, namespace));
      }

      @Override
      public Optional<PersistentVolume> volume(String name) {
        return storage.volumes().get(new ResourceID(name));
      }

      @Override
      public Optional<StorageClass> storageClass(String name) {
        return storage.classes().get(new ResourceID(name));
      }

      @Override
      public Optional<CSINode> csiNode(String nodeName) {
        return storage.csiNodes().get(new ResourceID(nodeName));
      }

      @Override
      public Optional<CSIDriver> csiDriver(String name) {
        return storage.csiDrivers().get(new ResourceID(name));
      }

      @Override
      public List<CSIStorageCapacity> storageCapacities(String storageClass) {
        return storage
            .capacities()
            .list(c -> storageClass.equals(c.getStorageClassName()))
            .toList();
      }

      @Override
      public List<PersistentVolume> volumesOfClass(String storageClass) {
        return storage
            .volumes()
            .list(pv -> storageClass.equals(VolumeObjects.classOf(pv)))
            .toList();
      }
    };
  }

  @Override
  public List<ResourceSlice> slices() {
    return slices.list(s -> true).toList();
  }

  @Override
  public List<ResourceSlice> poolSlices(String driver, String pool) {
    return slices.byIndex(DRIVER_POOL, poolKey(driver, pool));
  }

  @Override
  public List<DeviceClass> deviceClasses() {
    return classes.list(c -> true).toList();
  }

  /**
   * None when the API server serves no DeviceTaintRules (no informer then), or before the informer
   * has started (its cache does not exist yet: the eviction's first passes may come earlier).
   */
  @Override
  public List<DeviceTaintRule> deviceTaintRules() {
    return taintRules == null || !taintRules.isRunning()
        ? List.of()
        : taintRules.list(r -> true).toList();
  }
}
