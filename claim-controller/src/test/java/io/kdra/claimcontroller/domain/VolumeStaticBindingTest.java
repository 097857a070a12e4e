package io.kdra.claimcontroller.domain;

import static io.kdra.claimcontroller.domain.VolumeFiltersTest.podWithClaim;
import static io.kdra.claimcontroller.domain.VolumeFiltersTest.podWithClaims;
import static io.kdra.claimcontroller.domain.VolumeFiltersTest.pv;
import static io.kdra.claimcontroller.domain.VolumeFiltersTest.pvOnZone;
import static io.kdra.claimcontroller.domain.VolumeFiltersTest.pvc;
import static io.kdra.claimcontroller.domain.VolumeFiltersTest.sized;
import static io.kdra.claimcontroller.domain.VolumeFiltersTest.storageClass;
import static org.assertj.core.api.Assertions.assertThat;

import io.fabric8.kubernetes.api.model.Node;
import io.fabric8.kubernetes.api.model.PersistentVolume;
import io.fabric8.kubernetes.api.model.PersistentVolumeBuilder;
import io.fabric8.kubernetes.api.model.PersistentVolumeClaim;
import io.fabric8.kubernetes.api.model.PersistentVolumeClaimBuilder;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.Quantity;
import io.fabric8.kubernetes.api.model.storage.StorageClass;
import io.fabric8.kubernetes.api.model.storage.StorageClassBuilder;
import io.kdra.claimcontroller.domain.VolumeFiltersTest.Objects;
import java.util.List;
import java.util.stream.Stream;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * VolumeBinding's binding of existing PersistentVolumes to claims that wait for their first
 * consumer, as kube-scheduler 1.37.2 does it (volumebinding/binder.go {@code FindPodVolumes} and
 * {@code findMatchingVolumes}, component-helpers' {@code FindMatchingVolume} on the scheduler
 * path): for each node, the verdict and which claim gets which volume, which are provisioned.
 */
class VolumeStaticBindingTest {

  /**
   * One case: the pod, what exists, the node; the expected reason (null: the node passes), the
   * claim-to-volume bindings ({@code "claim=pv"}) and the claims to provision, when it passes.
   */
  record Row(
      String name,
      Pod pod,
      Objects objects,
      Node node,
      String expected,
      List<String> bindings,
      List<String> provisions) {
    @Override
    public String toString() {
      return name;
    }
  }

  static final Node NODE_A =
      K.node("node-a")
          .editMetadata()
          .addToLabels("topology.kubernetes.io/zone", "z1")
          .endMetadata()
          .build();

  static Stream<Row> rows() {
    StorageClass local = local();
    StorageClass provisioned = storageClass("local", "WaitForFirstConsumer");
    return Stream.of(
        binds(
            "an available volume of the class is bound",
            podWithClaim("p", "data"),
            Objects.of(claim("data", "1Gi"), local, available("pv-1", "1Gi")),
            List.of("data=pv-1")),
        binds(
            "the smallest that fits, not the first",
            podWithClaim("p", "data"),
            Objects.of(
                claim("data", "1500M"),
                local,
                available("pv-big", "5Gi"),
                available("pv-small", "1Gi"),
                available("pv-fit", "2Gi")),
            List.of("data=pv-fit")),
        binds(
            "capacity equal to the request fits",
            podWithClaim("p", "data"),
            Objects.of(claim("data", "1Gi"), local, available("pv-1", "1024Mi")),
            List.of("data=pv-1")),
        binds(
            "a claim without a request fits any size",
            podWithClaim("p", "data"),
            Objects.of(claimOf("data").build(), local, available("pv-1", "1Gi")),
            List.of("data=pv-1")),
        bindConflict(
            "too small", Objects.of(claim("data", "2Gi"), local, available("pv-1", "1Gi"))),
        bindConflict(
            "the volume's node affinity excludes the node",
            Objects.of(claim("data", "1Gi"), local, onZone(available("pv-1", "1Gi"), "z2"))),
        binds(
            "the volume's node affinity admits the node",
            podWithClaim("p", "data"),
            Objects.of(claim("data", "1Gi"), local, onZone(available("pv-1", "1Gi"), "z1")),
            List.of("data=pv-1")),
        bindConflict(
            "access modes: the volume lacks one the claim asks for",
            Objects.of(
                new PersistentVolumeClaimBuilder(claim("data", "1Gi"))
                    .editSpec()
                    .withAccessModes("ReadWriteOnce", "ReadOnlyMany")
                    .endSpec()
                    .build(),
                local,
                available("pv-1", "1Gi"))),
        binds(
            "access modes: the volume may offer more",
            podWithClaim("p", "data"),
            Objects.of(
                claim("data", "1Gi"),
                local,
                new PersistentVolumeBuilder(available("pv-1", "1Gi"))
                    .editSpec()
                    .withAccessModes("ReadWriteOnce", "ReadWriteMany")
                    .endSpec()
                    .build()),
            List.of("data=pv-1")),
        bindConflict(
            "volume mode: a Block claim and a volume without a mode (Filesystem)",
            Objects.of(
                new PersistentVolumeClaimBuilder(claim("data", "1Gi"))
                    .editSpec()
                    .withVolumeMode("Block")
                    .endSpec()
                    .build(),
                local,
                available("pv-1", "1Gi"))),
        binds(
            "volume mode: Filesystem on the claim and none on the volume agree",
            podWithClaim("p", "data"),
            Objects.of(
                new PersistentVolumeClaimBuilder(claim("data", "1Gi"))
                    .editSpec()
                    .withVolumeMode("Filesystem")
                    .endSpec()
                    .build(),
                local,
                available("pv-1", "1Gi")),
            List.of("data=pv-1")),
        bindConflict(
            "the claim's selector picks no volume",
            Objects.of(
                selecting(claim("data", "1Gi"), "tier", "fast"), local, available("pv-1", "1Gi"))),
        binds(
            "the claim's selector picks the labelled volume",
            podWithClaim("p", "data"),
            Objects.of(
                selecting(claim("data", "1Gi"), "tier", "fast"),
                local,
                available("pv-1", "1Gi"),
                new PersistentVolumeBuilder(available("pv-2", "5Gi"))
                    .editMetadata()
                    .addToLabels("tier", "fast")
                    .endMetadata()
                    .build()),
            List.of("data=pv-2")),
        bindConflict(
            "a volume not Available (Released) is no candidate",
            Objects.of(
                claim("data", "1Gi"),
                local,
                new PersistentVolumeBuilder(available("pv-1", "1Gi"))
                    .editStatus()
                    .withPhase("Released")
                    .endStatus()
                    .build())),
        bindConflict(
            "a volume being deleted is no candidate",
            Objects.of(
                claim("data", "1Gi"),
                local,
                new PersistentVolumeBuilder(available("pv-1", "1Gi"))
                    .editMetadata()
                    .withDeletionTimestamp("2026-01-01T00:00:00Z")
                    .endMetadata()
                    .build())),
        bindConflict(
            "a volume of another VolumeAttributesClass is no candidate",
            Objects.of(
                claim("data", "1Gi"),
                local,
                new PersistentVolumeBuilder(available("pv-1", "1Gi"))
                    .editSpec()
                    .withVolumeAttributesClassName("gold")
                    .endSpec()
                    .build())),
        binds(
            "a volume of the claim's VolumeAttributesClass is",
            podWithClaim("p", "data"),
            Objects.of(
                new PersistentVolumeClaimBuilder(claim("data", "1Gi"))
                    .editSpec()
                    .withVolumeAttributesClassName("gold")
                    .endSpec()
                    .build(),
                local,
                new PersistentVolumeBuilder(available("pv-1", "1Gi"))
                    .editSpec()
                    .withVolumeAttributesClassName("gold")
                    .endSpec()
                    .build()),
            List.of("data=pv-1")),
        bindConflict(
            "a volume claimed by another claim is no candidate",
            Objects.of(
                claim("data", "1Gi"), local, claimedBy(available("pv-1", "1Gi"), "other", ""))),
        binds(
            "a volume pre-bound to the claim is taken whatever its phase, before a smaller one",
            podWithClaim("p", "data"),
            Objects.of(
                claim("data", "1Gi"),
                local,
                available("pv-small", "1Gi"),
                new PersistentVolumeBuilder(claimedBy(available("pv-mine", "5Gi"), "data", ""))
                    .editStatus()
                    .withPhase("Pending")
                    .endStatus()
                    .build()),
            List.of("data=pv-mine")),
        bindConflict(
            "a volume pre-bound to the claim whose node affinity excludes the node: no match at all",
            Objects.of(
                claim("data", "1Gi"),
                local,
                available("pv-other", "1Gi"),
                onZone(claimedBy(available("pv-mine", "1Gi"), "data", ""), "z2"))),
        bindConflict(
            "a volume pre-bound to a claim of the same name but another uid is no candidate",
            Objects.of(
                claim("data", "1Gi"),
                local,
                claimedBy(available("pv-1", "1Gi"), "data", "uid-gone"))),
        binds(
            "two claims: the smaller request is matched first and takes the smallest fit",
            podWithClaims("p", "big", "small"),
            Objects.of(
                claim("big", "2Gi"),
                claim("small", "1Gi"),
                local,
                available("pv-2", "2Gi"),
                available("pv-5", "5Gi")),
            List.of("small=pv-2", "big=pv-5")),
        bindConflict(
            "two claims, one volume: the other has none, and the class cannot provision",
            podWithClaims("p", "big", "small"),
            Objects.of(
                claim("big", "2Gi"), claim("small", "1Gi"), local, available("pv-5", "5Gi"))),
        new Row(
            "two claims, one volume: the other is provisioned where the class can",
            podWithClaims("p", "big", "small"),
            Objects.of(
                claim("big", "2Gi"), claim("small", "1Gi"), provisioned, available("pv-5", "5Gi")),
            NODE_A,
            null,
            List.of("small=pv-5"),
            List.of("big")),
        new Row(
            "no fitting volume, the class can provision: provisioned",
            podWithClaim("p", "data"),
            Objects.of(claim("data", "2Gi"), provisioned, available("pv-1", "1Gi")),
            NODE_A,
            null,
            List.of(),
            List.of("data")),
        new Row(
            "a claim selected for this node is provisioned, not matched",
            podWithClaim("p", "data"),
            Objects.of(
                VolumeFiltersTest.selectedFor(claim("data", "1Gi"), "node-a"),
                provisioned,
                available("pv-1", "1Gi")),
            NODE_A,
            null,
            List.of(),
            List.of("data")),
        new Row(
            "a volume with the beta class annotation is of that class",
            podWithClaim("p", "data"),
            Objects.of(
                claim("data", "1Gi"),
                local,
                new PersistentVolumeBuilder(available("pv-1", "1Gi"))
                    .editSpec()
                    .withStorageClassName(null)
                    .endSpec()
                    .editMetadata()
                    .addToAnnotations("volume.beta.kubernetes.io/storage-class", "local")
                    .endMetadata()
                    .build()),
            NODE_A,
            null,
            List.of("data=pv-1"),
            List.of()));
  }

  @ParameterizedTest(name = "{0}")
  @MethodSource("rows")
  void decision(Row row) {
    VolumeFilters.PreFiltered pre =
        VolumeFilters.prefilter(row.pod(), row.objects().view(), List::of);
    assertThat(pre.refused()).isEmpty();
    assertThat(pre.filters().reject(row.node()).orElse(null)).isEqualTo(row.expected());
    PodVolumes volumes = pre.filters().volumesOn(row.node());
    assertThat(
            volumes.staticBindings().stream()
                .map(b -> b.pvc().getMetadata().getName() + "=" + b.pv().getMetadata().getName())
                .toList())
        .isEqualTo(row.bindings());
    assertThat(
            volumes.dynamicProvisions().stream().map(p -> p.pvc().getMetadata().getName()).toList())
        .isEqualTo(row.provisions());
  }

  // --- rows ---

  static Row binds(String name, Pod pod, Objects objects, List<String> bindings) {
    return new Row(name, pod, objects, NODE_A, null, bindings, List.of());
  }

  static Row bindConflict(String name, Objects objects) {
    return bindConflict(name, podWithClaim("p", "data"), objects);
  }

  static Row bindConflict(String name, Pod pod, Objects objects) {
    return new Row(
        name, pod, objects, NODE_A, VolumeFilters.REASON_BIND_CONFLICT, List.of(), List.of());
  }

  // --- fixtures ---

  /** A class for existing local volumes: waits for the first consumer, cannot provision. */
  static StorageClass local() {
    return new StorageClassBuilder(storageClass("local", "WaitForFirstConsumer"))
        .withProvisioner("kubernetes.io/no-provisioner")
        .build();
  }

  static PersistentVolumeClaimBuilder claimOf(String name) {
    return new PersistentVolumeClaimBuilder(pvc(name).build())
        .editMetadata()
        .withUid("uid-" + name)
        .endMetadata()
        .editSpec()
        .withStorageClassName("local")
        .endSpec();
  }

  static PersistentVolumeClaim claim(String name, String storage) {
    return sized(claimOf(name).build(), storage);
  }

  static PersistentVolumeClaim sizedOfClass(String name, String storage, String storageClass) {
    return sized(
        new PersistentVolumeClaimBuilder(claimOf(name).build())
            .editSpec()
            .withStorageClassName(storageClass)
            .endSpec()
            .build(),
        storage);
  }

  static PersistentVolumeClaim selecting(PersistentVolumeClaim pvc, String key, String value) {
    return new PersistentVolumeClaimBuilder(pvc)
        .editSpec()
        .withNewSelector()
        .addToMatchLabels(key, value)
        .endSelector()
        .endSpec()
        .build();
  }

  static PersistentVolume available(String name, String capacity) {
    return new PersistentVolumeBuilder(pv(name))
        .editSpec()
        .withStorageClassName("local")
        .withAccessModes("ReadWriteOnce")
        .addToCapacity("storage", new Quantity(capacity))
        .endSpec()
        .withNewStatus()
        .withPhase("Available")
        .endStatus()
        .build();
  }

  static PersistentVolume onZone(PersistentVolume pv, String zone) {
    return new PersistentVolumeBuilder(pv)
        .editSpec()
        .withNodeAffinity(pvOnZone("x", zone).getSpec().getNodeAffinity())
        .endSpec()
        .build();
  }

  /** Pre-bound to the claim {@code name} of the namespace ({@code uid} empty: none given). */
  static PersistentVolume claimedBy(PersistentVolume pv, String name, String uid) {
    return new PersistentVolumeBuilder(pv)
        .editSpec()
        .withNewClaimRef()
        .withNamespace(K.NS)
        .withName(name)
        .withUid(uid.isEmpty() ? null : uid)
        .endClaimRef()
        .endSpec()
        .build();
  }
}
