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
}
