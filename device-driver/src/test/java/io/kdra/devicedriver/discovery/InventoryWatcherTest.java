package io.kdra.devicedriver.discovery;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.kdra.devicedriver.testing.Inventories;
import java.time.Duration;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Deque;
import java.util.List;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Supplier;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/** The periodic discovery task: it survives whatever a pass throws. */
class InventoryWatcherTest {
  private InventoryWatcher watcher;

  @AfterEach
  void close() {
    if (watcher != null) {
      watcher.close();
    }
  }

  /** Answers the scripted outcomes in order, then repeats the last one. */
  private static final class ScriptedBackend implements DiscoveryBackend {
    private final Deque<Supplier<Inventory>> script = new ArrayDeque<>();
    final AtomicInteger passes = new AtomicInteger();

    @SafeVarargs
    ScriptedBackend(Supplier<Inventory>... outcomes) {
      script.addAll(List.of(outcomes));
    }

    @Override
    public String name() {
      return "scripted";
    }

    @Override
    public synchronized Inventory discover() {
      passes.incrementAndGet();
      Supplier<Inventory> next = script.size() > 1 ? script.poll() : script.peek();
      return next.get();
    }
  }

  private static Supplier<Inventory> failing(RuntimeException e) {
    return () -> {
      throw e;
    };
  }

  @Test
  void exceptionsWithoutAMessageDoNotEndThePeriodicTask() {
    Inventory later = Inventories.gpus(2);
    ScriptedBackend backend =
        new ScriptedBackend(
            () -> Inventories.gpus(1),
            failing(new IllegalStateException()),
            failing(new IllegalStateException()),
            () -> later);
    watcher = new InventoryWatcher(backend);

    watcher.start(Duration.ofMillis(100));

    await().atMost(Duration.ofSeconds(30)).until(() -> watcher.current().equals(later));
    assertThat(backend.passes.get()).isGreaterThanOrEqualTo(4);
  }

  @Test
  void aFailedFirstPassWithoutAMessageDoesNotStopStartUp() {
    Inventory inventory = Inventories.gpus(1);
    ScriptedBackend backend =
        new ScriptedBackend(
            failing(new IllegalStateException()),
            failing(new IllegalStateException()),
            () -> inventory);
    watcher = new InventoryWatcher(backend);

    watcher.start(Duration.ofMillis(100));

    await().atMost(Duration.ofSeconds(30)).until(watcher::discovered);
    assertThat(watcher.current()).isEqualTo(inventory);
  }

  @Test
  void aPassThatThrowsWithoutAMessageIsAFailedPassNamingTheException() {
    watcher =
        new InventoryWatcher(new ScriptedBackend(failing(new UnsupportedOperationException())));
    List<DiscoveryPass> passes = new ArrayList<>();
    watcher.onPass(passes::add);

    watcher.refresh();

    assertThat(passes).singleElement().satisfies(p -> assertThat(p.failed()).isTrue());
    assertThat(watcher.lastError()).contains("UnsupportedOperationException");
  }

  @Test
  void anErrorThatIsNotTheVirtualMachinesIsAFailedPassToo() {
    Inventory inventory = Inventories.gpus(1);
    ScriptedBackend backend =
        new ScriptedBackend(
            () -> {
              throw new NoClassDefFoundError("com/example/Missing");
            },
            () -> inventory);
    watcher = new InventoryWatcher(backend);

    watcher.start(Duration.ofMillis(100));

    await().atMost(Duration.ofSeconds(30)).until(watcher::discovered);
    assertThat(watcher.current()).isEqualTo(inventory);
  }
}
