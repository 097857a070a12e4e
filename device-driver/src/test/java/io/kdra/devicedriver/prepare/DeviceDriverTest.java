package io.kdra.devicedriver.prepare;

import static io.kdra.devicedriver.testing.ClaimFixture.claim;
import static org.assertj.core.api.Assertions.assertThat;

import io.kdra.devicedriver.discovery.NodeDevice;
import io.kdra.devicedriver.plugin.ClaimRef;
import io.kdra.devicedriver.plugin.PrepareResult;
import io.kdra.devicedriver.testing.ClaimFixture;
import io.kdra.devicedriver.testing.Inventories;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Clock;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

class DeviceDriverTest extends DeviceDriverFixture {
  @Test
  void prepareWritesOneSpecAndIsIdempotent() throws Exception {
    ClaimFixture c = claim("c1").uid("u1").result("gpu", "gpu-0");
    reader.add(c.build());
    DeviceDriver d = driver();

    PrepareResult first = d.prepareResourceClaims(List.of(c.ref())).get("u1");
    PrepareResult second = d.prepareResourceClaims(List.of(c.ref())).get("u1");

    assertThat(first.error()).isEmpty();
    assertThat(first.devices().get(0).cdiDeviceIds())
        .containsExactly("k8s.gpu.kdra.io/claim=u1-gpu-0");
    assertThat(second).isEqualTo(first);
    assertThat(reader.reads).hasValue(1); // the repeat is answered from the checkpoint
    assertThat(cdiFiles()).containsExactly("k8s.gpu.kdra.io-claim_u1.json");
  }

  @Test
  void theContainersGetEachRequestsDeviceMetadataFileReadOnlyUntilTheUnprepare() throws Exception {
    ClaimFixture c =
        claim("web-gpu")
            .uid("u1")
            .annotation("resource.kubernetes.io/pod-claim-name", "gpus")
            .result("gpu/large", "gpu-0")
            .result("gpu/large", "gpu-1")
            .result("nic", "gpu-2");
    reader.add(c.build());
    Path plugin = dir.resolve("plugin");
    DeviceDriver d =
        track(
            new DeviceDriver(
                new PreparePlanner(ClaimFixture.DRIVER, ClaimFixture.NODE)
                    .withDeviceMetadata(plugin),
                reader,
                () -> Inventories.gpus(8),
                new CdiSpecStore(dir.resolve("cdi")),
                CheckpointStore.open(plugin.resolve("checkpoint.json"), Clock.systemUTC()),
                ClaimTelemetry.NONE,
                Clock.systemUTC(),
                4));

    PrepareResult r = d.prepareResourceClaims(List.of(c.ref())).get("u1");

    // the first device of each request carries the request's metadata device, as upstream's
    // helper injects it
    assertThat(r.devices())
        .extracting(x -> x.cdiDeviceIds())
        .containsExactly(
            List.of("k8s.gpu.kdra.io/claim=u1-gpu-0", "k8s.gpu.kdra.io/claim=u1_metadata_gpu"),
            List.of("k8s.gpu.kdra.io/claim=u1-gpu-1"),
            List.of("k8s.gpu.kdra.io/claim=u1-gpu-2", "k8s.gpu.kdra.io/claim=u1_metadata_nic"));
    Path file = plugin.resolve("dra-device-metadata/default_web-gpu/gpu/metadata.json");
    assertThat(Files.readString(file))
        .contains("\"podClaimName\": \"gpus\"", "\"name\": \"gpu/large\"", "\"productName\"")
        .contains("\"name\": \"gpu-0\"", "\"name\": \"gpu-1\"")
        .doesNotContain("gpu-2");
    String spec = Files.readString(dir.resolve("cdi/k8s.gpu.kdra.io-claim_u1.json"));
    assertThat(spec)
        .contains("\"name\" : \"u1_metadata_gpu\"")
        .contains("\"hostPath\" : \"" + file.toAbsolutePath() + "\"")
        .contains(
            "\"containerPath\" : \"/var/run/kubernetes.io/dra-device-attributes/resourceclaimtemplates/gpus/gpu/gpu.kdra.io-metadata.json\"")
        .contains("\"ro\", \"bind\"");

    assertThat(d.unprepareResourceClaims(List.of(c.ref()))).containsEntry("u1", "");
    assertThat(plugin.resolve("dra-device-metadata/default_web-gpu")).doesNotExist();
    assertThat(cdiFiles()).isEmpty();
  }

  private DeviceDriver track(DeviceDriver d) {
    drivers.add(d);
    return d;
  }

  @Test
  void aZeroDelayIsNoInterlude() {
    assertThat(DeviceDriver.PrepareInterlude.pause(java.time.Duration.ZERO))
        .isSameAs(DeviceDriver.PrepareInterlude.NONE);
  }

  @Test
  void unprepareOfAnUnknownClaimSucceedsAndRemovesAnOrphanedSpec() throws Exception {
    Files.createDirectories(dir.resolve("cdi"));
    // a crash after the spec write but before the checkpoint write leaves this behind
    Files.writeString(dir.resolve("cdi/k8s.gpu.kdra.io-claim_orphan.json"), "{}");
    Map<String, String> r =
        driver()
            .unprepareResourceClaims(
                List.of(new ClaimRef("ns", "orphan", "x"), new ClaimRef("ns", "never", "y")));
    assertThat(r).containsExactlyInAnyOrderEntriesOf(Map.of("orphan", "", "never", ""));
    assertThat(cdiFiles()).isEmpty();
  }

  @Test
  void errorsArePerClaimAndNameTheCause() throws Exception {
    ClaimFixture good = claim("good").uid("ok").result("gpu", "gpu-0");
    ClaimFixture elsewhere =
        claim("far").uid("far").result("gpu", "gpu.kdra.io", "node-z", "gpu-1");
    reader.add(good.build()).add(elsewhere.build());
    Map<String, PrepareResult> r =
        driver()
            .prepareResourceClaims(
                List.of(
                    good.ref(),
                    elsewhere.ref(),
                    new ClaimRef("default", "missing", "nope"),
                    new ClaimRef("", "no-ns", "x")));

    assertThat(r.get("ok").error()).isEmpty();
    assertThat(r.get("far").error())
        .isEqualTo(
            "claim default/far (uid far): "
                + "status.allocation.devices.results[0].pool: \"node-z\" is not this node's pool \"node-a\"");
    assertThat(r.get("missing").error()).isEqualTo("resourceclaim default/nope not found");
    assertThat(r.get("no-ns").error()).isEqualTo("claims[].namespace: must not be empty");
    assertThat(cdiFiles()).containsExactly("k8s.gpu.kdra.io-claim_ok.json");
  }

  @Test
  void aPrepareThatFailsPartWayReleasesTheSetupItBegan() throws Exception {
    RecordingSetup setup = new RecordingSetup("gpu-1");
    ClaimFixture c = claim("c").uid("u").result("a", "gpu-0").result("b", "gpu-1");
    reader.add(c.build());

    PrepareResult r =
        driver(DeviceDriver.PrepareInterlude.NONE, setup)
            .prepareResourceClaims(List.of(c.ref()))
            .get("u");

    assertThat(r.error()).contains("cannot set up gpu-1");
    // the failed device too: a setup that fails half-way may have left something behind
    assertThat(setup.calls)
        .containsExactly(
            "prepare gpu-0", "prepare gpu-1", "release gpu-0 last", "release gpu-1 last");
    assertThat(cdiFiles()).isEmpty();
  }

  @Test
  void undoingAFailedPrepareKeepsTheSetupAnotherPreparedClaimUses() throws Exception {
    inventory = Inventories.shared(Inventories.gpus(8), "gpu-0");
    RecordingSetup setup = new RecordingSetup("gpu-1");
    ClaimFixture first = claim("first").uid("u1").result("a", "gpu-0");
    ClaimFixture second = claim("second").uid("u2").result("a", "gpu-0").result("b", "gpu-1");
    reader.add(first.build()).add(second.build());
    DeviceDriver d = driver(DeviceDriver.PrepareInterlude.NONE, setup);

    assertThat(d.prepareResourceClaims(List.of(first.ref())).get("u1").error()).isEmpty();
    setup.calls.clear();
    assertThat(d.prepareResourceClaims(List.of(second.ref())).get("u2").error())
        .contains("cannot set up gpu-1");

    assertThat(setup.calls)
        .containsExactly(
            "prepare gpu-0", "prepare gpu-1", "release gpu-0 shared", "release gpu-1 last");
    assertThat(cdiFiles()).containsExactly("k8s.gpu.kdra.io-claim_u1.json");
  }

  @Test
  void aFailedPrepareWhoseUndoFailsKeepsItsIntentForTheNextStart() throws Exception {
    DeviceSetup stuck =
        new RecordingSetup("gpu-1") {
          @Override
          public void release(NodeDevice device, boolean lastUser) {
            throw new IllegalStateException("nvidia-smi timed out");
          }
        };
    ClaimFixture c = claim("c").uid("u").result("a", "gpu-1");
    reader.add(c.build());

    PrepareResult r =
        driver(DeviceDriver.PrepareInterlude.NONE, stuck)
            .prepareResourceClaims(List.of(c.ref()))
            .get("u");

    assertThat(r.error()).contains("cannot set up gpu-1");
    assertThat(SetupJournal.beside(dir.resolve("plugin/checkpoint.json")).pending())
        .containsExactly(new SetupJournal.Intent("u", List.of("gpu-1")));
  }

  /**
   * A setup command that hangs (until the runner's timeout) holds the node's setup lock; a claim
   * whose devices need no setup is unprepared meanwhile, not queued behind it.
   */
  @Test
  void aHungSetupDoesNotHoldUpTheUnprepareOfAClaimThatNeedsNoSetup() throws Exception {
    java.util.concurrent.CountDownLatch hung = new java.util.concurrent.CountDownLatch(1);
    java.util.concurrent.CountDownLatch release = new java.util.concurrent.CountDownLatch(1);
    DeviceSetup setup =
        new DeviceSetup() {
          @Override
          public DeviceEdits prepare(Allocated device) throws PrepareException {
            if (device.device().name().equals("gpu-1")) {
              hung.countDown();
              try {
                release.await();
              } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
              }
            }
            return DeviceEdits.NONE;
          }

          @Override
          public void release(NodeDevice device, boolean lastUser) {}

          @Override
          public boolean involves(NodeDevice device) {
            return device.name().equals("gpu-1");
          }
        };
    ClaimFixture plain = claim("plain").uid("ua").result("gpu", "gpu-0");
    ClaimFixture shared = claim("shared").uid("ub").result("gpu", "gpu-1");
    reader.add(plain.build()).add(shared.build());
    DeviceDriver d = driver(DeviceDriver.PrepareInterlude.NONE, setup);
    assertThat(d.prepareResourceClaims(List.of(plain.ref())).get("ua").error()).isEmpty();
    java.util.concurrent.ExecutorService calls =
        java.util.concurrent.Executors.newCachedThreadPool();
    try {
      var stuck = calls.submit(() -> d.prepareResourceClaims(List.of(shared.ref())));
      assertThat(hung.await(30, java.util.concurrent.TimeUnit.SECONDS)).isTrue();

      var unprepared = calls.submit(() -> d.unprepareResourceClaims(List.of(plain.ref())));

      assertThat(unprepared.get(30, java.util.concurrent.TimeUnit.SECONDS)).containsEntry("ua", "");
      assertThat(cdiFiles()).doesNotContain("k8s.gpu.kdra.io-claim_ua.json");
      release.countDown();
      assertThat(stuck.get(30, java.util.concurrent.TimeUnit.SECONDS).get("ub").error()).isEmpty();
    } finally {
      release.countDown();
      calls.shutdownNow();
    }
  }

  /**
   * A pod force-deleted while its claim is prepared: the claim's device is allocated to a new
   * claim, and the kubelet may prepare that one before it unprepares the old one (k/k#141471). The
   * device is not handed out twice; the kubelet's retry succeeds once the old claim is unprepared.
   */
  @Test
  void aDeviceStillPreparedForAnotherClaimIsNotPreparedAgainUntilThatOneIsUnprepared()
      throws Exception {
    ClaimFixture old = claim("old").uid("u-old").result("gpu", "gpu-0");
    ClaimFixture next = claim("next").uid("u-next").result("gpu", "gpu-0");
    ClaimFixture audit = claim("audit").uid("u-audit").result("gpu", "gpu-0").adminAccess();
    reader.add(old.build()).add(next.build()).add(audit.build());
    DeviceDriver d = driver();
    assertThat(d.prepareResourceClaims(List.of(old.ref())).get("u-old").error()).isEmpty();

    PrepareResult refused = d.prepareResourceClaims(List.of(next.ref())).get("u-next");

    assertThat(refused.error())
        .startsWith(
            "claim default/next (uid u-next): device \"gpu-0\" is still prepared for claim"
                + " default/old (uid u-old)");
    assertThat(cdiFiles()).containsExactly("k8s.gpu.kdra.io-claim_u-old.json");
    assertThat(d.prepareResourceClaims(List.of(audit.ref())).get("u-audit").error())
        .as("adminAccess takes nothing away")
        .isEmpty();
    assertThat(d.unprepareResourceClaims(List.of(old.ref()))).containsEntry("u-old", "");
    assertThat(d.prepareResourceClaims(List.of(next.ref())).get("u-next").error()).isEmpty();
  }

  /**
   * The fence holds while the first claim is still being prepared: devices are reserved before
   * setup, not only once the checkpoint has the claim.
   */
  @Test
  void twoClaimsPreparedAtOnceOnOneDeviceGetItOnce() throws Exception {
    ClaimFixture first = claim("first").uid("u1").result("gpu", "gpu-0");
    ClaimFixture second = claim("second").uid("u2").result("gpu", "gpu-0");
    reader.add(first.build()).add(second.build());
    java.util.concurrent.CountDownLatch inWindow = new java.util.concurrent.CountDownLatch(1);
    java.util.concurrent.CountDownLatch go = new java.util.concurrent.CountDownLatch(1);
    DeviceDriver d =
        driver(
            claim -> {
              if (claim.uid().equals("u1")) {
                inWindow.countDown();
                go.await();
              }
            });
    java.util.concurrent.ExecutorService calls =
        java.util.concurrent.Executors.newCachedThreadPool();
    try {
      var firstCall = calls.submit(() -> d.prepareResourceClaims(List.of(first.ref())));
      assertThat(inWindow.await(30, java.util.concurrent.TimeUnit.SECONDS)).isTrue();

      PrepareResult refused = d.prepareResourceClaims(List.of(second.ref())).get("u2");

      go.countDown();
      assertThat(firstCall.get(30, java.util.concurrent.TimeUnit.SECONDS).get("u1").error())
          .isEmpty();
      assertThat(refused.error()).contains("device \"gpu-0\" is still prepared for claim");
      assertThat(cdiFiles()).containsExactly("k8s.gpu.kdra.io-claim_u1.json");
    } finally {
      go.countDown();
      calls.shutdownNow();
    }
  }

  /** A refused or failed prepare reserves nothing: the device is free for the next claim. */
  @Test
  void aFailedPrepareLeavesItsDevicesFree() throws Exception {
    RecordingSetup setup = new RecordingSetup("gpu-1");
    ClaimFixture failing = claim("failing").uid("u1").result("a", "gpu-0").result("b", "gpu-1");
    ClaimFixture next = claim("next").uid("u2").result("a", "gpu-0");
    reader.add(failing.build()).add(next.build());
    DeviceDriver d = driver(DeviceDriver.PrepareInterlude.NONE, setup);

    assertThat(d.prepareResourceClaims(List.of(failing.ref())).get("u1").error())
        .contains("cannot set up gpu-1");
    assertThat(d.prepareResourceClaims(List.of(next.ref())).get("u2").error()).isEmpty();
  }

  @Test
  void anApiFailureIsAClaimErrorAndNothingIsWritten() throws Exception {
    reader.broken = true;
    ClaimFixture c = claim("c").uid("u").result("gpu", "gpu-0");
    PrepareResult r = driver().prepareResourceClaims(List.of(c.ref())).get("u");
    assertThat(r.error()).contains("reading resourceclaim default/c failed: HTTP 503");
    assertThat(cdiFiles()).isEmpty();
  }

  @Test
  void preparesManyClaimsConcurrently() throws Exception {
    List<ClaimRef> refs = new ArrayList<>();
    inventory = Inventories.gpus(64);
    for (int i = 0; i < 64; i++) {
      ClaimFixture c = claim("c" + i).uid("u" + i).result("gpu", "gpu-" + i);
      reader.add(c.build());
      refs.add(c.ref());
    }
    DeviceDriver d = driver();
    Map<String, PrepareResult> r = d.prepareResourceClaims(refs);
    assertThat(r).hasSize(64);
    assertThat(r.values()).allSatisfy(p -> assertThat(p.error()).isEmpty());
    assertThat(cdiFiles()).hasSize(64);
    assertThat(d.unprepareResourceClaims(refs).values()).allMatch(String::isEmpty);
    assertThat(cdiFiles()).isEmpty();
  }
}
