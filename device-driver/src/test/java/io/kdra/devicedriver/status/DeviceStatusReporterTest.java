package io.kdra.devicedriver.status;

import static io.kdra.devicedriver.testing.ClaimFixture.DRIVER;
import static io.kdra.devicedriver.testing.ClaimFixture.NODE;
import static io.kdra.devicedriver.testing.ClaimFixture.claim;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.fabric8.kubernetes.api.model.resource.v1.AllocatedDeviceStatus;
import io.fabric8.kubernetes.api.model.resource.v1.ResourceClaim;
import io.kdra.devicedriver.plugin.ClaimRef;
import io.kdra.devicedriver.plugin.DraPlugin;
import io.kdra.devicedriver.plugin.PrepareResult;
import io.kdra.devicedriver.plugin.PreparedDevice;
import io.kdra.devicedriver.testing.ClaimFixture;
import java.time.Clock;
import java.time.Instant;
import java.time.ZoneOffset;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import org.junit.jupiter.api.Test;

class DeviceStatusReporterTest {
  private static final Clock CLOCK =
      Clock.fixed(Instant.parse("2026-12-06T07:00:00Z"), ZoneOffset.UTC);
  private static final List<PreparedDevice> GPU0 =
      List.of(new PreparedDevice(List.of("a"), NODE, "gpu-0", List.of("k8s.gpu.kdra.io/claim=x")));

  private final Store store = new Store();
  private final DeviceStatusReporter reporter =
      new DeviceStatusReporter(store, DRIVER, NODE, CLOCK, 3);

  @Test
  void aPrepareWritesTheEntryOnceAndAnUnprepareRemovesIt() throws Exception {
    ClaimFixture c = claim("c").result("a", "gpu-0");
    store.put(c.build());

    reporter.prepared(c.ref(), GPU0);
    assertThat(store.devices())
        .extracting(AllocatedDeviceStatus::getDevice)
        .containsExactly("gpu-0");
    reporter.prepared(c.ref(), GPU0); // the kubelet repeats a prepare: nothing changes
    assertThat(store.writes).isEqualTo(1);

    reporter.unprepared(c.ref());
    assertThat(store.devices()).isEmpty();
    reporter.unprepared(c.ref());
    assertThat(store.writes).isEqualTo(2);
  }

  @Test
  void aConflictIsReadAgainAndRecomputedOverTheOtherWriter() throws Exception {
    ClaimFixture c =
        claim("c").result("a", "gpu-0").result("b", "other.example.com", NODE, "nic-0");
    store.put(c.build());
    // between our read and our write, the other driver adds its entry
    store.beforeNextWrite =
        () -> {
          AllocatedDeviceStatus nic = new AllocatedDeviceStatus();
          nic.setDriver("other.example.com");
          nic.setPool(NODE);
          nic.setDevice("nic-0");
          store.stored.getStatus().setDevices(new ArrayList<>(List.of(nic)));
          store.bump();
        };

    reporter.prepared(c.ref(), GPU0);

    assertThat(store.devices())
        .extracting(AllocatedDeviceStatus::getDevice)
        .containsExactly("nic-0", "gpu-0");
    assertThat(store.conflicts).isEqualTo(1);
  }

  @Test
  void conflictsWithoutEndAreReportedAfterTheLastTry() {
    ClaimFixture c = claim("c").result("a", "gpu-0");
    store.put(c.build());
    store.alwaysConflict = true;
    assertThatThrownBy(() -> reporter.prepared(c.ref(), GPU0))
        .isInstanceOf(DeviceStatusReporter.StatusWriteException.class)
        .hasMessageContaining("default/c")
        .hasMessageContaining("3 tries");
  }

  @Test
  void aClaimGoneReCreatedOrDeallocatedIsLeftAlone() throws Exception {
    reporter.prepared(claim("c").ref(), GPU0); // gone
    store.put(claim("c").uid("another").result("a", "gpu-0").build());
    reporter.prepared(claim("c").ref(), GPU0); // re-created under the same name
    store.put(claim("c").unallocated().build());
    reporter.unprepared(claim("c").ref()); // deallocated
    assertThat(store.writes).isZero();
  }

  @Test
  void thePluginReportsSuccessesOnlyAndAFailedWriteFailsNoPrepare() {
    ClaimFixture ok = claim("ok").result("a", "gpu-0");
    store.put(ok.build());
    ClaimRef failed = claim("failed").ref();
    DraPlugin inner =
        new DraPlugin() {
          @Override
          public Map<String, PrepareResult> prepareResourceClaims(List<ClaimRef> claims) {
            return Map.of(
                ok.ref().uid(), PrepareResult.ok(GPU0),
                failed.uid(), PrepareResult.failed("no such device"));
          }

          @Override
          public Map<String, String> unprepareResourceClaims(List<ClaimRef> claims) {
            return Map.of(ok.ref().uid(), "");
          }

          @Override
          public void handleError(String message, Throwable cause) {}
        };
    DeviceStatusPlugin plugin = new DeviceStatusPlugin(inner, reporter);

    assertThat(plugin.prepareResourceClaims(List.of(ok.ref(), failed)).get(ok.ref().uid()).failed())
        .isFalse();
    assertThat(store.devices()).hasSize(1);
    assertThat(store.reads).containsExactly("ok"); // the failed claim is not reported

    store.alwaysConflict = true;
    assertThat(plugin.unprepareResourceClaims(List.of(ok.ref()))).containsEntry(ok.ref().uid(), "");
  }

  /** One claim in memory, with resourceVersions as the API server keeps them. */
  private static final class Store implements ClaimStatusStore {
    ResourceClaim stored;
    int writes;
    int conflicts;
    boolean alwaysConflict;
    Runnable beforeNextWrite;
    final List<String> reads = new ArrayList<>();
    private long version = 1;

    void put(ResourceClaim claim) {
      stored = claim;
      bump();
    }

    void bump() {
      stored.getMetadata().setResourceVersion(Long.toString(++version));
    }

    List<AllocatedDeviceStatus> devices() {
      return DeviceStatuses.current(stored);
    }

    @Override
    public Optional<ResourceClaim> get(String namespace, String name) {
      reads.add(name);
      if (stored == null || !stored.getMetadata().getName().equals(name)) {
        return Optional.empty();
      }
      // a copy, as a GET returns
      return Optional.of(io.fabric8.kubernetes.client.utils.Serialization.clone(stored));
    }

    @Override
    public void writeDevices(ResourceClaim read, List<AllocatedDeviceStatus> devices)
        throws Conflict {
      if (beforeNextWrite != null) {
        beforeNextWrite.run();
        beforeNextWrite = null;
      }
      if (alwaysConflict
          || !read.getMetadata()
              .getResourceVersion()
              .equals(stored.getMetadata().getResourceVersion())) {
        conflicts++;
        throw new Conflict("the object has been modified");
      }
      stored.getStatus().setDevices(new ArrayList<>(devices));
      bump();
      writes++;
    }
  }
}
