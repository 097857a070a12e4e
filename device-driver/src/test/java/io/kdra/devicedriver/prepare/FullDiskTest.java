package io.kdra.devicedriver.prepare;

import static io.kdra.devicedriver.testing.ClaimFixture.claim;
import static org.assertj.core.api.Assertions.assertThat;

import io.kdra.devicedriver.plugin.PrepareResult;
import io.kdra.devicedriver.testing.ClaimFixture;
import io.kdra.devicedriver.testing.FakeClaimReader;
import io.kdra.devicedriver.testing.Inventories;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Clock;
import java.util.ArrayList;
import java.util.List;
import java.util.stream.Stream;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

/**
 * A disk of the node fills up ({@code ENOSPC}) while a claim is prepared: the CDI directory, or the
 * plugin directory (checkpoint, setup intents, device-metadata files). Whichever write fails, the
 * prepare fails with an error that names the file and the cause, leaves nothing a later start would
 * read as prepared (no spec, no metadata, no checkpoint entry, no setup left running or intended),
 * and succeeds once there is space again; a restarted driver then starts clean and answers the
 * same.
 */
class FullDiskTest {
  @TempDir Path dir;
  private final FakeClaimReader reader = new FakeClaimReader();
  private final FullDisk disk = new FullDisk();
  private final List<DeviceDriver> drivers = new ArrayList<>();

  /** Which disk is full, and what the driver writes besides spec and checkpoint. */
  enum Case {
    CDI_DIR_FULL("cdi", false, false, "CDI spec", "cdi/k8s.gpu.kdra.io-claim_u.json"),
    CDI_DIR_FULL_AFTER_METADATA("cdi", true, false, "CDI spec", "cdi/k8s.gpu.kdra.io-claim_u.json"),
    PLUGIN_DIR_FULL_AFTER_SPEC("plugin", false, false, "checkpoint", "plugin/checkpoint.json"),
    PLUGIN_DIR_FULL_AT_METADATA(
        "plugin", true, false, "device-metadata file", "plugin/dra-device-metadata/default_c"),
    PLUGIN_DIR_FULL_AT_SETUP_INTENT(
        "plugin", false, true, "setup intent", "plugin/setup-intents/u.intent");

    final String full;
    final boolean metadata;
    final boolean setup;
    final String what;
    final String file;

    Case(String full, boolean metadata, boolean setup, String what, String file) {
      this.full = full;
      this.metadata = metadata;
      this.setup = setup;
      this.what = what;
      this.file = file;
    }
  }

  @ParameterizedTest
  @EnumSource(Case.class)
  void aFullDiskFailsThePrepareCleanlyAndTheRetrySucceedsOnceThereIsSpace(Case c) throws Exception {
    ClaimFixture claim = claim("c").uid("u").result("gpu", "gpu-0");
    reader.add(claim.build());
    DeviceDriverFixture.RecordingSetup setup = new DeviceDriverFixture.RecordingSetup();
    DeviceDriver driver = driver(c, setup);
    disk.fill(dir.resolve(c.full));

    PrepareResult failed = driver.prepareResourceClaims(List.of(claim.ref())).get("u");

    // the claim, what could not be written where, and the kernel's cause
    assertThat(failed.error())
        .contains("claim default/c (uid u)")
        .contains("cannot write the " + c.what + " " + dir.resolve(c.file))
        .endsWith(": " + FullDisk.ENOSPC);
    assertThat(files("cdi")).isEmpty();
    assertThat(dir.resolve("plugin/dra-device-metadata/default_c")).doesNotExist();
    assertThat(driver.prepared()).isEmpty();
    assertThat(SetupJournal.beside(dir.resolve("plugin/checkpoint.json")).pending()).isEmpty();
    if (c.setup) {
      // the intent could not be written: the device was not touched, or was released again
      assertThat(setup.calls).doesNotContain("prepare gpu-0");
    }

    disk.free();
    PrepareResult retried = driver.prepareResourceClaims(List.of(claim.ref())).get("u");
    assertThat(retried.error()).isEmpty();
    assertThat(files("cdi")).containsExactly("k8s.gpu.kdra.io-claim_u.json");

    driver.close();
    DeviceDriver restarted = driver(c, new DeviceDriverFixture.RecordingSetup());
    assertThat(restarted.restore()).isEqualTo(1);
    assertThat(restarted.prepareResourceClaims(List.of(claim.ref())).get("u")).isEqualTo(retried);
    assertThat(restarted.unprepareResourceClaims(List.of(claim.ref()))).containsEntry("u", "");
    assertThat(files("cdi")).isEmpty();
    assertThat(dir.resolve("plugin/dra-device-metadata/default_c")).doesNotExist();
  }

  private DeviceDriver driver(Case c, DeviceSetup setup) throws Exception {
    Path plugin = dir.resolve("plugin");
    PreparePlanner planner =
        new PreparePlanner(
            ClaimFixture.DRIVER, ClaimFixture.NODE, c.setup ? setup : DeviceSetup.NONE);
    if (c.metadata) {
      planner = planner.withDeviceMetadata(plugin);
    }
    DeviceDriver d =
        new DeviceDriver(
            planner,
            reader,
            () -> Inventories.gpus(2),
            new CdiSpecStore(dir.resolve("cdi"), disk),
            CheckpointStore.open(plugin.resolve("checkpoint.json"), Clock.systemUTC(), disk),
            ClaimTelemetry.NONE,
            Clock.systemUTC(),
            2,
            DeviceDriver.PrepareInterlude.NONE,
            plugin.resolve("serialize.lock"));
    drivers.add(d);
    return d;
  }

  private List<String> files(String under) throws Exception {
    Path d = dir.resolve(under);
    if (!Files.isDirectory(d)) {
      return List.of();
    }
    try (Stream<Path> s = Files.walk(d)) {
      return s.filter(Files::isRegularFile).map(p -> d.relativize(p).toString()).sorted().toList();
    }
  }

  @AfterEach
  void close() {
    drivers.forEach(DeviceDriver::close);
  }
}
