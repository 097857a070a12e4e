package io.kdra.devicedriver.prepare;

import static io.kdra.devicedriver.testing.ClaimFixture.claim;
import static org.assertj.core.api.Assertions.assertThat;

import io.kdra.devicedriver.discovery.NodeDevice;
import io.kdra.devicedriver.testing.ClaimFixture;
import io.kdra.devicedriver.testing.FakeClaimReader;
import io.kdra.devicedriver.testing.Inventories;
import io.kdra.devicedriver.testing.MutableClock;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The periodic checkpoint-to-API reconcile, through a driver with recorded device setup. */
class StaleClaimCleanupTest {
  private static final Duration GRACE = Duration.ofMinutes(5);

  @TempDir Path dir;
  private final FakeClaimReader reader = new FakeClaimReader();
  private final MutableClock clock = new MutableClock(Instant.parse("2026-12-06T10:00:00Z"));
  private final List<String> released = new CopyOnWriteArrayList<>();
  private DeviceDriver driver;
  private StaleClaimCleanup cleanup;

  private final ClaimFixture gone = claim("gone").uid("ug").result("gpu", "gpu-0");
  private final ClaimFixture kept =
      claim("kept").uid("uk").result("gpu", "gpu-1").reservedFor("web");

  private final DeviceSetup setup =
      new DeviceSetup() {
        @Override
        public DeviceEdits prepare(Allocated device) {
          return DeviceEdits.NONE;
        }

        @Override
        public void release(NodeDevice device, boolean lastUser) {
          released.add(device.name());
        }
      };

  @BeforeEach
  void prepareTwoClaims() throws Exception {
    driver = driver();
    reader.add(gone.build()).add(kept.build());
    assertThat(driver.prepareResourceClaims(List.of(gone.ref(), kept.ref())).values())
        .allSatisfy(r -> assertThat(r.error()).isEmpty());
    cleanup = cleanup();
  }

  private DeviceDriver driver() throws Exception {
    return new DeviceDriver(
        new PreparePlanner(ClaimFixture.DRIVER, ClaimFixture.NODE, setup),
        reader,
        () -> Inventories.gpus(2),
        new CdiSpecStore(dir.resolve("cdi")),
        CheckpointStore.open(dir.resolve("checkpoint.json"), Clock.systemUTC()),
        ClaimTelemetry.NONE,
        Clock.systemUTC(),
        2);
  }

  private StaleClaimCleanup cleanup() {
    return new StaleClaimCleanup(
        driver, reader, ClaimFixture.DRIVER, ClaimFixture.NODE, GRACE, clock);
  }

  /**
   * The driver restarts over a garbage checkpoint: both entries are rebuilt from their CDI specs,
   * which hold the claims' UIDs and devices but not their names.
   */
  private void restartOverADamagedCheckpoint() throws Exception {
    cleanup.close();
    driver.close();
    Files.writeString(dir.resolve("checkpoint.json"), "\u0000 not a checkpoint");
    driver = driver();
    assertThat(driver.restore()).isEqualTo(2);
    assertThat(driver.prepared().values()).allMatch(PreparedClaim::recovered);
    cleanup = cleanup();
  }

  @AfterEach
  void close() {
    cleanup.close();
    driver.close();
  }

  @Test
  void aClaimGoneForTheGracePeriodIsUnpreparedAndAClaimInUseIsNot() throws Exception {
    reader.remove("default", "gone");

    assertThat(cleanup.pass()).as("first seen gone").isEmpty();
    clock.advance(GRACE.minusSeconds(1));
    assertThat(cleanup.pass()).isEmpty();
    assertThat(released).isEmpty();

    clock.advance(Duration.ofSeconds(1));
    assertThat(cleanup.pass()).containsOnlyKeys("ug");

    assertThat(released).containsExactly("gpu-0");
    assertThat(driver.prepared()).containsOnlyKeys("uk");
    assertThat(dir.resolve("cdi/k8s.gpu.kdra.io-claim_ug.json")).doesNotExist();
    assertThat(dir.resolve("cdi/k8s.gpu.kdra.io-claim_uk.json")).exists();
    clock.advance(Duration.ofDays(1));
    assertThat(cleanup.pass()).isEmpty();
    assertThat(driver.prepared()).containsOnlyKeys("uk");
  }

  @Test
  void aClaimBackInUseStartsItsGracePeriodAfresh() {
    reader.remove("default", "gone");
    cleanup.pass();
    clock.advance(GRACE.minusSeconds(1));
    reader.add(gone.reservedFor("web").build()); // seen again, held by a pod
    cleanup.pass();
    reader.remove("default", "gone");
    clock.advance(Duration.ofSeconds(1));

    assertThat(cleanup.pass()).isEmpty();
    assertThat(driver.prepared()).containsOnlyKeys("ug", "uk");
  }

  @Test
  void anUnreadableApiUnpreparesNothing() throws Exception {
    reader.remove("default", "gone");
    cleanup.pass();
    reader.broken = true;
    clock.advance(Duration.ofDays(1));

    assertThat(cleanup.pass()).isEmpty();
    assertThat(driver.prepared()).containsOnlyKeys("ug", "uk");
    assertThat(Files.list(dir.resolve("cdi"))).hasSize(2);
  }

  @Test
  void aRebuiltClaimWhoseUidIsGoneIsUnpreparedAfterTheGracePeriod() throws Exception {
    restartOverADamagedCheckpoint();
    reader.remove("default", "gone");

    assertThat(cleanup.pass()).as("first seen gone").isEmpty();
    clock.advance(GRACE.minusSeconds(1));
    assertThat(cleanup.pass()).isEmpty();
    assertThat(released).isEmpty();

    clock.advance(Duration.ofSeconds(1));
    assertThat(cleanup.pass()).containsOnlyKeys("ug");

    assertThat(released).containsExactly("gpu-0");
    assertThat(driver.prepared()).containsOnlyKeys("uk");
    assertThat(dir.resolve("cdi/k8s.gpu.kdra.io-claim_ug.json")).doesNotExist();
    assertThat(dir.resolve("cdi/k8s.gpu.kdra.io-claim_uk.json")).exists();
  }

  /**
   * A rebuilt claim found in use is never touched, and its name, once found, is read as any
   * other's: one list of the claims, then GETs. A claim of that name with another UID proves the
   * rebuilt one gone; so does one found reserved for no pod.
   */
  @Test
  void aRebuiltClaimInUseIsKeptUntilItsNameBelongsToAnotherClaim() throws Exception {
    restartOverADamagedCheckpoint(); // "gone" is reserved for no pod: gone, found by its UID

    for (int i = 0; i < 4; i++) {
      cleanup.pass();
      clock.advance(GRACE);
    }
    assertThat(driver.prepared()).containsOnlyKeys("uk");
    assertThat(released).containsExactly("gpu-0");
    assertThat(reader.lists).as("lists").hasValue(1);

    reader.remove("default", "kept");
    reader.add(claim("kept").uid("uk2").result("gpu", "gpu-1").reservedFor("web").build());
    assertThat(cleanup.pass()).isEmpty();
    clock.advance(GRACE);
    assertThat(cleanup.pass()).containsOnlyKeys("uk");
    assertThat(driver.prepared()).isEmpty();
    assertThat(reader.lists).as("lists").hasValue(1);
  }

  @Test
  void aFailedListUnpreparesNoRebuiltClaim() throws Exception {
    restartOverADamagedCheckpoint();
    reader.remove("default", "gone");
    cleanup.pass();
    reader.broken = true;
    clock.advance(Duration.ofDays(1));

    assertThat(cleanup.pass()).isEmpty();
    assertThat(driver.prepared()).containsOnlyKeys("ug", "uk");
    assertThat(released).isEmpty();
  }
}
