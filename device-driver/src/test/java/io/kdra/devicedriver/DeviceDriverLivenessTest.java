package io.kdra.devicedriver;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.kdra.devicedriver.discovery.DiscoveryBackend;
import io.kdra.devicedriver.discovery.DiscoveryException;
import io.kdra.devicedriver.discovery.DiscoveryLiveness;
import io.kdra.devicedriver.discovery.Inventory;
import io.kdra.devicedriver.discovery.InventoryWatcher;
import io.kdra.devicedriver.plugin.ClaimRef;
import io.kdra.devicedriver.plugin.DraPlugin;
import io.kdra.devicedriver.plugin.KubeletPluginServer;
import io.kdra.devicedriver.plugin.PluginSocketProbe;
import io.kdra.devicedriver.plugin.PrepareResult;
import io.kdra.devicedriver.plugin.RegistrationState;
import io.kdra.devicedriver.testing.Inventories;
import io.kdra.devicedriver.testing.MutableClock;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Supplier;
import org.eclipse.microprofile.health.HealthCheckResponse;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

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
    HealthCheckResponse down =
        DeviceDriverLiveness.check(watcher, RULE, clock.instant(), Optional::empty);
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
    HealthCheckResponse r =
        DeviceDriverLiveness.check(null, RULE, clock.instant(), Optional::empty);
    assertThat(r.getStatus()).isEqualTo(HealthCheckResponse.Status.UP);
  }

  /**
   * The kubelet reaches the driver only through its plugin socket: a socket that no longer answers
   * (its file deleted under a running server, the server stopped) is a driver to restart, however
   * fresh discovery is.
   */
  @Test
  void aPluginSocketThatDoesNotAnswerMakesTheDriverNotLive(@TempDir Path dir) throws Exception {
    watcher =
        new InventoryWatcher(
            new DiscoveryBackend() {
              @Override
              public String name() {
                return "fine";
              }

              @Override
              public Inventory discover() {
                return Inventories.gpus(1);
              }
            },
            clock);
    watcher.refresh();
    KubeletPluginServer server =
        new KubeletPluginServer(
            new KubeletPluginServer.Settings(
                "gpu.kdra.io", dir.resolve("registry"), dir.resolve("plugins"), true),
            new DraPlugin() {
              @Override
              public Map<String, PrepareResult> prepareResourceClaims(List<ClaimRef> claims) {
                throw new AssertionError("the probe prepares nothing");
              }

              @Override
              public Map<String, String> unprepareResourceClaims(List<ClaimRef> claims) {
                throw new AssertionError("the probe unprepares nothing");
              }

              @Override
              public void handleError(String message, Throwable cause) {}
            },
            new RegistrationState());
    server.start();
    try (PluginSocketProbe probe = new PluginSocketProbe(Duration.ofSeconds(30))) {
      Supplier<Optional<String>> socket = () -> probe.check(server.draSocket());
      assertThat(DeviceDriverLiveness.check(watcher, RULE, clock.instant(), socket).getStatus())
          .isEqualTo(HealthCheckResponse.Status.UP);

      Files.delete(server.draSocket());

      HealthCheckResponse down = DeviceDriverLiveness.check(watcher, RULE, clock.instant(), socket);
      assertThat(down.getStatus()).isEqualTo(HealthCheckResponse.Status.DOWN);
      assertThat(down.getData().orElseThrow().get("plugin-socket").toString())
          .contains("dra.sock does not answer (UNAVAILABLE");
    } finally {
      server.close();
    }
  }

  @Test
  void aSingleMissedSocketCheckIsForgivenTheSecondInARowIsNot() {
    var misses = new DeviceDriverLiveness.SecondMissInARow();
    Optional<String> miss = Optional.of("dra.sock does not answer (DEADLINE_EXCEEDED)");
    assertThat(misses.judge(miss)).isEmpty();
    assertThat(misses.judge(Optional.empty())).isEmpty();
    assertThat(misses.judge(miss)).isEmpty();
    assertThat(misses.judge(miss)).isEqualTo(miss);
    assertThat(misses.judge(miss)).isEqualTo(miss);
    assertThat(misses.judge(Optional.empty())).isEmpty();
    assertThat(misses.judge(miss)).isEmpty();
  }

  private HealthCheckResponse.Status status() {
    return DeviceDriverLiveness.check(watcher, RULE, clock.instant(), Optional::empty).getStatus();
  }
}
