package io.kdra.slicepublisher.domain;

import static io.kdra.slicepublisher.domain.Fixtures.DRIVER;
import static io.kdra.slicepublisher.domain.Fixtures.T0;
import static io.kdra.slicepublisher.domain.Fixtures.devs;
import static io.kdra.slicepublisher.domain.Fixtures.inv;
import static io.kdra.slicepublisher.domain.Fixtures.node;
import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Named.named;

import io.kdra.slicepublisher.domain.PlannerSettings.NetworkPoolSpec;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.stream.Stream;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

class PoolDeciderTest {

  private static final String OTHER = "nic.other.io";

  /** Defaults: stale taint after 2m, removal after 10m, disconnect taint after 20s. */
  private static final PlannerSettings SETTINGS =
      PlannerSettings.defaults(DRIVER)
          .withNetworkPools(List.of(new NetworkPoolSpec("fabric", DRIVER, "n9", Map.of())));

  private static final PoolDecider DECIDER = new PoolDecider(new SlicePlanner(SETTINGS));
  private static final Set<String> NODES = Set.of("n1", "n9");

  private static Instant at(Duration sinceT0) {
    return T0.plus(sinceT0);
  }

  private static Duration s(long seconds) {
    return Duration.ofSeconds(seconds);
  }

  /** Expected outcome, as a line: "publish n1 recheck 120s", "leave recheck 600s", "remove". */
  private static String describe(PoolOutcome outcome) {
    String recheck =
        outcome
            .recheckAt()
            .map(t -> " recheck " + Duration.between(T0, t).toSeconds() + "s")
            .orElse("");
    if (outcome instanceof PoolOutcome.Publish p) {
      return "publish " + p.pool().key().pool() + recheck;
    }
    return (outcome instanceof PoolOutcome.Leave ? "leave" : "remove") + recheck;
  }

  /**
   * Columns: pool, stored inventories, the Nodes that exist, time since T0 (writing started at T0),
   * outcome.
   */
  static Stream<Arguments> outcomes() {
    NodeInventory n1 = inv("n1", devs(2)).build();
    NodeInventory gone = inv("gone", devs(2)).build();
    NodeInventory n9 = inv("n9", devs(2)).build();
    return Stream.of(
        Arguments.of(
            named(
                "a reported node's pool is published; the stale taint is due next",
                new PoolKey(DRIVER, "n1")),
            List.of(n1),
            NODES,
            s(1),
            "publish n1 recheck 120s"),
        Arguments.of(
            named("tainted as stale: the removal is due next", new PoolKey(DRIVER, "n1")),
            List.of(n1),
            NODES,
            s(121),
            "publish n1 recheck 600s"),
        Arguments.of(
            named("silent past the removal grace: removed", new PoolKey(DRIVER, "n1")),
            List.of(n1),
            NODES,
            s(601),
            "remove"),
        Arguments.of(
            named("stream ended: the disconnect taint is due first", new PoolKey(DRIVER, "n1")),
            List.of(n1.disconnectedAt(at(s(10)))),
            NODES,
            s(10),
            "publish n1 recheck 30s"),
        Arguments.of(
            named(
                "disconnect taint applied: the silence timers are next", new PoolKey(DRIVER, "n1")),
            List.of(n1.disconnectedAt(at(s(10)))),
            NODES,
            s(31),
            "publish n1 recheck 120s"),
        Arguments.of(
            named("an inventory whose Node is unknown: removed", new PoolKey(DRIVER, "gone")),
            List.of(gone),
            NODES,
            s(1),
            "remove"),
        Arguments.of(
            named(
                "a network pool is fed by its source node's inventory",
                new PoolKey(DRIVER, "fabric")),
            List.of(n9),
            NODES,
            s(1),
            "publish fabric recheck 120s"),
        Arguments.of(
            named(
                "the source node's own pool name is not the network pool",
                new PoolKey(DRIVER, "n9")),
            List.of(n9),
            NODES,
            s(1),
            "leave recheck 600s"),
        Arguments.of(
            named(
                "no inventory yet, within the grace after start: left until it ends",
                new PoolKey(DRIVER, "n1")),
            List.of(),
            NODES,
            s(599),
            "leave recheck 600s"),
        Arguments.of(
            named("no inventory, at the grace's end: still left", new PoolKey(DRIVER, "n1")),
            List.of(),
            NODES,
            s(600),
            "leave recheck 600s"),
        Arguments.of(
            named("no inventory past the grace: removed", new PoolKey(DRIVER, "n1")),
            List.of(),
            NODES,
            s(601),
            "remove"),
        Arguments.of(
            named(
                "no inventory and the Node is gone: removed at once", new PoolKey(DRIVER, "gone")),
            List.of(),
            NODES,
            s(1),
            "remove"),
        Arguments.of(
            named(
                "no inventory of a network pool whose source node is gone: left",
                new PoolKey(DRIVER, "fabric")),
            List.of(),
            Set.of("n1"),
            s(1),
            "leave recheck 600s"),
        Arguments.of(
            named("another driver's pool: left alone for good", new PoolKey(OTHER, "n1")),
            List.of(),
            NODES,
            s(601),
            "leave"));
  }

  @ParameterizedTest(name = "{0}")
  @MethodSource("outcomes")
  void decidesThePoolsOutcome(
      PoolKey key,
      List<NodeInventory> stored,
      Set<String> nodes,
      Duration sinceStart,
      String expected) {
    InventoryStore store = new InventoryStore();
    stored.forEach(store::put);
    PoolOutcome outcome =
        DECIDER.decide(
            key,
            store,
            n -> nodes.contains(n) ? Optional.of(node(n)) : Optional.empty(),
            T0,
            at(sinceStart));
    assertThat(describe(outcome)).isEqualTo(expected);
  }

  /** Columns: node, whether it exists, stored inventories, inventories forgotten. */
  static Stream<Arguments> nodeChanges() {
    NodeInventory n1 = inv("n1", devs(1)).build();
    NodeInventory n1Other = inv("n1", devs(1)).withDriver(OTHER).build();
    NodeInventory n9 = inv("n9", devs(1)).build();
    return Stream.of(
        Arguments.of(
            named("a Node that exists keeps its inventories", "n1"),
            true,
            List.of(n1, n9),
            List.of()),
        Arguments.of(
            named("a gone Node takes its node-local inventories", "n1"),
            false,
            List.of(n1, n1Other, n9),
            List.of(n1, n1Other)),
        Arguments.of(
            named("a gone network source node keeps its inventory for the timers", "n9"),
            false,
            List.of(n1, n9),
            List.of()));
  }

  @ParameterizedTest(name = "{0}")
  @MethodSource("nodeChanges")
  void aNodeChangeForgetsWhatWentWithItAndRechecksItsPools(
      String node, boolean exists, List<NodeInventory> stored, List<NodeInventory> forgotten) {
    PoolDecider.NodeChange change =
        DECIDER.nodeChanged(node, exists ? Optional.of(node(node)) : Optional.empty(), stored);
    assertThat(change.forget()).containsExactlyInAnyOrderElementsOf(forgotten);
    assertThat(change.recheck())
        .isEqualTo(Set.of(new SlicePlanner(SETTINGS).poolKeyOf(DRIVER, node)));
  }
}
