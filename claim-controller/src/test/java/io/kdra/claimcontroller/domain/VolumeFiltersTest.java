package io.kdra.claimcontroller.domain;

import static org.assertj.core.api.Assertions.assertThat;

import io.fabric8.kubernetes.api.model.Node;
import io.fabric8.kubernetes.api.model.PersistentVolume;
import io.fabric8.kubernetes.api.model.PersistentVolumeBuilder;
import io.fabric8.kubernetes.api.model.PersistentVolumeClaim;
import io.fabric8.kubernetes.api.model.PersistentVolumeClaimBuilder;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.PodBuilder;
import io.fabric8.kubernetes.api.model.Quantity;
import io.fabric8.kubernetes.api.model.storage.CSIDriver;
import io.fabric8.kubernetes.api.model.storage.CSIDriverBuilder;
import io.fabric8.kubernetes.api.model.storage.CSINode;
import io.fabric8.kubernetes.api.model.storage.CSINodeBuilder;
import io.fabric8.kubernetes.api.model.storage.CSIStorageCapacity;
import io.fabric8.kubernetes.api.model.storage.CSIStorageCapacityBuilder;
import io.fabric8.kubernetes.api.model.storage.StorageClass;
import io.fabric8.kubernetes.api.model.storage.StorageClassBuilder;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.stream.Stream;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * Each verdict of kube-scheduler 1.37.2's volume plugins, with upstream's reason strings (from
 * volumebinding/binder.go and volume_binding.go, volumezone, volumerestrictions, nodevolumelimits
 * and component-helpers' ephemeral.go).
 */
class VolumeFiltersTest {

  /**
   * One case: the pod, what exists, the pods placed already, the node; the expected reason (null:
   * the node passes), and whether it is a refusal of every node (a PreFilter's).
   */
  record Row(
      String name,
      Pod pod,
      Objects objects,
      List<Pod> placed,
      Node node,
      String expected,
      boolean everyNode) {
    @Override
    public String toString() {
      return name;
    }
  }

  /** The cluster's volume objects of one row. */
  record Objects(
      List<PersistentVolumeClaim> pvcs,
      List<PersistentVolume> pvs,
      List<StorageClass> classes,
      List<CSINode> csiNodes,
      List<CSIDriver> csiDrivers,
      List<CSIStorageCapacity> capacities) {
    static Objects of(Object... all) {
      List<PersistentVolumeClaim> pvcs = new ArrayList<>();
      List<PersistentVolume> pvs = new ArrayList<>();
      List<StorageClass> scs = new ArrayList<>();
      List<CSINode> cns = new ArrayList<>();
      List<CSIDriver> drivers = new ArrayList<>();
      List<CSIStorageCapacity> caps = new ArrayList<>();
      for (Object o : all) {
        if (o instanceof PersistentVolumeClaim c) {
          pvcs.add(c);
        } else if (o instanceof PersistentVolume v) {
          pvs.add(v);
        } else if (o instanceof StorageClass sc) {
          scs.add(sc);
        } else if (o instanceof CSINode n) {
          cns.add(n);
        } else if (o instanceof CSIDriver d) {
          drivers.add(d);
        } else if (o instanceof CSIStorageCapacity c) {
          caps.add(c);
        } else {
          throw new IllegalArgumentException(String.valueOf(o));
        }
      }
      return new Objects(pvcs, pvs, scs, cns, drivers, caps);
    }

    VolumeObjects view() {
      return VolumeObjects.of(pvcs, pvs, classes, csiNodes, csiDrivers, capacities);
    }
  }

  static Stream<Row> rows() {
    Node nodeA =
        K.node("node-a")
            .editMetadata()
            .addToLabels("topology.kubernetes.io/zone", "z1")
            .endMetadata()
            .build();
    Node plain = K.node("node-b").build();
    return Stream.of(
        // VolumeRestrictions / VolumeBinding PreFilter
        refused(
            "claim missing",
            podWithClaim("p", "data"),
            Objects.of(),
            "persistentvolumeclaim \"data\" not found"),
        refused(
            "ephemeral claim not made yet",
            podWithEphemeral("p", "scratch"),
            Objects.of(),
            "waiting for ephemeral volume controller to create the persistentvolumeclaim"
                + " \"p-scratch\""),
        refused(
            "ephemeral claim owned by another pod",
            podWithEphemeral("p", "scratch"),
            Objects.of(
                bound(
                    pvc("p-scratch")
                        .editMetadata()
                        .addNewOwnerReference()
                        .withKind("Pod")
                        .withName("q")
                        .withUid("uid-q")
                        .withController(true)
                        .endOwnerReference()
                        .endMetadata(),
                    "pv-1"),
                pv("pv-1")),
            "PVC ns/p-scratch was not created for pod ns/p (pod is not owner)"),
        passes(
            "ephemeral claim owned by the pod, bound",
            podWithEphemeral("p", "scratch"),
            Objects.of(
                bound(
                    pvc("p-scratch")
                        .editMetadata()
                        .addNewOwnerReference()
                        .withKind("Pod")
                        .withName("p")
                        .withUid("uid-p")
                        .withController(true)
                        .endOwnerReference()
                        .endMetadata(),
                    "pv-1"),
                pv("pv-1")),
            nodeA),
        refused(
            "claim being deleted",
            podWithClaim("p", "data"),
            Objects.of(
                bound(
                    pvc("data")
                        .editMetadata()
                        .withDeletionTimestamp("2026-12-07T00:00:00Z")
                        .endMetadata(),
                    "pv-1"),
                pv("pv-1")),
            "persistentvolumeclaim \"data\" is being deleted"),
        refused(
            "claim lost",
            podWithClaim("p", "data"),
            Objects.of(
                pvc("data")
                    .withNewSpec()
                    .withVolumeName("gone")
                    .endSpec()
                    .withNewStatus()
                    .withPhase("Lost")
                    .endStatus()
                    .build()),
            "persistentvolumeclaim \"data\" bound to non-existent persistentvolume \"gone\""),
        refused(
            "unbound, no class",
            podWithClaim("p", "data"),
            Objects.of(pvc("data").build()),
            VolumeFilters.REASON_UNBOUND_IMMEDIATE),
        refused(
            "unbound, Immediate class",
            podWithClaim("p", "data"),
            Objects.of(pvcOfClass("data", "fast"), storageClass("fast", "Immediate")),
            VolumeFilters.REASON_UNBOUND_IMMEDIATE),
        refused(
            "unbound, class missing (upstream: immediate)",
            podWithClaim("p", "data"),
            Objects.of(pvcOfClass("data", "none")),
            VolumeFilters.REASON_UNBOUND_IMMEDIATE),
        refused(
            "volume name set but binding not completed: prebound, immediate",
            podWithClaim("p", "data"),
            Objects.of(
                new PersistentVolumeClaimBuilder(pvcOfClass("data", "wait"))
                    .editSpec()
                    .withVolumeName("pv-1")
                    .endSpec()
                    .build(),
                storageClass("wait", "WaitForFirstConsumer"),
                pv("pv-1")),
            VolumeFilters.REASON_UNBOUND_IMMEDIATE),
        passes(
            "unbound, WaitForFirstConsumer with an available PV of its class: bound to it (more in"
                + " VolumeStaticBindingTest)",
            podWithClaim("p", "data"),
            Objects.of(
                pvcOfClass("data", "wait"),
                storageClass("wait", "WaitForFirstConsumer"),
                new PersistentVolumeBuilder(pv("pv-1"))
                    .editSpec()
                    .withStorageClassName("wait")
                    .withAccessModes("ReadWriteOnce")
                    .endSpec()
                    .withNewStatus()
                    .withPhase("Available")
                    .endStatus()
                    .build()),
            nodeA),
        passes(
            "unbound, WaitForFirstConsumer, provisioned anywhere",
            podWithClaim("p", "data"),
            Objects.of(pvcOfClass("data", "wait"), storageClass("wait", "WaitForFirstConsumer")),
            nodeA),
        passes(
            "unbound, WaitForFirstConsumer, a bound PV of the class is no candidate",
            podWithClaim("p", "data"),
            Objects.of(
                pvcOfClass("data", "wait"),
                storageClass("wait", "WaitForFirstConsumer"),
                new PersistentVolumeBuilder(pv("pv-1"))
                    .editSpec()
                    .withStorageClassName("wait")
                    .withNewClaimRef()
                    .withNamespace(K.NS)
                    .withName("other")
                    .endClaimRef()
                    .endSpec()
                    .withNewStatus()
                    .withPhase("Bound")
                    .endStatus()
                    .build()),
            nodeA),
        rejected(
            "unbound, WaitForFirstConsumer, the class's allowed topologies exclude the node",
            podWithClaim("p", "data"),
            Objects.of(
                pvcOfClass("data", "wait"),
                new StorageClassBuilder(storageClass("wait", "WaitForFirstConsumer"))
                    .addToAllowedTopologies(
                        new io.fabric8.kubernetes.api.model.TopologySelectorTermBuilder()
                            .addNewMatchLabelExpression()
                            .withKey("topology.kubernetes.io/zone")
                            .withValues("z2")
                            .endMatchLabelExpression()
                            .build())
                    .build()),
            List.of(),
            nodeA,
            VolumeFilters.REASON_BIND_CONFLICT),
        passes(
            "unbound, WaitForFirstConsumer, the class's allowed topologies include the node",
            podWithClaim("p", "data"),
            Objects.of(
                pvcOfClass("data", "wait"),
                new StorageClassBuilder(storageClass("wait", "WaitForFirstConsumer"))
                    .addToAllowedTopologies(
                        new io.fabric8.kubernetes.api.model.TopologySelectorTermBuilder()
                            .addNewMatchLabelExpression()
                            .withKey("topology.kubernetes.io/zone")
                            .withValues("z2", "z1")
                            .endMatchLabelExpression()
                            .build())
                    .build()),
            nodeA),
        rejected(
            "unbound, WaitForFirstConsumer, no provisioner and no PV",
            podWithClaim("p", "data"),
            Objects.of(
                pvcOfClass("data", "wait"),
                new StorageClassBuilder(storageClass("wait", "WaitForFirstConsumer"))
                    .withProvisioner("kubernetes.io/no-provisioner")
                    .build()),
            List.of(),
            nodeA,
            VolumeFilters.REASON_BIND_CONFLICT),
        rejected(
            "unbound, WaitForFirstConsumer, selected for another node",
            podWithClaim("p", "data"),
            Objects.of(
                selectedFor(pvcOfClass("data", "wait"), "node-b"),
                storageClass("wait", "WaitForFirstConsumer")),
            List.of(),
            nodeA,
            VolumeFilters.REASON_BIND_CONFLICT),
        passes(
            "unbound, WaitForFirstConsumer, selected for this node",
            podWithClaim("p", "data"),
            Objects.of(
                selectedFor(pvcOfClass("data", "wait"), "node-a"),
                storageClass("wait", "WaitForFirstConsumer")),
            nodeA),
        rejected(
            "unbound ephemeral claim, WaitForFirstConsumer, CSI limit counts it by its class",
            podWithEphemeral("p", "s"),
            Objects.of(
                new PersistentVolumeClaimBuilder(pvcOfClass("p-s", "wait"))
                    .editMetadata()
                    .addNewOwnerReference()
                    .withKind("Pod")
                    .withName("p")
                    .withUid("uid-p")
                    .withController(true)
                    .endOwnerReference()
                    .endMetadata()
                    .build(),
                storageClass("wait", "WaitForFirstConsumer"),
                bound(pvc("other"), "pv-2"),
                csiPv("pv-2", "h2"),
                csiNode("node-a", 1)),
            List.of(placedOn(podWithClaim("q", "other"), "node-a")),
            nodeA,
            VolumeFilters.REASON_MAX_VOLUME_COUNT),
        // VolumeBinding Filter: storage capacity of a claim to be provisioned (hasEnoughCapacity)
        passes(
            "capacity: the driver does not opt in (storageCapacity unset), not checked",
            podWithClaim("p", "data"),
            Objects.of(
                sized(pvcOfClass("data", "wait"), "10Gi"),
                storageClass("wait", "WaitForFirstConsumer"),
                csiDriver(null),
                capacity("wait", "1Gi", null, ZONE_Z1)),
            nodeA),
        passes(
            "capacity: the driver opts out (storageCapacity false), not checked",
            podWithClaim("p", "data"),
            Objects.of(
                sized(pvcOfClass("data", "wait"), "10Gi"),
                storageClass("wait", "WaitForFirstConsumer"),
                csiDriver(false),
                capacity("wait", "1Gi", null, ZONE_Z1)),
            nodeA),
        passes(
            "capacity: no CSIDriver object for the provisioner, not checked (as upstream)",
            podWithClaim("p", "data"),
            Objects.of(
                sized(pvcOfClass("data", "wait"), "10Gi"),
                storageClass("wait", "WaitForFirstConsumer")),
            nodeA),
        passes(
            "capacity: the claim requests no storage, not checked",
            podWithClaim("p", "data"),
            Objects.of(
                pvcOfClass("data", "wait"),
                storageClass("wait", "WaitForFirstConsumer"),
                csiDriver(true)),
            nodeA),
        rejected(
            "capacity: the driver opts in and no CSIStorageCapacity exists",
            podWithClaim("p", "data"),
            Objects.of(
                sized(pvcOfClass("data", "wait"), "10Gi"),
                storageClass("wait", "WaitForFirstConsumer"),
                csiDriver(true)),
            List.of(),
            nodeA,
            VolumeFilters.REASON_NOT_ENOUGH_SPACE),
        passes(
            "capacity: enough (capacity equal to the request)",
            podWithClaim("p", "data"),
            Objects.of(
                sized(pvcOfClass("data", "wait"), "10Gi"),
                storageClass("wait", "WaitForFirstConsumer"),
                csiDriver(true),
                capacity("wait", "10Gi", null, ZONE_Z1)),
            nodeA),
        rejected(
            "capacity: not enough",
            podWithClaim("p", "data"),
            Objects.of(
                sized(pvcOfClass("data", "wait"), "10Gi"),
                storageClass("wait", "WaitForFirstConsumer"),
                csiDriver(true),
                capacity("wait", "9Gi", null, ZONE_Z1)),
            List.of(),
            nodeA,
            VolumeFilters.REASON_NOT_ENOUGH_SPACE),
        rejected(
            "capacity: enough, but for another class",
            podWithClaim("p", "data"),
            Objects.of(
                sized(pvcOfClass("data", "wait"), "10Gi"),
                storageClass("wait", "WaitForFirstConsumer"),
                csiDriver(true),
                capacity("other", "100Gi", null, ZONE_Z1)),
            List.of(),
            nodeA,
            VolumeFilters.REASON_NOT_ENOUGH_SPACE),
        rejected(
            "capacity: enough, but its topology does not select the node",
            podWithClaim("p", "data"),
            Objects.of(
                sized(pvcOfClass("data", "wait"), "10Gi"),
                storageClass("wait", "WaitForFirstConsumer"),
                csiDriver(true),
                capacity("wait", "100Gi", null, Map.of("topology.kubernetes.io/zone", "z2"))),
            List.of(),
            nodeA,
            VolumeFilters.REASON_NOT_ENOUGH_SPACE),
        rejected(
            "capacity: enough, but without a topology (available nowhere)",
            podWithClaim("p", "data"),
            Objects.of(
                sized(pvcOfClass("data", "wait"), "10Gi"),
                storageClass("wait", "WaitForFirstConsumer"),
                csiDriver(true),
                capacity("wait", "100Gi", null, null)),
            List.of(),
            nodeA,
            VolumeFilters.REASON_NOT_ENOUGH_SPACE),
        passes(
            "capacity: an empty topology selects every node",
            podWithClaim("p", "data"),
            Objects.of(
                sized(pvcOfClass("data", "wait"), "10Gi"),
                storageClass("wait", "WaitForFirstConsumer"),
                csiDriver(true),
                capacity("wait", "100Gi", null, Map.of())),
            plain),
        passes(
            "capacity: one of several objects is enough and selects the node",
            podWithClaim("p", "data"),
            Objects.of(
                sized(pvcOfClass("data", "wait"), "10Gi"),
                storageClass("wait", "WaitForFirstConsumer"),
                csiDriver(true),
                capacity("wait", "100Gi", null, Map.of("topology.kubernetes.io/zone", "z2")),
                capacity("wait", "1Gi", null, ZONE_Z1),
                capacity("wait", "20Gi", null, ZONE_Z1)),
            nodeA),
        rejected(
            "capacity: maximumVolumeSize is preferred over a larger capacity",
            podWithClaim("p", "data"),
            Objects.of(
                sized(pvcOfClass("data", "wait"), "10Gi"),
                storageClass("wait", "WaitForFirstConsumer"),
                csiDriver(true),
                capacity("wait", "100Gi", "5Gi", ZONE_Z1)),
            List.of(),
            nodeA,
            VolumeFilters.REASON_NOT_ENOUGH_SPACE),
        passes(
            "capacity: maximumVolumeSize is preferred over a smaller capacity",
            podWithClaim("p", "data"),
            Objects.of(
                sized(pvcOfClass("data", "wait"), "10Gi"),
                storageClass("wait", "WaitForFirstConsumer"),
                csiDriver(true),
                capacity("wait", "5Gi", "10Gi", ZONE_Z1)),
            nodeA),
        passes(
            "capacity: maximumVolumeSize alone (capacity unset)",
            podWithClaim("p", "data"),
            Objects.of(
                sized(pvcOfClass("data", "wait"), "10Gi"),
                storageClass("wait", "WaitForFirstConsumer"),
                csiDriver(true),
                capacity("wait", null, "10Gi", ZONE_Z1)),
            nodeA),
        rejected(
            "capacity: neither capacity nor maximumVolumeSize set is no capacity",
            podWithClaim("p", "data"),
            Objects.of(
                sized(pvcOfClass("data", "wait"), "10Gi"),
                storageClass("wait", "WaitForFirstConsumer"),
                csiDriver(true),
                capacity("wait", null, null, ZONE_Z1)),
            List.of(),
            nodeA,
            VolumeFilters.REASON_NOT_ENOUGH_SPACE),
        passes(
            "capacity: compared in whole bytes, the request rounded up (1500m is 2)",
            podWithClaim("p", "data"),
            Objects.of(
                sized(pvcOfClass("data", "wait"), "1500m"),
                storageClass("wait", "WaitForFirstConsumer"),
                csiDriver(true),
                capacity("wait", "2", null, ZONE_Z1)),
            nodeA),
        rejected(
            "capacity: compared in whole bytes, 2001m needs 3",
            podWithClaim("p", "data"),
            Objects.of(
                sized(pvcOfClass("data", "wait"), "2001m"),
                storageClass("wait", "WaitForFirstConsumer"),
                csiDriver(true),
                capacity("wait", "2", null, ZONE_Z1)),
            List.of(),
            nodeA,
            VolumeFilters.REASON_NOT_ENOUGH_SPACE),
        passes(
            "capacity: each claim is checked alone, not summed",
            podWithClaims("p", "a", "b"),
            Objects.of(
                sized(pvcOfClass("a", "wait"), "10Gi"),
                sized(pvcOfClass("b", "wait"), "10Gi"),
                storageClass("wait", "WaitForFirstConsumer"),
                csiDriver(true),
                capacity("wait", "10Gi", null, ZONE_Z1)),
            nodeA),
        rejected(
            "capacity: not checked when the class's topology already excludes the node",
            podWithClaim("p", "data"),
            Objects.of(
                sized(pvcOfClass("data", "wait"), "10Gi"),
                new StorageClassBuilder(storageClass("wait", "WaitForFirstConsumer"))
                    .addToAllowedTopologies(
                        new io.fabric8.kubernetes.api.model.TopologySelectorTermBuilder()
                            .addNewMatchLabelExpression()
                            .withKey("topology.kubernetes.io/zone")
                            .withValues("z2")
                            .endMatchLabelExpression()
                            .build())
                    .build(),
                csiDriver(true)),
            List.of(),
            nodeA,
            VolumeFilters.REASON_BIND_CONFLICT),
        rejected(
            "capacity: the claims in upstream's order, the smaller one first (no room, then no"
                + " provisioner)",
            podWithClaims("p", "big", "small"),
            Objects.of(
                sized(pvcOfClass("big", "none"), "10Gi"),
                sized(pvcOfClass("small", "wait"), "1Gi"),
                new StorageClassBuilder(storageClass("none", "WaitForFirstConsumer"))
                    .withProvisioner("kubernetes.io/no-provisioner")
                    .build(),
                storageClass("wait", "WaitForFirstConsumer"),
                csiDriver(true)),
            List.of(),
            nodeA,
            VolumeFilters.REASON_NOT_ENOUGH_SPACE),
        rejected(
            "capacity: the claims in upstream's order, one selected for the node first",
            podWithClaims("p", "small", "picked"),
            Objects.of(
                sized(pvcOfClass("small", "wait"), "1Gi"),
                selectedFor(sized(pvcOfClass("picked", "none"), "10Gi"), "node-a"),
                new StorageClassBuilder(storageClass("none", "WaitForFirstConsumer"))
                    .withProvisioner("kubernetes.io/no-provisioner")
                    .build(),
                storageClass("wait", "WaitForFirstConsumer"),
                csiDriver(true)),
            List.of(),
            nodeA,
            VolumeFilters.REASON_BIND_CONFLICT),
        // VolumeZone PreFilter
        refused(
            "bound to a PV that does not exist",
            podWithClaim("p", "data"),
            Objects.of(bound(pvc("data"), "gone")),
            "persistentvolume \"gone\" not found"),
        // VolumeBinding Filter
        passes(
            "bound, PV without node affinity",
            podWithClaim("p", "data"),
            Objects.of(bound(pvc("data"), "pv-1"), pv("pv-1")),
            nodeA),
        passes(
            "bound, PV's node affinity matches",
            podWithClaim("p", "data"),
            Objects.of(bound(pvc("data"), "pv-1"), pvOnZone("pv-1", "z1")),
            nodeA),
        rejected(
            "bound, PV's node affinity does not match",
            podWithClaim("p", "data"),
            Objects.of(bound(pvc("data"), "pv-1"), pvOnZone("pv-1", "z2")),
            List.of(),
            nodeA,
            VolumeFilters.REASON_NODE_CONFLICT),
        rejected(
            "ephemeral bound to a PV that does not exist",
            podWithEphemeral("p", "s"),
            Objects.of(
                bound(
                    pvc("p-s")
                        .editMetadata()
                        .addNewOwnerReference()
                        .withKind("Pod")
                        .withName("p")
                        .withUid("uid-p")
                        .withController(true)
                        .endOwnerReference()
                        .endMetadata(),
                    "gone")),
            List.of(),
            nodeA,
            VolumeFilters.REASON_PV_NOT_EXIST),
        // VolumeZone Filter
        rejected(
            "PV labelled with another zone",
            podWithClaim("p", "data"),
            Objects.of(
                bound(pvc("data"), "pv-1"),
                pvLabelled("pv-1", "topology.kubernetes.io/zone", "z2")),
            List.of(),
            nodeA,
            VolumeFilters.REASON_ZONE_CONFLICT),
        passes(
            "PV labelled with zones including the node's (beta key, multi-zone)",
            podWithClaim("p", "data"),
            Objects.of(
                bound(pvc("data"), "pv-1"),
                pvLabelled("pv-1", "failure-domain.beta.kubernetes.io/zone", "z2__z1")),
            nodeA),
        passes(
            "node without any topology label is not checked",
            podWithClaim("p", "data"),
            Objects.of(
                bound(pvc("data"), "pv-1"),
                pvLabelled("pv-1", "topology.kubernetes.io/zone", "z2")),
            plain),
        // VolumeRestrictions Filter
        rejected(
            "ReadWriteOncePod claim used by a placed pod",
            podWithClaim("p", "data"),
            Objects.of(bound(rwop(pvc("data")), "pv-1"), pv("pv-1")),
            List.of(placedOn(podWithClaim("q", "data"), "node-b")),
            nodeA,
            VolumeFilters.REASON_RWOP_CONFLICT),
        passes(
            "ReadWriteOnce claim used by a placed pod",
            podWithClaim("p", "data"),
            Objects.of(bound(pvc("data"), "pv-1"), pv("pv-1")),
            List.of(placedOn(podWithClaim("q", "data"), "node-b")),
            nodeA),
        rejected(
            "the same GCE disk read-write on the node",
            podWithGcePd("p", "disk-1", false),
            Objects.of(),
            List.of(placedOn(podWithGcePd("q", "disk-1", true), "node-a")),
            nodeA,
            VolumeFilters.REASON_DISK_CONFLICT),
        passes(
            "the same GCE disk read-only twice",
            podWithGcePd("p", "disk-1", true),
            Objects.of(),
            List.of(placedOn(podWithGcePd("q", "disk-1", true), "node-a")),
            nodeA),
        // NodeVolumeLimits
        rejected(
            "CSI limit reached by pods on the node",
            podWithClaim("p", "data"),
            Objects.of(
                bound(pvc("data"), "pv-1"),
                csiPv("pv-1", "h1"),
                bound(pvc("other"), "pv-2"),
                csiPv("pv-2", "h2"),
                csiNode("node-a", 1)),
            List.of(placedOn(podWithClaim("q", "other"), "node-a")),
            nodeA,
            VolumeFilters.REASON_MAX_VOLUME_COUNT),
        passes(
            "CSI volume shared with a pod on the node counts once",
            podWithClaim("p", "data"),
            Objects.of(bound(pvc("data"), "pv-1"), csiPv("pv-1", "h1"), csiNode("node-a", 1)),
            List.of(placedOn(podWithClaim("q", "data"), "node-a")),
            nodeA),
        passes(
            "CSI limit on another node",
            podWithClaim("p", "data"),
            Objects.of(
                bound(pvc("data"), "pv-1"),
                csiPv("pv-1", "h1"),
                bound(pvc("other"), "pv-2"),
                csiPv("pv-2", "h2"),
                csiNode("node-a", 1)),
            List.of(placedOn(podWithClaim("q", "other"), "node-b")),
            nodeA),
        passes("no volumes at all", K.pod("p").build(), Objects.of(), nodeA));
  }

  @ParameterizedTest(name = "{0}")
  @MethodSource("rows")
  void verdict(Row row) {
    VolumeFilters.PreFiltered pre =
        VolumeFilters.prefilter(row.pod(), row.objects().view(), row::placed);
    if (row.everyNode()) {
      assertThat(pre.refused()).contains(row.expected());
    } else {
      assertThat(pre.refused()).isEmpty();
    }
    assertThat(pre.filters().reject(row.node()).orElse(null)).isEqualTo(row.expected());
  }

  // --- rows ---

  static Row refused(String name, Pod pod, Objects objects, String why) {
    return new Row(name, pod, objects, List.of(), K.readyNode("node-a"), why, true);
  }

  static Row passes(String name, Pod pod, Objects objects, Node node) {
    return new Row(name, pod, objects, List.of(), node, null, false);
  }

  static Row passes(String name, Pod pod, Objects objects, List<Pod> placed, Node node) {
    return new Row(name, pod, objects, placed, node, null, false);
  }

  static Row rejected(
      String name, Pod pod, Objects objects, List<Pod> placed, Node node, String why) {
    return new Row(name, pod, objects, placed, node, why, false);
  }

  // --- fixtures ---

  static Pod podWithClaim(String name, String claim) {
    return K.pod(name)
        .editSpec()
        .addNewVolume()
        .withName("v")
        .withNewPersistentVolumeClaim()
        .withClaimName(claim)
        .endPersistentVolumeClaim()
        .endVolume()
        .endSpec()
        .build();
  }

  static Pod podWithClaims(String name, String... claims) {
    PodBuilder b = new PodBuilder(K.pod(name).build());
    for (int i = 0; i < claims.length; i++) {
      b.editSpec()
          .addNewVolume()
          .withName("v" + i)
          .withNewPersistentVolumeClaim()
          .withClaimName(claims[i])
          .endPersistentVolumeClaim()
          .endVolume()
          .endSpec();
    }
    return b.build();
  }

  static Pod podWithEphemeral(String name, String volume) {
    return K.pod(name)
        .editSpec()
        .addNewVolume()
        .withName(volume)
        .withNewEphemeral()
        .endEphemeral()
        .endVolume()
        .endSpec()
        .build();
  }

  static Pod podWithGcePd(String name, String disk, boolean readOnly) {
    return K.pod(name)
        .editSpec()
        .addNewVolume()
        .withName("d")
        .withNewGcePersistentDisk()
        .withPdName(disk)
        .withReadOnly(readOnly)
        .endGcePersistentDisk()
        .endVolume()
        .endSpec()
        .build();
  }

  static Pod placedOn(Pod pod, String node) {
    return new PodBuilder(pod).editSpec().withNodeName(node).endSpec().build();
  }

  static PersistentVolumeClaimBuilder pvc(String name) {
    return new PersistentVolumeClaimBuilder()
        .withNewMetadata()
        .withNamespace(K.NS)
        .withName(name)
        .endMetadata()
        .withNewSpec()
        .withAccessModes("ReadWriteOnce")
        .endSpec();
  }

  static PersistentVolumeClaim pvcOfClass(String name, String storageClass) {
    return pvc(name).editSpec().withStorageClassName(storageClass).endSpec().build();
  }

  static PersistentVolumeClaim sized(PersistentVolumeClaim pvc, String storage) {
    return new PersistentVolumeClaimBuilder(pvc)
        .editSpec()
        .withNewResources()
        .addToRequests("storage", new Quantity(storage))
        .endResources()
        .endSpec()
        .build();
  }

  static final Map<String, String> ZONE_Z1 = Map.of("topology.kubernetes.io/zone", "z1");

  /** The provisioner's CSIDriver, with {@code spec.storageCapacity} as given (null: unset). */
  static CSIDriver csiDriver(Boolean storageCapacity) {
    return new CSIDriverBuilder()
        .withNewMetadata()
        .withName("csi.example.com")
        .endMetadata()
        .withNewSpec()
        .withStorageCapacity(storageCapacity)
        .endSpec()
        .build();
  }

  /** A CSIStorageCapacity; null sizes are unset, a null topology is none. */
  static CSIStorageCapacity capacity(
      String storageClass, String capacity, String maximumVolumeSize, Map<String, String> zone) {
    CSIStorageCapacityBuilder b =
        new CSIStorageCapacityBuilder()
            .withNewMetadata()
            .withNamespace("kube-system")
            .withName("cap-" + storageClass + "-" + capacity + "-" + maximumVolumeSize)
            .endMetadata()
            .withStorageClassName(storageClass);
    if (capacity != null) {
      b.withCapacity(new Quantity(capacity));
    }
    if (maximumVolumeSize != null) {
      b.withMaximumVolumeSize(new Quantity(maximumVolumeSize));
    }
    if (zone != null) {
      b.withNewNodeTopology().withMatchLabels(zone).endNodeTopology();
    }
    return b.build();
  }

  static PersistentVolumeClaim selectedFor(PersistentVolumeClaim pvc, String node) {
    return new PersistentVolumeClaimBuilder(pvc)
        .editMetadata()
        .addToAnnotations(VolumeFilters.ANN_SELECTED_NODE, node)
        .endMetadata()
        .build();
  }

  static PersistentVolumeClaim bound(PersistentVolumeClaimBuilder b, String pv) {
    return b.editMetadata()
        .addToAnnotations(VolumeFilters.ANN_BIND_COMPLETED, "yes")
        .endMetadata()
        .editSpec()
        .withVolumeName(pv)
        .endSpec()
        .withNewStatus()
        .withPhase("Bound")
        .endStatus()
        .build();
  }

  static PersistentVolumeClaimBuilder rwop(PersistentVolumeClaimBuilder b) {
    return b.editSpec().withAccessModes("ReadWriteOncePod").endSpec();
  }

  static StorageClass storageClass(String name, String mode) {
    return new StorageClassBuilder()
        .withNewMetadata()
        .withName(name)
        .endMetadata()
        .withProvisioner("csi.example.com")
        .withVolumeBindingMode(mode)
        .build();
  }

  static PersistentVolume pv(String name) {
    return new PersistentVolumeBuilder()
        .withNewMetadata()
        .withName(name)
        .endMetadata()
        .withNewSpec()
        .endSpec()
        .build();
  }

  static PersistentVolume pvOnZone(String name, String zone) {
    return new PersistentVolumeBuilder(pv(name))
        .editSpec()
        .withNewNodeAffinity()
        .withNewRequired()
        .addNewNodeSelectorTerm()
        .addNewMatchExpression()
        .withKey("topology.kubernetes.io/zone")
        .withOperator("In")
        .withValues(zone)
        .endMatchExpression()
        .endNodeSelectorTerm()
        .endRequired()
        .endNodeAffinity()
        .endSpec()
        .build();
  }

  static PersistentVolume pvLabelled(String name, String key, String value) {
    return new PersistentVolumeBuilder(pv(name))
        .editMetadata()
        .addToLabels(key, value)
        .endMetadata()
        .build();
  }

  static PersistentVolume csiPv(String name, String handle) {
    return new PersistentVolumeBuilder(pv(name))
        .editSpec()
        .withNewCsi()
        .withDriver("csi.example.com")
        .withVolumeHandle(handle)
        .endCsi()
        .endSpec()
        .build();
  }

  static CSINode csiNode(String node, int count) {
    return new CSINodeBuilder()
        .withNewMetadata()
        .withName(node)
        .endMetadata()
        .withNewSpec()
        .addNewDriver()
        .withName("csi.example.com")
        .withNodeID(node)
        .withNewAllocatable()
        .withCount(count)
        .endAllocatable()
        .endDriver()
        .endSpec()
        .build();
  }
}
