package io.kdra.devicedriver.prepare;

import static io.kdra.devicedriver.testing.ClaimFixture.claim;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.kdra.devicedriver.plugin.PrepareResult;
import io.kdra.devicedriver.testing.ClaimFixture;
import io.kdra.devicedriver.testing.FakeClaimReader;
import io.kdra.devicedriver.testing.Inventories;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Clock;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Two driver processes on one node, as during a rolling update with surge: both over the same
 * plugin directory, checkpoint and CDI directory, and the kubelet calls either of them.
 */
class RollingUpdateDriversTest {
  @TempDir Path dir;
  private final FakeClaimReader reader = new FakeClaimReader();
  private final List<DeviceDriver> drivers = new ArrayList<>();
  private final ExecutorService calls = Executors.newCachedThreadPool();

  private DeviceDriver driver(DeviceDriver.PrepareInterlude interlude) throws Exception {
    DeviceDriver d =
        new DeviceDriver(
            new PreparePlanner(ClaimFixture.DRIVER, ClaimFixture.NODE, DeviceSetup.NONE),
            reader,
            () -> Inventories.gpus(8),
            new CdiSpecStore(dir.resolve("cdi")),
            CheckpointStore.open(dir.resolve("plugin/checkpoint.json"), Clock.systemUTC()),
            ClaimTelemetry.NONE,
            Clock.systemUTC(),
            4,
            interlude,
            dir.resolve("plugin/serialize.lock"));
    drivers.add(d);
    return d;
  }

  private DeviceDriver driver() throws Exception {
    return driver(DeviceDriver.PrepareInterlude.NONE);
  }

  @AfterEach
  void close() {
    calls.shutdownNow();
    drivers.forEach(DeviceDriver::close);
  }

  @Test
  void eachSeesTheOthersPreparesAndUnprepares() throws Exception {
    ClaimFixture old = claim("old").uid("u-old").result("gpu", "gpu-0");
    ClaimFixture next = claim("next").uid("u-next").result("gpu", "gpu-0");
    reader.add(old.build()).add(next.build());
    DeviceDriver oldPod = driver();
    DeviceDriver newPod = driver();
    assertThat(oldPod.restore()).isZero();
    assertThat(newPod.restore()).isZero();

    assertThat(oldPod.prepareResourceClaims(List.of(old.ref())).get("u-old").error()).isEmpty();
    PrepareResult refused = newPod.prepareResourceClaims(List.of(next.ref())).get("u-next");

    assertThat(refused.error())
        .as("the fence sees the other process's claim")
        .contains("device \"gpu-0\" is still prepared for claim default/old (uid u-old)");
    assertThat(newPod.prepared()).containsOnlyKeys("u-old");

    // the kubelet unprepares on the new pod what the old one prepared
    assertThat(newPod.unprepareResourceClaims(List.of(old.ref()))).containsEntry("u-old", "");
    assertThat(oldPod.prepared()).isEmpty();
    // and may fall back to the old one for the next prepare
    assertThat(oldPod.prepareResourceClaims(List.of(next.ref())).get("u-next").error()).isEmpty();

    assertThat(newPod.prepared()).containsOnlyKeys("u-next");
    assertThat(CheckpointStore.open(dir.resolve("plugin/checkpoint.json"), Clock.systemUTC()).all())
        .as("what a later driver reads from disk")
        .containsOnlyKeys("u-next");
    assertThat(cdiFiles()).containsExactly("k8s.gpu.kdra.io-claim_u-next.json");
  }

  /**
   * A new pod starting while the old one is half-way through a prepare (its CDI spec written, its
   * checkpoint entry not yet) must not take the spec for a stale one.
   */
  @Test
  void aStartingPodWaitsForThePrepareTheOtherHasInFlight() throws Exception {
    ClaimFixture c = claim("c").uid("u1").result("gpu", "gpu-1");
    reader.add(c.build());
    CountDownLatch inWindow = new CountDownLatch(1);
    CountDownLatch go = new CountDownLatch(1);
    DeviceDriver oldPod =
        driver(
            claim -> {
              inWindow.countDown();
              go.await();
            });
    Future<PrepareResult> prepare =
        calls.submit(() -> oldPod.prepareResourceClaims(List.of(c.ref())).get("u1"));
    assertThat(inWindow.await(30, TimeUnit.SECONDS)).isTrue();

    DeviceDriver newPod = driver();
    Thread[] starter = new Thread[1];
    CompletableFuture<Integer> restored =
        CompletableFuture.supplyAsync(
            () -> {
              starter[0] = Thread.currentThread();
              return newPod.restore();
            },
            calls);
    // the new pod either finished its start (and removed the spec) or waits for the lock
    await()
        .atMost(Duration.ofSeconds(30))
        .until(() -> restored.isDone() || waitsForTheSharedLock(starter[0]));
    go.countDown();

    assertThat(prepare.get(30, TimeUnit.SECONDS).error()).isEmpty();
    assertThat(restored.get(30, TimeUnit.SECONDS)).isEqualTo(1);
    assertThat(cdiFiles()).containsExactly("k8s.gpu.kdra.io-claim_u1.json");
    assertThat(newPod.prepared()).containsOnlyKeys("u1");
  }

  private static boolean waitsForTheSharedLock(Thread t) {
    return t != null
        && (t.getState() == Thread.State.WAITING || t.getState() == Thread.State.BLOCKED)
        && Arrays.stream(t.getStackTrace())
            .anyMatch(f -> f.getClassName().equals(SharedStateLock.class.getName()));
  }

  private List<String> cdiFiles() throws Exception {
    Path cdi = dir.resolve("cdi");
    if (!Files.exists(cdi)) {
      return List.of();
    }
    try (var s = Files.list(cdi)) {
      return s.map(p -> p.getFileName().toString()).sorted().toList();
    }
  }
}
