package io.kdra.slicepublisher.grpc;

import static org.assertj.core.api.Assertions.assertThat;

import io.kdra.inventory.v1.InventorySnapshot;
import io.kdra.slicepublisher.domain.NodeInventory;
import java.time.Duration;
import java.time.Instant;
import java.util.Optional;
import org.junit.jupiter.api.Test;

/** The snapshot's discovery age and interval become the inventory's discovery time. */
class SnapshotDiscoveryTest {
  private static final SnapshotConverter CONVERTER = new SnapshotConverter(2, 1024);
  private static final Instant RECEIVED = Instant.parse("2026-12-01T10:00:00Z");

  private static InventorySnapshot.Builder snapshot() {
    return InventorySnapshot.newBuilder()
        .setDriver("gpu.kdra.io")
        .setNodeName("node-a")
        .setSequence(1);
  }

  @Test
  void theDiscoveryTimeIsTheReceiptMinusTheAgeTheDriverSays() {
    SnapshotConverter.Result r =
        CONVERTER.convert(
            snapshot().setDiscoveryAgeMillis(90_000).setDiscoveryIntervalMillis(10_000).build(),
            RECEIVED);

    assertThat(r.errors()).isEmpty();
    assertThat(r.inventory().discovery())
        .contains(new NodeInventory.Discovery(RECEIVED.minusSeconds(90), Duration.ofSeconds(10)));
  }

  @Test
  void anAgeOfZeroIsADiscoveryJustNow() {
    SnapshotConverter.Result r =
        CONVERTER.convert(
            snapshot().setDiscoveryAgeMillis(0).setDiscoveryIntervalMillis(10_000).build(),
            RECEIVED);

    assertThat(r.inventory().discovery().map(NodeInventory.Discovery::at)).contains(RECEIVED);
  }

  @Test
  void aDriverThatSaysNothingOfDiscoveryIsNotJudged() {
    assertThat(CONVERTER.convert(snapshot().build(), RECEIVED).inventory().discovery())
        .isEqualTo(Optional.empty());
    // an age without an interval cannot be measured in intervals
    assertThat(
            CONVERTER
                .convert(snapshot().setDiscoveryAgeMillis(5_000).build(), RECEIVED)
                .inventory()
                .discovery())
        .isEmpty();
  }

  @Test
  void negativeValuesAreRefusedNamingTheField() {
    SnapshotConverter.Result r =
        CONVERTER.convert(
            snapshot().setDiscoveryAgeMillis(-1).setDiscoveryIntervalMillis(-5).build(), RECEIVED);

    assertThat(r.ok()).isFalse();
    assertThat(r.errors())
        .containsExactly(
            "discovery_age_millis: must not be negative, not -1",
            "discovery_interval_millis: must not be negative, not -5");
  }
}
