package io.kdra.devicedriver.prepare;

import static io.kdra.devicedriver.prepare.CheckpointCodecTest.prepared;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Clock;
import java.time.Instant;
import java.time.ZoneOffset;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class CheckpointStoreTest {
  private static final Clock CLOCK = Clock.fixed(Instant.ofEpochMilli(1234), ZoneOffset.UTC);

  @TempDir Path dir;

  @Test
  void persistsPutsAndRemovesAcrossReopen() throws Exception {
    Path file = dir.resolve("sub/checkpoint.json");
    CheckpointStore store = CheckpointStore.open(file, CLOCK);
    store.put(prepared("a"));
    store.put(prepared("b"));
    assertThat(store.remove("a")).isTrue();
    assertThat(store.remove("zzz")).isFalse();

    CheckpointStore reopened = CheckpointStore.open(file, CLOCK);
    assertThat(reopened.all()).containsOnlyKeys("b");
    assertThat(reopened.get("b")).contains(prepared("b"));
    assertThat(Files.list(file.getParent())).containsExactly(file); // no temp files left
  }

  /**
   * A remove whose write fails must not report the claim gone while the file still holds it: the
   * kubelet's retry would succeed without writing, and a restart would bring the entry back.
   */
  @Test
  void aRemoveWhoseWriteFailsKeepsTheClaimAndTheRetryWritesIt() throws Exception {
    Path file = dir.resolve("plugin/checkpoint.json");
    CheckpointStore store = CheckpointStore.open(file, CLOCK);
    store.put(prepared("a"));
    store.put(prepared("b"));
    // the directory becomes unwritable, even for root: a regular file where the directory was
    Path saved = Files.move(dir.resolve("plugin"), dir.resolve("plugin.saved"));
    Files.writeString(dir.resolve("plugin"), "");

    assertThatThrownBy(() -> store.remove("a")).isInstanceOf(IOException.class);

    assertThat(store.get("a")).contains(prepared("a"));
    Files.delete(dir.resolve("plugin"));
    Files.move(saved, dir.resolve("plugin"));
    assertThat(store.remove("a")).isTrue();
    assertThat(CheckpointStore.open(file, CLOCK).all()).containsOnlyKeys("b");
  }

  @Test
  void movesADamagedFileAsideAndStartsEmpty() throws Exception {
    Path file = dir.resolve("checkpoint.json");
    Files.writeString(file, "{\"apiVersion\": \"checkpoint.kdra.io/v1\", \"preparedClaims\": {");
    CheckpointStore store = CheckpointStore.open(file, CLOCK);
    assertThat(store.all()).isEmpty();
    assertThat(dir.resolve("checkpoint.json.corrupt-1234")).exists();
    store.put(prepared("a"));
    assertThat(CheckpointStore.open(file, CLOCK).all()).containsOnlyKeys("a");
  }

  /** Random bytes (a torn write, a disk's garbage) are damage too, not a reason to crash-loop. */
  @Test
  void movesAFileThatIsNotUtf8AsideAndStartsEmpty() throws Exception {
    Path file = dir.resolve("checkpoint.json");
    Files.write(file, new byte[] {'{', (byte) 0xC3, (byte) 0x28, (byte) 0xFF, '}'});
    CheckpointStore store = CheckpointStore.open(file, CLOCK);
    assertThat(store.all()).isEmpty();
    assertThat(store.damaged()).isTrue();
    assertThat(dir.resolve("checkpoint.json.corrupt-1234")).exists();
    store.put(prepared("a"));
    assertThat(CheckpointStore.open(file, CLOCK).all()).containsOnlyKeys("a");
  }

  @Test
  void refusesANewerVersionWithoutTouchingIt() throws Exception {
    Path file = dir.resolve("checkpoint.json");
    String newer = "{\"apiVersion\": \"checkpoint.kdra.io/v2\"}";
    Files.writeString(file, newer);
    assertThatThrownBy(() -> CheckpointStore.open(file, CLOCK))
        .isInstanceOf(IOException.class)
        .hasMessageContaining("checkpoint.kdra.io/v2");
    assertThat(Files.readString(file)).isEqualTo(newer);
  }

  @Test
  void concurrentWritersAllLand() throws Exception {
    Path file = dir.resolve("checkpoint.json");
    CheckpointStore store = CheckpointStore.open(file, CLOCK);
    ExecutorService pool = Executors.newFixedThreadPool(8);
    List<Future<?>> futures = new ArrayList<>();
    for (int i = 0; i < 64; i++) {
      String uid = "u" + i;
      futures.add(
          pool.submit(
              () -> {
                store.put(prepared(uid));
                return null;
              }));
    }
    for (Future<?> f : futures) {
      f.get();
    }
    pool.shutdown();
    assertThat(CheckpointStore.open(file, CLOCK).all()).hasSize(64);
  }
}
