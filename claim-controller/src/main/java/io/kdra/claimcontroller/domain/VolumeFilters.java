package io.kdra.claimcontroller.domain;

import io.fabric8.kubernetes.api.model.Node;
import io.fabric8.kubernetes.api.model.NodeBuilder;
import io.fabric8.kubernetes.api.model.OwnerReference;
import io.fabric8.kubernetes.api.model.PersistentVolume;
import io.fabric8.kubernetes.api.model.PersistentVolumeClaim;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.Volume;
import io.fabric8.kubernetes.api.model.storage.CSINode;
import io.fabric8.kubernetes.api.model.storage.CSINodeDriver;
import io.fabric8.kubernetes.api.model.storage.StorageClass;
import io.kdra.core.alloc.NodeSelectors;
import java.util.ArrayList;
import java.util.Collection;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.function.Supplier;

/**
 * kube-scheduler 1.37's default volume plugins for a pod with {@code persistentVolumeClaim} or
 * {@code ephemeral} volumes, in the default profile's order: VolumeRestrictions, NodeVolumeLimits
 * (CSI), VolumeBinding, VolumeZone. {@link #prefilter} gives their PreFilter verdict (a reason that
 * holds for every node, in upstream's words) or the state their Filter reads; {@link #reject} gives
 * one node's verdict. Unbound claims of a {@code WaitForFirstConsumer} class are provisioned on the
 * chosen node ({@link #waitingForFirstConsumer}); one that existing PersistentVolumes of its class
 * could be bound to is refused with the field named, since this scheduler does not bind existing
 * volumes. Pure.
 */
public final class VolumeFilters {

  /** VolumeRestrictions' inline-disk conflict ({@code ErrReasonDiskConflict}). */
  public static final String REASON_DISK_CONFLICT = "node(s) had no available disk";

  /** VolumeRestrictions' {@code ErrReasonReadWriteOncePodConflict}. */
  public static final String REASON_RWOP_CONFLICT =
      "node(s) unavailable due to PersistentVolumeClaim with ReadWriteOncePod access mode already"
          + " in-use by another pod";

  /** NodeVolumeLimits' {@code ErrReasonMaxVolumeCountExceeded}. */
  public static final String REASON_MAX_VOLUME_COUNT = "node(s) exceed max volume count";

  /** VolumeBinding's {@code ErrReasonNodeConflict}. */
  public static final String REASON_NODE_CONFLICT =
      "node(s) didn't match PersistentVolume's node affinity";

  /** VolumeBinding's {@code ErrReasonBindConflict}. */
  public static final String REASON_BIND_CONFLICT =
      "node(s) didn't find available persistent volumes to bind";

  /** VolumeBinding's {@code ErrReasonPVNotExist}. */
  public static final String REASON_PV_NOT_EXIST =
      "node(s) unavailable due to one or more pvc(s) bound to non-existent pv(s)";

  /** VolumeZone's {@code ErrReasonConflict}. */
  public static final String REASON_ZONE_CONFLICT = "node(s) had no available volume zone";

  /** VolumeBinding's PreFilter reason for claims that should have been bound already. */
  public static final String REASON_UNBOUND_IMMEDIATE =
      "pod has unbound immediate PersistentVolumeClaims";

  static final String ANN_BIND_COMPLETED = "pv.kubernetes.io/bind-completed";

  /** The node a claim waiting for its first consumer is provisioned for (set at PreBind). */
  public static final String ANN_SELECTED_NODE = "volume.kubernetes.io/selected-node";

  static final String NO_PROVISIONER = "kubernetes.io/no-provisioner";
  static final String ANN_BETA_STORAGE_CLASS = "volume.beta.kubernetes.io/storage-class";
  static final String RWOP = "ReadWriteOncePod";
  static final String WAIT_FOR_FIRST_CONSUMER = "WaitForFirstConsumer";

  /** VolumeZone's topology labels, beta first, as upstream lists them. */
  private static final List<String> TOPOLOGY_LABELS =
      List.of(
          "failure-domain.beta.kubernetes.io/zone",
          "failure-domain.beta.kubernetes.io/region",
          "topology.kubernetes.io/zone",
          "topology.kubernetes.io/region");

  /** Nothing to check: the pod has no volume these plugins look at. */
  public static final VolumeFilters NONE =
      new VolumeFilters(
          null, null, VolumeObjects.NONE, List.of(), 0, List.of(), List.of(), List.of(), List::of);

  /**
   * The PreFilter's answer: a refusal for every node, or the filters for each node.
   *
   * @param refusal the reason, in upstream's words, or the field this scheduler cannot honour
   * @param unsupported whether the refusal is ours (a volume this scheduler does not bind)
   */
  public record PreFiltered(String refusal, boolean unsupported, VolumeFilters filters) {
    static PreFiltered refused(String why) {
      return refused(why, false);
    }

    /** A refusal; its filters reject every node with it. */
    static PreFiltered refused(String why, boolean unsupported) {
      return new PreFiltered(
          why,
          unsupported,
          new VolumeFilters(
              null,
              why,
              VolumeObjects.NONE,
              List.of(),
              0,
              List.of(),
              List.of(),
              List.of(),
              List::of));
    }

    public Optional<String> refused() {
      return Optional.ofNullable(refusal);
    }
  }

  /** One PersistentVolume's topology label: its key and the zones or regions it names. */
  private record PvTopology(String key, Set<String> values) {}

  private final Pod pod;
  private final String refusal;
  private final VolumeObjects objects;
  private final List<Volume> inlineDisks;
  private final int rwopConflicts;
  private final List<PersistentVolumeClaim> boundClaims;
  private final List<PersistentVolumeClaim> delayed;
  private final List<PvTopology> topologies;
  private final Supplier<Collection<Pod>> placed;
  private Map<String, List<Pod>> podsByNode;

  private VolumeFilters(
      Pod pod,
      String refusal,
      VolumeObjects objects,
      List<Volume> inlineDisks,
      int rwopConflicts,
      List<PersistentVolumeClaim> boundClaims,
      List<PersistentVolumeClaim> delayed,
      List<PvTopology> topologies,
      Supplier<Collection<Pod>> placed) {
    this.pod = pod;
    this.refusal = refusal;
    this.objects = objects;
    this.inlineDisks = inlineDisks;
    this.rwopConflicts = rwopConflicts;
    this.boundClaims = boundClaims;
    this.delayed = delayed;
    this.topologies = topologies;
    this.placed = placed;
  }

  /** Whether the pod has a volume these filters look at (else {@link #NONE} applies). */
  public static boolean concerns(Pod pod) {
    for (Volume v : volumes(pod)) {
      if (v.getPersistentVolumeClaim() != null || v.getEphemeral() != null || isInlineDisk(v)) {
        return true;
      }
    }
    return false;
  }

  /**
   * The PreFilters of the four plugins, in order; the first refusal wins, as upstream's framework
   * stops at the first PreFilter that fails.
   *
   * @param placed the pods bound or being bound to a node, not terminal, not the pod
   */
  public static PreFiltered prefilter(
      Pod pod, VolumeObjects objects, Supplier<Collection<Pod>> placed) {
    if (!concerns(pod)) {
      return new PreFiltered(null, false, NONE);
    }
    String ns = pod.getMetadata().getNamespace();
    List<Volume> volumes = volumes(pod);
    // VolumeRestrictions: every claim named directly must exist; ReadWriteOncePod ones in use
    Set<String> rwop = new HashSet<>();
    for (Volume v : volumes) {
      if (v.getPersistentVolumeClaim() == null) {
        continue;
      }
      String name = v.getPersistentVolumeClaim().getClaimName();
      Optional<PersistentVolumeClaim> pvc = objects.claim(ns, name);
      if (pvc.isEmpty()) {
        return PreFiltered.refused(notFound("persistentvolumeclaim", name));
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
    // VolumeBinding: the claims' state, then bound or not
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
        return PreFiltered.refused(
            ephemeral
                ? "waiting for ephemeral volume controller to create the persistentvolumeclaim \""
                    + name
                    + "\""
                : notFound("persistentvolumeclaim", name));
      }
      PersistentVolumeClaim pvc = found.get();
      if (pvc.getStatus() != null && "Lost".equals(pvc.getStatus().getPhase())) {
        return PreFiltered.refused(
            "persistentvolumeclaim \""
                + name
                + "\" bound to non-existent persistentvolume \""
                + volumeName(pvc)
                + "\"");
      }
      if (pvc.getMetadata().getDeletionTimestamp() != null) {
        return PreFiltered.refused("persistentvolumeclaim \"" + name + "\" is being deleted");
      }
      if (ephemeral && !isControlledBy(pvc, pod)) {
        return PreFiltered.refused(notOwner(pvc, pod));
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
        return PreFiltered.refused(
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
      return PreFiltered.refused(REASON_UNBOUND_IMMEDIATE);
    }
    if (staticOnly != null) {
      return PreFiltered.refused(staticOnly, true);
    }
    // VolumeZone: the topology labels of the PVs of the claims named directly
    List<PvTopology> topologies = new ArrayList<>();
    for (Volume v : volumes) {
      if (v.getPersistentVolumeClaim() == null) {
        continue;
      }
      String name = v.getPersistentVolumeClaim().getClaimName();
      if (name == null || name.isEmpty()) {
        return PreFiltered.refused("PersistentVolumeClaim had no name");
      }
      PersistentVolumeClaim pvc = objects.claim(ns, name).orElseThrow();
      if (volumeName(pvc).isEmpty()) {
        Optional<String> why = zoneUnbound(objects, pvc);
        if (why.isPresent()) {
          return PreFiltered.refused(why.get());
        }
        continue; // waits for its first consumer: no PV to take a zone from yet
      }
      Optional<PersistentVolume> pv = objects.volume(volumeName(pvc));
      if (pv.isEmpty()) {
        return PreFiltered.refused(notFound("persistentvolume", volumeName(pvc)));
      }
      topologies.addAll(topologies(pv.get()));
    }
    List<Volume> disks = volumes.stream().filter(VolumeFilters::isInlineDisk).toList();
    return new PreFiltered(
        null,
        false,
        new VolumeFilters(
            pod, null, objects, disks, conflicts, bound, delayed, topologies, placed));
  }

  /**
   * The pod's claims that wait for their first consumer, to be provisioned on the chosen node: each
   * gets the {@value #ANN_SELECTED_NODE} annotation at PreBind, and the pod is bound once they are.
   */
  public List<PersistentVolumeClaim> waitingForFirstConsumer() {
    return delayed;
  }

  /** The node's verdict, the first failing plugin's reason; empty: it passes. */
  public Optional<String> reject(Node node) {
    if (pod == null) {
      return Optional.ofNullable(refusal);
    }
    List<Pod> onNode = podsOn(node);
    // VolumeRestrictions
    for (Volume v : inlineDisks) {
      for (Pod p : onNode) {
        if (conflicts(v, p)) {
          return Optional.of(REASON_DISK_CONFLICT);
        }
      }
    }
    if (rwopConflicts > 0) {
      return Optional.of(REASON_RWOP_CONFLICT);
    }
    // NodeVolumeLimits
    if (exceedsVolumeLimits(node, onNode)) {
      return Optional.of(REASON_MAX_VOLUME_COUNT);
    }
    // VolumeBinding: the bound claims' PVs must allow the node
    for (PersistentVolumeClaim pvc : boundClaims) {
      Optional<PersistentVolume> pv = objects.volume(volumeName(pvc));
      if (pv.isEmpty()) {
        return Optional.of(REASON_PV_NOT_EXIST); // upstream stops at the first missing PV
      }
      if (!nodeAffinityAllows(pv.get(), node)) {
        return Optional.of(REASON_NODE_CONFLICT);
      }
    }
    // VolumeBinding: claims waiting for their first consumer, provisioned on this node
    String nodeName = node.getMetadata().getName();
    for (PersistentVolumeClaim pvc : delayed) {
      String selected = annotation(pvc, ANN_SELECTED_NODE);
      if (selected != null && !selected.equals(nodeName)) {
        return Optional.of(REASON_BIND_CONFLICT);
      }
    }
    for (PersistentVolumeClaim pvc : delayed) {
      StorageClass sc = objects.storageClass(storageClassName(pvc)).orElse(null);
      if (sc == null
          || sc.getProvisioner() == null
          || sc.getProvisioner().isEmpty()
          || NO_PROVISIONER.equals(sc.getProvisioner())
          || !allowedTopologiesMatch(sc, node)) {
        return Optional.of(REASON_BIND_CONFLICT);
      }
    }
    // VolumeZone: only nodes with a topology label are checked
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

  /** The placed pods on {@code node}, grouped once per attempt when first asked. */
  private List<Pod> podsOn(Node node) {
    if (podsByNode == null) {
      podsByNode = new HashMap<>();
      for (Pod p : placed.get()) {
        podsByNode.computeIfAbsent(p.getSpec().getNodeName(), n -> new ArrayList<>()).add(p);
      }
    }
    return podsByNode.getOrDefault(node.getMetadata().getName(), List.of());
  }

  // --- NodeVolumeLimits ---

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

  // --- VolumeRestrictions' inline disks ---

  static boolean isInlineDisk(Volume v) {
    return v.getGcePersistentDisk() != null
        || v.getAwsElasticBlockStore() != null
        || v.getRbd() != null
        || v.getIscsi() != null;
  }

  /** Upstream's {@code isVolumeConflict}: the same disk used by a pod there, not both read-only. */
  static boolean conflicts(Volume v, Pod existing) {
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
            && java.util.Objects.equals(
                orDefault(a.getPool(), "rbd"), orDefault(b.getPool(), "rbd"))
            && java.util.Objects.equals(a.getImage(), b.getImage())
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

  // --- helpers, as component-helpers has them ---

  /** The claim a volume uses: its {@code claimName}, or {@code <pod>-<volume>} when ephemeral. */
  public static String claimName(Pod pod, Volume v) {
    return v.getPersistentVolumeClaim() != null
        ? v.getPersistentVolumeClaim().getClaimName()
        : pod.getMetadata().getName() + "-" + v.getName();
  }

  /** The claims the pod's volumes use, in order (without repeats). */
  public static List<String> claimNames(Pod pod) {
    Set<String> names = new java.util.LinkedHashSet<>();
    for (Volume v : volumes(pod)) {
      if (v.getPersistentVolumeClaim() != null || v.getEphemeral() != null) {
        names.add(claimName(pod, v));
      }
    }
    return List.copyOf(names);
  }

  static boolean isFullyBound(PersistentVolumeClaim pvc) {
    return !volumeName(pvc).isEmpty()
        && pvc.getMetadata().getAnnotations() != null
        && pvc.getMetadata().getAnnotations().containsKey(ANN_BIND_COMPLETED);
  }

  static String storageClassName(PersistentVolumeClaim pvc) {
    Map<String, String> ann = pvc.getMetadata().getAnnotations();
    if (ann != null && ann.containsKey(ANN_BETA_STORAGE_CLASS)) {
      return ann.get(ANN_BETA_STORAGE_CLASS);
    }
    String name = pvc.getSpec() == null ? null : pvc.getSpec().getStorageClassName();
    return name == null ? "" : name;
  }

  private static String volumeName(PersistentVolumeClaim pvc) {
    String n = pvc.getSpec() == null ? null : pvc.getSpec().getVolumeName();
    return n == null ? "" : n;
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

  static boolean isControlledBy(PersistentVolumeClaim pvc, Pod pod) {
    if (!pod.getMetadata().getNamespace().equals(pvc.getMetadata().getNamespace())) {
      return false;
    }
    List<OwnerReference> refs = pvc.getMetadata().getOwnerReferences();
    return refs != null
        && refs.stream()
            .anyMatch(
                r ->
                    Boolean.TRUE.equals(r.getController())
                        && pod.getMetadata().getUid().equals(r.getUid()));
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

  private static boolean refersTo(
      io.fabric8.kubernetes.api.model.ObjectReference ref, PersistentVolumeClaim pvc) {
    return pvc.getMetadata().getName().equals(ref.getName())
        && pvc.getMetadata().getNamespace().equals(ref.getNamespace());
  }

  /** VolumeZone's PreFilter for a claim without a volume name (upstream's reasons). */
  private static Optional<String> zoneUnbound(VolumeObjects objects, PersistentVolumeClaim pvc) {
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

  private static String notFound(String resource, String name) {
    return resource + " \"" + name + "\" not found";
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

  private static List<Volume> volumes(Pod pod) {
    return pod.getSpec() == null || pod.getSpec().getVolumes() == null
        ? List.of()
        : pod.getSpec().getVolumes();
  }

  private static Map<String, String> labels(Node node) {
    return node.getMetadata().getLabels() == null ? Map.of() : node.getMetadata().getLabels();
  }

  private static boolean isTrue(Boolean b) {
    return Boolean.TRUE.equals(b);
  }

  private static String orDefault(String s, String d) {
    return s == null || s.isEmpty() ? d : s;
  }
}
