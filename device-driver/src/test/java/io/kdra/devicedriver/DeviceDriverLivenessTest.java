package io.kdra.devicedriver;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.kdra.devicedriver.discovery.DiscoveryBackend;
import io.kdra.devicedriver.discovery.DiscoveryException;
import io.kdra.devicedriver.discovery.DiscoveryLiveness;
import io.kdra.devicedriver.discovery.Inventory;
import io.kdra.devicedriver.discovery.InventoryWatcher;
import io.kdra.devicedriver.testing.Inventories;
import io.kdra.devicedriver.testing.MutableClock;
import java.time.Duration;
import java.time.Instant;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.eclipse.microprofile.health.HealthCheckResponse;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/** Liveness follows discovery's progress: a hung pass is DOWN, a promptly failing one is not. */
class DeviceDriverLivenessTest {
  private static final DiscoveryLiveness RULE = new DiscoveryLiveness(Duration.ofSeconds(60));
  private final MutableClock clock = new MutableClock(Instant.parse("2026-12-01T10:00:00Z"));
  private InventoryWatcher watcher;

  @AfterEach
  void close() {
    if (watcher != null) {
      watcher.close();
    }
  }

  /** The first pass succeeds; the second blocks until released. */
  private static final class HangingBackend implements DiscoveryBackend {
    final CountDownLatch hanging = new CountDownLatch(1);
    final CountDownLatch release = new CountDownLatch(1);
    final AtomicInteger passes = new AtomicInteger();

    @Override
    public String name() {
      return "hanging";
    }

    @Override
    public Inventory discover() {
      if (passes.incrementAndGet() == 2) {
        hanging.countDown();
        try {
          release.await();
        } catch (InterruptedException e) {
          Thread.currentThread().interrupt();
        }
      }
      return Inventories.gpus(1);
    }
  }

  @Test
  void aDiscoveryPassThatHangsMakesTheDriverNotLive() throws Exception {
    HangingBackend backend = new HangingBackend();
    watcher = new InventoryWatcher(backend, clock);
    watcher.start(Duration.ofMillis(100));
    assertThat(status()).isEqualTo(HealthCheckResponse.Status.UP);

    assertThat(backend.hanging.await(30, TimeUnit.SECONDS)).isTrue();
    clock.advance(Duration.ofSeconds(59));
    assertThat(status()).isEqualTo(HealthCheckResponse.Status.UP);
    clock.advance(Duration.ofSeconds(2));
    HealthCheckResponse down = DeviceDriverLiveness.check(watcher, RULE, clock.instant());
    assertThat(down.getStatus()).isEqualTo(HealthCheckResponse.Status.DOWN);
    assertThat(down.getData().orElseThrow().get("discovery").toString()).contains("61s");

    // the pass comes back: live again
    Instant stuckSince = watcher.lastProgress();
    backend.release.countDown();
    await().atMost(Duration.ofSeconds(30)).until(() -> watcher.lastProgress().isAfter(stuckSince));
    assertThat(status()).isEqualTo(HealthCheckResponse.Status.UP);
  }

  @Test
  void discoveryThatFailsPromptlyIsABrokenDeviceNotADeadDriver() {
    watcher =
        new InventoryWatcher(
            new DiscoveryBackend() {
              @Override
              public String name() {
                return "broken";
              }

              @Override
              public Inventory discover() throws DiscoveryException {
                throw new DiscoveryException("nvidia-smi: GPU is lost");
              }
            },
            clock);
    for (int i = 0; i < 60; i++) {
      clock.advance(Duration.ofSeconds(10));
      watcher.refresh();
    }
    assertThat(watcher.discovered()).isFalse();
    assertThat(status()).isEqualTo(HealthCheckResponse.Status.UP);
  }

  @Test
  void beforeDiscoveryStartsTheDriverIsLive() {
    HealthCheckResponse r = DeviceDriverLiveness.check(null, RULE, clock.instant());
    assertThat(r.getStatus()).isEqualTo(HealthCheckResponse.Status.UP);
  }

  private HealthCheckResponse.Status status() {
    return DeviceDriverLiveness.check(watcher, RULE, clock.instant()).getStatus();
  }
}
