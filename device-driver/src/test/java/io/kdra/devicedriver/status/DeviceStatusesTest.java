package io.kdra.devicedriver.status;

import static io.kdra.devicedriver.testing.ClaimFixture.DRIVER;
import static io.kdra.devicedriver.testing.ClaimFixture.NODE;
import static io.kdra.devicedriver.testing.ClaimFixture.claim;
import static org.assertj.core.api.Assertions.assertThat;

import io.fabric8.kubernetes.api.model.Condition;
import io.fabric8.kubernetes.api.model.resource.v1.AllocatedDeviceStatus;
import io.fabric8.kubernetes.api.model.resource.v1.ResourceClaim;
import io.fabric8.kubernetes.api.model.runtime.RawExtension;
import io.kdra.devicedriver.plugin.PreparedDevice;
import io.kdra.devicedriver.testing.ClaimFixture;
import java.time.Instant;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.stream.Stream;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

class DeviceStatusesTest {
  private static final Instant NOW = Instant.parse("2026-12-06T07:00:00Z");
  private static final String EARLIER = "2026-12-06T06:00:00Z";

  /** What a status entry boils down to for these tests: key, Ready condition and CDI ids. */
  record Entry(String driver, String pool, String device, String shareId, String ready) {}

  static Stream<Arguments> prepared() {
    return Stream.of(
        Arguments.of(
            "each of this driver's results on this node gets an entry, in result order",
            claim("c")
                .result("a", "gpu-1")
                .result("b", "other.example.com", NODE, "nic-0")
                .result("c", DRIVER, "node-b", "gpu-9")
                .result("d", "gpu-0"),
            List.of(),
            List.of(ours("gpu-1", null), ours("gpu-0", null))),
        Arguments.of(
            "another driver's entries stay first and as they are",
            claim("c").result("a", "gpu-0").result("b", "other.example.com", NODE, "nic-0"),
            List.of(status("other.example.com", NODE, "nic-0", null, "Attached", EARLIER)),
            List.of(
                new Entry("other.example.com", NODE, "nic-0", null, null), ours("gpu-0", null))),
        Arguments.of(
            "shares of one shared device are one entry each, keyed by share",
            claim("c")
                .share("a", "gpu-0", "11111111-1111-1111-1111-111111111111", Map.of())
                .share("b", "gpu-0", "22222222-2222-2222-2222-222222222222", Map.of()),
            List.of(),
            List.of(
                ours("gpu-0", "11111111-1111-1111-1111-111111111111"),
                ours("gpu-0", "22222222-2222-2222-2222-222222222222"))),
        Arguments.of(
            "an admin-access result is prepared like any other",
            claim("c").result("a", "gpu-0").adminAccess(),
            List.of(),
            List.of(ours("gpu-0", null))),
        Arguments.of(
            "a stale entry of ours for a device no longer allocated goes",
            claim("c").result("a", "gpu-0"),
            List.of(status(DRIVER, NODE, "gpu-7", null, "Ready", EARLIER)),
            List.of(ours("gpu-0", null))));
  }

  @ParameterizedTest(name = "{0}")
  @MethodSource
  void prepared(
      String name, ClaimFixture fixture, List<AllocatedDeviceStatus> before, List<Entry> want) {
    ResourceClaim c = withDevices(fixture.build(), before);
    List<AllocatedDeviceStatus> after =
        DeviceStatuses.afterPrepare(c, DRIVER, NODE, prepared(c), NOW);
    assertThat(after.stream().map(DeviceStatusesTest::entry)).containsExactlyElementsOf(want);
    // the other driver's entry is the very object read
    before.stream()
        .filter(s -> !s.getDriver().equals(DRIVER))
        .forEach(s -> assertThat(after).contains(s));
  }

  @org.junit.jupiter.api.Test
  void aPreparedEntrySaysReadyWithTheCdiDevicesAndTheNode() {
    ResourceClaim c = claim("c").result("a", "gpu-0").build();
    c.getMetadata().setGeneration(3L);
    AllocatedDeviceStatus s = DeviceStatuses.afterPrepare(c, DRIVER, NODE, prepared(c), NOW).get(0);
    Condition ready = s.getConditions().get(0);
    assertThat(s.getConditions()).hasSize(1);
    assertThat(ready.getType()).isEqualTo("Ready");
    assertThat(ready.getStatus()).isEqualTo("True");
    assertThat(ready.getReason()).isEqualTo("Prepared");
    assertThat(ready.getMessage()).isEqualTo("prepared on node node-a");
    assertThat(ready.getLastTransitionTime()).isEqualTo("2026-12-06T07:00:00Z");
    assertThat(ready.getObservedGeneration()).isEqualTo(3L);
    assertThat(((RawExtension) s.getData()).getValue())
        .isEqualTo(
            Map.of("node", NODE, "cdiDeviceIDs", List.of("k8s.gpu.kdra.io/claim=uid-c-gpu-0")));
  }

  @org.junit.jupiter.api.Test
  void aRepeatedPrepareChangesNothingSoNothingIsWritten() {
    ResourceClaim c = claim("c").result("a", "gpu-0").build();
    List<AllocatedDeviceStatus> first =
        DeviceStatuses.afterPrepare(c, DRIVER, NODE, prepared(c), NOW);
    ResourceClaim written = withDevices(c, first);
    assertThat(
            DeviceStatuses.afterPrepare(
                written, DRIVER, NODE, prepared(written), NOW.plusSeconds(60)))
        .isEqualTo(first); // the transition time is kept: the condition did not change
  }

  static Stream<Arguments> unprepared() {
    return Stream.of(
        Arguments.of(
            "only this driver's entries on this node go",
            List.of(
                status("other.example.com", NODE, "nic-0", null, "Attached", EARLIER),
                status(DRIVER, NODE, "gpu-0", null, "Ready", EARLIER),
                status(DRIVER, "node-b", "gpu-9", null, "Ready", EARLIER)),
            List.of(
                new Entry("other.example.com", NODE, "nic-0", null, null),
                new Entry(DRIVER, "node-b", "gpu-9", null, null))),
        Arguments.of("no entries stay no entries", List.of(), List.of()));
  }

  @ParameterizedTest(name = "{0}")
  @MethodSource
  void unprepared(String name, List<AllocatedDeviceStatus> before, List<Entry> want) {
    ResourceClaim c = withDevices(claim("c").result("a", "gpu-0").build(), before);
    assertThat(
            DeviceStatuses.afterUnprepare(c, DRIVER, NODE).stream().map(DeviceStatusesTest::entry))
        .containsExactlyElementsOf(want);
  }

  private static Entry ours(String device, String shareId) {
    return new Entry(DRIVER, NODE, device, shareId, "True");
  }

  private static Entry entry(AllocatedDeviceStatus s) {
    String ready =
        s.getDriver().equals(DRIVER) && s.getPool().equals(NODE)
            ? s.getConditions().stream()
                .filter(c -> c.getType().equals("Ready"))
                .map(Condition::getStatus)
                .findFirst()
                .orElse(null)
            : null;
    return new Entry(s.getDriver(), s.getPool(), s.getDevice(), s.getShareID(), ready);
  }

  /** What the driver answered the kubelet for the claim: one CDI id per device. */
  private static Map<String, List<String>> prepared(ResourceClaim c) {
    Map<String, List<String>> ids = new LinkedHashMap<>();
    for (var r : c.getStatus().getAllocation().getDevices().getResults()) {
      if (r.getDriver().equals(DRIVER) && r.getPool().equals(NODE)) {
        ids.put(
            r.getDevice(),
            new PreparedDevice(
                    List.of(r.getRequest()),
                    NODE,
                    r.getDevice(),
                    List.of(
                        "k8s.gpu.kdra.io/claim=" + c.getMetadata().getUid() + "-" + r.getDevice()))
                .cdiDeviceIds());
      }
    }
    return ids;
  }

  private static ResourceClaim withDevices(ResourceClaim c, List<AllocatedDeviceStatus> devices) {
    c.getStatus().setDevices(new ArrayList<>(devices));
    return c;
  }

  private static AllocatedDeviceStatus status(
      String driver, String pool, String device, String shareId, String type, String at) {
    AllocatedDeviceStatus s = new AllocatedDeviceStatus();
    s.setDriver(driver);
    s.setPool(pool);
    s.setDevice(device);
    s.setShareID(shareId);
    Condition c = new Condition();
    c.setType(type);
    c.setStatus("True");
    c.setReason("Done");
    c.setMessage("");
    c.setLastTransitionTime(at);
    s.setConditions(new ArrayList<>(List.of(c)));
    return s;
  }
}
