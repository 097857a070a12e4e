package io.kdra.slicepublisher.domain;

import static io.kdra.slicepublisher.domain.Fixtures.T0;
import static io.kdra.slicepublisher.domain.Fixtures.devs;
import static io.kdra.slicepublisher.domain.Fixtures.inv;
import static io.kdra.slicepublisher.domain.Fixtures.node;
import static org.assertj.core.api.Assertions.assertThat;

import io.fabric8.kubernetes.api.model.resource.v1.DeviceTaint;
import java.time.Duration;
import java.util.List;
import java.util.Optional;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * A driver that keeps reporting but whose discovery no longer succeeds: its snapshot's discovery,
 * judged when the snapshot arrives, is older than {@code stale.discovery-intervals} of its
 * intervals, and its devices get the stale taint valued {@value SlicePlanner#DISCOVERY_STALE}.
 */
class DiscoveryStalenessTest {
  private static final Duration TEN_SECONDS = Duration.ofSeconds(10);

  static Stream<Arguments> staleness() {
    // name, discovery age at receipt (null: not said), interval, intervals allowed, time since
    // receipt, stream ended this long before now (null: open), the stale taint's value (null: none)
    return Stream.of(
        Arguments.of("an older driver says nothing", null, Duration.ZERO, 6, "0s", null, null),
        Arguments.of("fresh", "5s", TEN_SECONDS, 6, "0s", null, null),
        Arguments.of("six intervals old is still fresh", "60s", TEN_SECONDS, 6, "0s", null, null),
        Arguments.of(
            "older than six intervals", "61s", TEN_SECONDS, 6, "0s", null, "discovery-stale"),
        Arguments.of(
            "frozen for ten minutes", "600s", TEN_SECONDS, 6, "0s", null, "discovery-stale"),
        Arguments.of(
            "fewer intervals allowed", "31s", TEN_SECONDS, 3, "0s", null, "discovery-stale"),
        Arguments.of("no interval said: not judged", "600s", Duration.ZERO, 6, "0s", null, null),
        // judged at receipt: a fresh discovery does not age between heartbeats
        Arguments.of("fresh, heartbeat a while ago", "5s", TEN_SECONDS, 6, "100s", null, null),
        Arguments.of("silence wins", "600s", TEN_SECONDS, 6, "180s", null, ""),
        Arguments.of("disconnection wins", "600s", TEN_SECONDS, 6, "30s", "25s", "disconnected"));
  }

  @ParameterizedTest(name = "{0}")
  @MethodSource
  void staleness(
      String name,
      String age,
      Duration interval,
      int intervals,
      String sinceReceipt,
      String endedAgo,
      String expected) {
    SlicePlanner planner =
        new SlicePlanner(
            PlannerSettings.defaults(Fixtures.DRIVER).withStaleDiscoveryIntervals(intervals));
    NodeInventory inventory = inv("n1", devs(1)).build();
    if (age != null) {
      inventory = inventory.withDiscovery(T0.minus(seconds(age)), interval);
    }
    java.time.Instant now = T0.plus(seconds(sinceReceipt));
    if (endedAgo != null) {
      inventory = inventory.disconnectedAt(now.minus(seconds(endedAgo)));
    }

    assertThat(planner.staleness(inventory, now)).isEqualTo(Optional.ofNullable(expected));
  }

  @Test
  void everyDeviceOfAPoolWithAStaleDiscoveryCarriesTheTaintUntilAFreshSnapshot() {
    SlicePlanner planner = new SlicePlanner(PlannerSettings.defaults(Fixtures.DRIVER));
    NodeInventory stale =
        inv("n1", devs(2)).build().withDiscovery(T0.minusSeconds(120), TEN_SECONDS);

    assertThat(taints(planner, stale))
        .allSatisfy(
            t -> {
              assertThat(t.getKey()).isEqualTo("kdra.io/driver-unresponsive");
              assertThat(t.getValue()).isEqualTo(SlicePlanner.DISCOVERY_STALE);
              assertThat(t.getEffect()).isEqualTo("NoSchedule");
            })
        .hasSize(2);

    NodeInventory fresh = inv("n1", devs(2)).build().withDiscovery(T0.minusSeconds(3), TEN_SECONDS);
    assertThat(taints(planner, fresh)).isEmpty();
  }

  @Test
  void stalePoolsCountStaleDiscoveries() {
    SlicePlanner planner = new SlicePlanner(PlannerSettings.defaults(Fixtures.DRIVER));
    NodeInventory stale =
        inv("n1", devs(1)).build().withDiscovery(T0.minusSeconds(120), TEN_SECONDS);
    NodeInventory fresh = inv("n2", devs(1)).build().withDiscovery(T0, TEN_SECONDS);

    assertThat(planner.stalePools(List.of(stale, fresh), T0))
        .containsEntry(SlicePlanner.DISCOVERY_STALE, 1L)
        .containsEntry(SlicePlanner.SILENT, 0L);
  }

  private static List<DeviceTaint> taints(SlicePlanner planner, NodeInventory inventory) {
    return planner.planPool(inventory, node("n1"), T0).orElseThrow().toSlices(0).stream()
        .flatMap(s -> s.getSpec().getDevices().stream())
        .flatMap(d -> d.getTaints().stream())
        .toList();
  }

  private static Duration seconds(String s) {
    return Duration.ofSeconds(Long.parseLong(s.substring(0, s.length() - 1)));
  }
}
