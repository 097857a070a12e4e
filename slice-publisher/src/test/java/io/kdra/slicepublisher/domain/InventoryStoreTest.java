package io.kdra.slicepublisher.domain;

import static io.kdra.slicepublisher.domain.Fixtures.DRIVER;
import static io.kdra.slicepublisher.domain.Fixtures.T0;
import static io.kdra.slicepublisher.domain.Fixtures.devs;
import static io.kdra.slicepublisher.domain.Fixtures.inv;
import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Named.named;

import java.time.Duration;
import java.time.Instant;
import java.util.Optional;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

class InventoryStoreTest {

  private static final Instant ENDED = T0.plus(Duration.ofSeconds(5));
  private static final Instant EARLIER_END = T0.plus(Duration.ofSeconds(1));

  private static final NodeInventory OPEN = inv("n1", devs(1)).build(); // sequence 1

  static Stream<Arguments> streamEnds() {
    return Stream.of(
        Arguments.of(
            named("the stream's last snapshot is current: marked", OPEN),
            "n1",
            1L,
            true,
            Optional.of(ENDED)),
        Arguments.of(
            named("a newer stream's snapshot replaced it: left alone", OPEN),
            "n1",
            0L,
            false,
            Optional.empty()),
        Arguments.of(
            named(
                "already marked (the same end seen twice): left alone",
                OPEN.disconnectedAt(EARLIER_END)),
            "n1",
            1L,
            false,
            Optional.of(EARLIER_END)),
        Arguments.of(
            named("nothing stored for the node: nothing marked", OPEN),
            "n2",
            1L,
            false,
            Optional.empty()));
  }

  @ParameterizedTest(name = "{0}")
  @MethodSource("streamEnds")
  void aStreamEndMarksOnlyTheCurrentUnmarkedSnapshot(
      NodeInventory stored,
      String node,
      long lastSequence,
      boolean marks,
      Optional<Instant> disconnectedAt) {
    InventoryStore store = new InventoryStore();
    store.put(stored);

    Optional<NodeInventory> marked = store.streamEnded(DRIVER, node, lastSequence, ENDED);

    assertThat(marked.isPresent()).isEqualTo(marks);
    marked.ifPresent(m -> assertThat(store.get(DRIVER, node)).contains(m));
    assertThat(store.get(DRIVER, "n1").flatMap(NodeInventory::disconnectedAt))
        .isEqualTo(disconnectedAt);
  }

  /**
   * A driver upgrade with surge: the new driver pod's stream opens while the old one's is still
   * open, and the old one may still send a heartbeat. Sequences start at each process's start
   * (milliseconds), so the newer process's are higher.
   */
  @Test
  void theNewerDriverProcessKeepsTheNodeWhileTheOlderOnesStreamFadesOut() {
    InventoryStore store = new InventoryStore();
    NodeInventory old = sequence(1_000);
    NodeInventory next = sequence(9_000);
    NodeInventory oldHeartbeat = sequence(1_001);
    store.put(old);
    store.put(next);

    store.put(oldHeartbeat);

    assertThat(store.get(DRIVER, "n1")).contains(next);
    assertThat(store.streamEnded(DRIVER, "n1", 1_001, ENDED))
        .as("the old stream's end marks nothing: the new stream is open")
        .isEmpty();
    assertThat(store.get(DRIVER, "n1").flatMap(NodeInventory::disconnectedAt)).isEmpty();
  }

  /** A lower sequence is a restarted process after a clock step back once the other has gone. */
  @Test
  void aLowerSequenceIsTakenOnceTheStreamOfTheHigherOneHasEnded() {
    InventoryStore store = new InventoryStore();
    store.put(sequence(9_000));
    store.streamEnded(DRIVER, "n1", 9_000, ENDED);

    store.put(sequence(1_000));

    assertThat(store.get(DRIVER, "n1").map(NodeInventory::sequence)).contains(1_000L);
    assertThat(store.get(DRIVER, "n1").flatMap(NodeInventory::disconnectedAt)).isEmpty();
  }

  private static NodeInventory sequence(long sequence) {
    NodeInventory base = OPEN;
    return new NodeInventory(
        base.driver(),
        base.nodeName(),
        sequence,
        base.devices(),
        base.sharedCounters(),
        T0.plusMillis(sequence));
  }
}
