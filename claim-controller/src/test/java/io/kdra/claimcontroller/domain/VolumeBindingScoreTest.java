package io.kdra.claimcontroller.domain;

import static io.kdra.claimcontroller.domain.VolumeFiltersTest.capacity;
import static io.kdra.claimcontroller.domain.VolumeFiltersTest.csiDriver;
import static io.kdra.claimcontroller.domain.VolumeFiltersTest.podWithClaim;
import static io.kdra.claimcontroller.domain.VolumeFiltersTest.podWithClaims;
import static io.kdra.claimcontroller.domain.VolumeFiltersTest.storageClass;
import static io.kdra.claimcontroller.domain.VolumeStaticBindingTest.NODE_A;
import static io.kdra.claimcontroller.domain.VolumeStaticBindingTest.available;
import static io.kdra.claimcontroller.domain.VolumeStaticBindingTest.claim;
import static io.kdra.claimcontroller.domain.VolumeStaticBindingTest.local;
import static org.assertj.core.api.Assertions.assertThat;

import io.fabric8.kubernetes.api.model.PersistentVolumeBuilder;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.storage.StorageClass;
import io.kdra.claimcontroller.domain.VolumeFiltersTest.Objects;
import java.util.List;
import java.util.stream.Stream;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * VolumeBinding's Score with kube-scheduler 1.37.2's {@code StorageCapacityScoring} (beta, on by
 * default) and the default shape (utilisation 0: 10, 100: 0, scaled to 100): {@code
 * volume_binding.go} Score and {@code scorer.go}. The bound volumes' use of their capacity, else
 * the provisioned claims' use of the CSIStorageCapacity that has room; per class, averaged.
 */
class VolumeBindingScoreTest {

  record Row(String name, Pod pod, Objects objects, long expected) {
    @Override
    public String toString() {
      return name;
    }
  }

  static Stream<Row> rows() {
    StorageClass local = local();
    StorageClass provisioned = storageClass("local", "WaitForFirstConsumer");
    return Stream.of(
        new Row("no volumes", K.pod("p").build(), Objects.of(), 0),
        new Row(
            "a bound volume, half used: 100 - 50",
            podWithClaim("p", "data"),
            Objects.of(claim("data", "1Gi"), local, available("pv-1", "2Gi")),
            50),
        new Row(
            "a bound volume, fully used: 0",
            podWithClaim("p", "data"),
            Objects.of(claim("data", "1Gi"), local, available("pv-1", "1Gi")),
            0),
        new Row(
            "a bound volume, a third used: 100 - 33 (integer division)",
            podWithClaim("p", "data"),
            Objects.of(claim("data", "1Gi"), local, available("pv-1", "3Gi")),
            67),
        new Row(
            "a claim without a request on a volume: unused, 100",
            podWithClaim("p", "data"),
            Objects.of(
                VolumeStaticBindingTest.claimOf("data").build(), local, available("pv-1", "3Gi")),
            100),
        new Row(
            "two volumes of one class: summed, 3Gi of 4Gi: 100 - 75",
            podWithClaims("p", "a", "b"),
            Objects.of(
                claim("a", "1Gi"),
                claim("b", "2Gi"),
                local,
                available("pv-1", "1Gi"),
                available("pv-3", "3Gi")),
            25),
        new Row(
            "two classes: averaged, (50 + 75) / 2 rounded half up",
            podWithClaims("p", "a", "b"),
            Objects.of(
                claim("a", "1Gi"),
                VolumeStaticBindingTest.sizedOfClass("b", "1Gi", "other"),
                local,
                new io.fabric8.kubernetes.api.model.storage.StorageClassBuilder(local)
                    .editMetadata()
                    .withName("other")
                    .endMetadata()
                    .build(),
                available("pv-1", "2Gi"),
                new PersistentVolumeBuilder(available("pv-4", "4Gi"))
                    .editSpec()
                    .withStorageClassName("other")
                    .endSpec()
                    .build()),
            63),
        new Row(
            "provisioned where the CSIStorageCapacity has room: 1Gi of 4Gi, 75",
            podWithClaim("p", "data"),
            Objects.of(
                claim("data", "1Gi"),
                provisioned,
                csiDriver(true),
                capacity("local", "4Gi", null, VolumeFiltersTest.ZONE_Z1)),
            75),
        new Row(
            "provisioned: the capacity read, not the maximum volume size that admitted it",
            podWithClaim("p", "data"),
            Objects.of(
                claim("data", "1Gi"),
                provisioned,
                csiDriver(true),
                capacity("local", "10Gi", "1Gi", VolumeFiltersTest.ZONE_Z1)),
            90),
        new Row(
            "two claims provisioned from one capacity: requests summed, capacity once",
            podWithClaims("p", "a", "b"),
            Objects.of(
                claim("a", "1Gi"),
                claim("b", "1Gi"),
                provisioned,
                csiDriver(true),
                capacity("local", "4Gi", null, VolumeFiltersTest.ZONE_Z1)),
            50),
        new Row(
            "provisioned without a capacity check (no CSIDriver): not scored",
            podWithClaim("p", "data"),
            Objects.of(claim("data", "1Gi"), provisioned),
            0),
        new Row(
            "a bound volume and a provisioned claim: only the bound volume counts",
            podWithClaims("p", "a", "b"),
            Objects.of(
                claim("a", "1Gi"),
                claim("b", "5Gi"),
                provisioned,
                csiDriver(true),
                capacity("local", "100Gi", null, VolumeFiltersTest.ZONE_Z1),
                available("pv-2", "2Gi")),
            50));
  }

  @ParameterizedTest(name = "{0}")
  @MethodSource("rows")
  void score(Row row) {
    VolumeFilters filters =
        VolumeFilters.prefilter(row.pod(), row.objects().view(), List::of).filters();
    assertThat(filters.reject(NODE_A)).isEmpty();
    assertThat(VolumeBindingScore.of(filters.volumesOn(NODE_A))).isEqualTo(row.expected());
  }
}
