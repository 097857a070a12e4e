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

  @BeforeEach
  void prepareTwoClaims() throws Exception {
    DeviceSetup setup =
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
    driver =
        new DeviceDriver(
            new PreparePlanner(ClaimFixture.DRIVER, ClaimFixture.NODE, setup),
            reader,
            () -> Inventories.gpus(2),
            new CdiSpecStore(dir.resolve("cdi")),
            CheckpointStore.open(dir.resolve("checkpoint.json"), Clock.systemUTC()),
            ClaimTelemetry.NONE,
            Clock.systemUTC(),
            2);
    reader.add(gone.build()).add(kept.build());
    assertThat(driver.prepareResourceClaims(List.of(gone.ref(), kept.ref())).values())
        .allSatisfy(r -> assertThat(r.error()).isEmpty());
    cleanup =
        new StaleClaimCleanup(driver, reader, ClaimFixture.DRIVER, ClaimFixture.NODE, GRACE, clock);
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
}
