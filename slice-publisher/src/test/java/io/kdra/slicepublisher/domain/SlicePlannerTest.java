package io.kdra.slicepublisher.domain;

import static io.kdra.slicepublisher.domain.Fixtures.DRIVER;
import static io.kdra.slicepublisher.domain.Fixtures.T0;
import static io.kdra.slicepublisher.domain.Fixtures.counterSet;
import static io.kdra.slicepublisher.domain.Fixtures.dev;
import static io.kdra.slicepublisher.domain.Fixtures.devs;
import static io.kdra.slicepublisher.domain.Fixtures.inv;
import static io.kdra.slicepublisher.domain.Fixtures.node;
import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Named.named;

import io.fabric8.kubernetes.api.model.resource.v1.Device;
import io.fabric8.kubernetes.api.model.resource.v1.DeviceTaint;
import io.fabric8.kubernetes.api.model.resource.v1.ResourceSlice;
import io.kdra.slicepublisher.domain.Fixtures.Dev;
import io.kdra.slicepublisher.domain.Fixtures.Inv;
import io.kdra.slicepublisher.domain.PlannerSettings.NetworkPoolSpec;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

class SlicePlannerTest {

  private static final SlicePlanner PLANNER = new SlicePlanner(PlannerSettings.defaults(DRIVER));

  private static Optional<DesiredPool> plan(
      SlicePlanner planner, Inv inv, NodeInfo node, Instant now) {
    return planner.planPool(inv.build(), node, now);
  }

  private static List<ResourceSlice> slices(Inv inv) {
    return plan(PLANNER, inv, node(inv.node()), T0).orElseThrow().toSlices(0);
  }

  private static List<Integer> sizes(List<ResourceSlice> slices) {
    return slices.stream()
        .map(
            s ->
                s.getSpec().getDevices().isEmpty()
                    ? -s.getSpec().getSharedCounters().size()
                    : s.getSpec().getDevices().size())
        .toList();
  }

  private static List<Dev> withUnhealthy(int n, int... unhealthy) {
    List<Dev> d = new ArrayList<>(devs(n));
    for (int i : unhealthy) {
      d.set(i, d.get(i).unhealthy("ecc"));
    }
    return d;
  }

  static Stream<Arguments> chunking() {
    List<Dev> consuming = new ArrayList<>();
    for (int i = 0; i < 70; i++) {
      consuming.add(dev(String.format("part-%02d", i)).consuming("gpu-0"));
    }
    return Stream.of(
        Arguments.of(named("one device: one slice", inv("n1", devs(1))), List.of(1)),
        Arguments.of(named("128 plain devices fit one slice", inv("n1", devs(128))), List.of(128)),
        Arguments.of(named("129 plain devices: 128 + 1", inv("n1", devs(129))), List.of(128, 1)),
        Arguments.of(
            named("300 plain devices: 128 + 128 + 44", inv("n1", devs(300))),
            List.of(128, 128, 44)),
        Arguments.of(
            named("a tainted device limits its slice to 64", inv("n1", withUnhealthy(129, 0))),
            List.of(64, 65)),
        Arguments.of(
            named(
                "a tainted device late in a slice closes it before it",
                inv("n1", withUnhealthy(129, 100))),
            List.of(100, 29)),
        Arguments.of(
            named(
                "all tainted: 64 per slice",
                inv("n1", withUnhealthy(130, java.util.stream.IntStream.range(0, 130).toArray()))),
            List.of(64, 64, 2)),
        Arguments.of(
            named(
                "counter consumers: counters first, then 64 per slice",
                inv("n1", consuming).withCounters(counterSet("gpu-0"))),
            List.of(-1, 64, 6)),
        Arguments.of(
            named(
                "counter sets: 8 per slice",
                inv("n1", List.of())
                    .withCounters(
                        counterSet("a"),
                        counterSet("b"),
                        counterSet("c"),
                        counterSet("d"),
                        counterSet("e"),
                        counterSet("f"),
                        counterSet("g"),
                        counterSet("h"),
                        counterSet("i"))),
            List.of(-8, -1)));
  }

  @ParameterizedTest(name = "{0}")
  @MethodSource
  void chunking(Inv inventory, List<Integer> expectedSizes) {
    List<ResourceSlice> slices = slices(inventory);
    assertThat(sizes(slices)).isEqualTo(expectedSizes);
    assertThat(slices)
        .allSatisfy(
            s -> {
              assertThat(s.getSpec().getPool().getResourceSliceCount()).isEqualTo(slices.size());
              assertThat(s.getSpec().getPool().getName()).isEqualTo("n1");
              assertThat(s.getSpec().getNodeName()).isEqualTo("n1");
              assertThat(
                      s.getSpec().getDevices().isEmpty()
                          || s.getSpec().getSharedCounters().isEmpty())
                  .as("a slice carries devices or counters, not both")
                  .isTrue();
            });
  }

  @Test
  void devicesAreInStableNameOrderWhateverTheReportOrder() {
    var a = slices(inv("n1", List.of(dev("gpu-2"), dev("gpu-0"), dev("gpu-1"))));
    var b = slices(inv("n1", List.of(dev("gpu-1"), dev("gpu-2"), dev("gpu-0"))));
    assertThat(a).isEqualTo(b);
    assertThat(a.get(0).getSpec().getDevices())
        .extracting(Device::getName)
        .containsExactly("gpu-0", "gpu-1", "gpu-2");
  }

  static Stream<Arguments> names() {
    String longNode = "n".repeat(240);
    return Stream.of(
        Arguments.of(named("node-local", "n1"), 0, "n1-gpu.kdra.io-0"),
        Arguments.of(named("second slice", "n1"), 1, "n1-gpu.kdra.io-1"),
        Arguments.of(named("network pool with slashes", "fabric/a"), 0, "fabric-a-gpu.kdra.io-0"),
        Arguments.of(
            named("too long: cut and hashed", longNode), 3, SliceNames.name(DRIVER, longNode, 3)));
  }

  @ParameterizedTest(name = "{0}")
  @MethodSource
  void names(String pool, int index, String expected) {
    String name = SliceNames.name(DRIVER, pool, index);
    assertThat(name)
        .isEqualTo(expected)
        .hasSizeLessThanOrEqualTo(253)
        .matches("[a-z0-9]([-a-z0-9.]*[a-z0-9])?");
  }

  @Test
  void longNamesStayUniquePerPool() {
    String a = SliceNames.name(DRIVER, "n".repeat(240) + "a", 0);
    String b = SliceNames.name(DRIVER, "n".repeat(240) + "b", 0);
    assertThat(a).isNotEqualTo(b).hasSize(253);
  }

  @Test
  void nodeLocalPoolIsOwnedByItsNode() {
    ResourceSlice s = slices(inv("n1", devs(1))).get(0);
    assertThat(s.getMetadata().getOwnerReferences())
        .singleElement()
        .satisfies(
            o -> {
              assertThat(o.getKind()).isEqualTo("Node");
              assertThat(o.getApiVersion()).isEqualTo("v1");
              assertThat(o.getName()).isEqualTo("n1");
              assertThat(o.getUid()).isEqualTo("uid-n1");
              assertThat(o.getController()).isTrue();
            });
    assertThat(s.getSpec().getAllNodes()).isNull();
    assertThat(s.getSpec().getNodeSelector()).isNull();
  }

  @Test
  void unhealthyDevicesStayAndGetTheConfiguredTaint() {
    ResourceSlice s =
        slices(
                inv(
                    "n1",
                    List.of(dev("gpu-0").unhealthy("XID 79: fell off the bus!"), dev("gpu-1"))))
            .get(0);
    assertThat(s.getSpec().getDevices()).hasSize(2);
    DeviceTaint taint = s.getSpec().getDevices().get(0).getTaints().get(0);
    assertThat(taint.getKey()).isEqualTo("kdra.io/unhealthy");
    assertThat(taint.getEffect()).isEqualTo("NoSchedule");
    assertThat(taint.getValue()).isEqualTo("XID_79_fell_off_the_bus");
    assertThat(s.getSpec().getDevices().get(1).getTaints()).isEmpty();
  }

  static Stream<Arguments> labelValues() {
    return Stream.of(
        Arguments.of(named("kept", "ecc-errors"), "ecc-errors"),
        Arguments.of(named("empty", ""), ""),
        Arguments.of(named("spaces and punctuation", " GPU lost: reset! "), "GPU_lost_reset"),
        Arguments.of(named("cut at 63", "x".repeat(80)), "x".repeat(63)));
  }

  @ParameterizedTest(name = "{0}")
  @MethodSource
  void labelValues(String text, String expected) {
    assertThat(SlicePlanner.labelValue(text)).isEqualTo(expected);
  }

  static Stream<Arguments> staleness() {
    return Stream.of(
        Arguments.of(named("fresh", Duration.ofSeconds(10)), true, false),
        Arguments.of(named("silent past the taint grace", Duration.ofMinutes(3)), true, true),
        Arguments.of(named("silent past the removal grace", Duration.ofMinutes(11)), false, false));
  }

  @ParameterizedTest(name = "{0}")
  @MethodSource
  void staleness(Duration silence, boolean published, boolean tainted) {
    Optional<DesiredPool> pool = plan(PLANNER, inv("n1", devs(2)), node("n1"), T0.plus(silence));
    assertThat(pool.isPresent()).isEqualTo(published);
    pool.ifPresent(
        p ->
            assertThat(p.toSlices(0).get(0).getSpec().getDevices())
                .allSatisfy(
                    d ->
                        assertThat(
                                d.getTaints().stream()
                                    .anyMatch(
                                        t -> t.getKey().equals("kdra.io/driver-unresponsive")))
                            .isEqualTo(tainted)));
  }

  static Stream<Arguments> disconnection() {
    // the snapshot arrived at T0, its stream ended at T0 + 5 s; the grace is 20 s
    Duration ended = Duration.ofSeconds(5);
    return Stream.of(
        Arguments.of(
            named("stream open", Optional.<Duration>empty()),
            Duration.ofSeconds(30),
            Optional.empty()),
        Arguments.of(
            named("ended, within the grace (a restart)", Optional.of(ended)),
            Duration.ofSeconds(24),
            Optional.empty()),
        Arguments.of(
            named("ended, the grace just over", Optional.of(ended)),
            Duration.ofSeconds(25),
            Optional.of("disconnected")),
        Arguments.of(
            named("ended and silent past the taint grace", Optional.of(ended)),
            Duration.ofMinutes(3),
            Optional.of("disconnected")),
        Arguments.of(
            named("open but silent past the taint grace", Optional.<Duration>empty()),
            Duration.ofMinutes(3),
            Optional.of("")));
  }

  /** The stale taint's value, "" for none, or no taint at all. */
  @ParameterizedTest(name = "{0}")
  @MethodSource
  void disconnection(Optional<Duration> endedAfter, Duration now, Optional<String> taintValue) {
    NodeInventory inventory = inv("n1", devs(2)).build();
    NodeInventory seen =
        endedAfter.map(e -> inventory.disconnectedAt(T0.plus(e))).orElse(inventory);
    List<Device> devices =
        PLANNER
            .planPool(seen, node("n1"), T0.plus(now))
            .orElseThrow()
            .toSlices(0)
            .get(0)
            .getSpec()
            .getDevices();
    assertThat(devices)
        .hasSize(2)
        .allSatisfy(
            d ->
                assertThat(
                        d.getTaints().stream()
                            .filter(t -> t.getKey().equals("kdra.io/driver-unresponsive"))
                            .map(t -> t.getValue() == null ? "" : t.getValue())
                            .findFirst())
                    .isEqualTo(taintValue));
  }

  /** What the gauge kdra_publisher_stale_pools counts: the pools whose devices the taint marks. */
  @Test
  void stalePoolsAreCountedByReasonAmongServedDriversNotYetRemoved() {
    Instant now = T0.plus(Duration.ofMinutes(3));
    List<NodeInventory> inventories =
        List.of(
            inv("fresh", devs(1)).receivedAt(now.minusSeconds(5)).build(),
            inv("silent", devs(1)).build(),
            inv("gone", devs(1)).build().disconnectedAt(T0.plusSeconds(1)),
            inv("restarting", devs(1))
                .receivedAt(now.minusSeconds(10))
                .build()
                .disconnectedAt(now.minusSeconds(5)),
            inv("removed", devs(1)).receivedAt(T0.minus(Duration.ofMinutes(20))).build(),
            inv("unserved", devs(1)).withDriver("nic.other.io").build());

    assertThat(PLANNER.stalePools(inventories, now))
        .containsExactly(
            Map.entry(SlicePlanner.DISCONNECTED, 1L),
            Map.entry(SlicePlanner.SILENT, 1L),
            Map.entry(SlicePlanner.DISCOVERY_STALE, 0L));
    assertThat(PLANNER.stalePools(List.of(), now))
        .containsExactly(
            Map.entry(SlicePlanner.DISCONNECTED, 0L),
            Map.entry(SlicePlanner.SILENT, 0L),
            Map.entry(SlicePlanner.DISCOVERY_STALE, 0L));
  }

  @Test
  void nothingIsPublishedForAnUnknownNodeAnUnservedDriverOrNoDevices() {
    assertThat(plan(PLANNER, inv("n1", devs(1)), null, T0)).isEmpty();
    assertThat(plan(PLANNER, inv("n1", devs(1)).withDriver("nic.other.io"), node("n1"), T0))
        .isEmpty();
    assertThat(plan(PLANNER, inv("n1", List.of()), node("n1"), T0)).isEmpty();
  }

  static Stream<Arguments> nodeLabels() {
    return Stream.of(
        Arguments.of(
            named("zone copied", Map.of("topology.kubernetes.io/zone", "eu-1a")),
            Map.of("topology.kubernetes.io/zone", "eu-1a")),
        Arguments.of(
            named(
                "dashes become underscores", Map.of("cloud.google.com/compute-class", "gpu-h100")),
            Map.of("cloud.google.com/compute_class", "gpu-h100")),
        Arguments.of(named("missing label: no attribute", Map.of("other", "x")), Map.of()),
        Arguments.of(
            named("the driver's own attribute wins", Map.of("model", "from-label")),
            Map.of("model", "H100")));
  }

  @ParameterizedTest(name = "{0}")
  @MethodSource
  void nodeLabels(Map<String, String> labels, Map<String, String> expected) {
    SlicePlanner planner =
        new SlicePlanner(
            PlannerSettings.defaults(DRIVER)
                .withNodeLabelAttributes(
                    List.of(
                        "topology.kubernetes.io/zone", "cloud.google.com/compute-class", "model")));
    Device d =
        plan(planner, inv("n1", devs(1)), node("n1", labels), T0)
            .orElseThrow()
            .toSlices(0)
            .get(0)
            .getSpec()
            .getDevices()
            .get(0);
    expected.forEach((k, v) -> assertThat(d.getAttributes().get(k).getString()).isEqualTo(v));
    assertThat(d.getAttributes())
        .hasSize(1 + expected.size() - (expected.containsKey("model") ? 1 : 0));
  }

  static Stream<Arguments> networkPools() {
    return Stream.of(
        Arguments.of(named("node selector", Map.of("fabric", "a", "zone", "z1")), false),
        Arguments.of(named("all nodes", Map.of()), true));
  }

  @ParameterizedTest(name = "{0}")
  @MethodSource
  void networkPools(Map<String, String> selector, boolean allNodes) {
    SlicePlanner planner =
        new SlicePlanner(
            PlannerSettings.defaults(DRIVER)
                .withNodeLabelAttributes(List.of("zone"))
                .withNetworkPools(
                    List.of(new NetworkPoolSpec("fabric-a", DRIVER, "gw-1", selector))));
    assertThat(planner.poolKeyOf(DRIVER, "gw-1")).isEqualTo(new PoolKey(DRIVER, "fabric-a"));
    ResourceSlice s =
        plan(planner, inv("gw-1", devs(2)), node("gw-1", Map.of("zone", "z9")), T0)
            .orElseThrow()
            .toSlices(0)
            .get(0);
    assertThat(s.getMetadata().getName()).isEqualTo("fabric-a-gpu.kdra.io-0");
    assertThat(s.getSpec().getPool().getName()).isEqualTo("fabric-a");
    assertThat(s.getSpec().getNodeName()).isNull();
    assertThat(s.getMetadata().getOwnerReferences()).isEmpty();
    assertThat(s.getSpec().getDevices().get(0).getAttributes()).doesNotContainKey("zone");
    if (allNodes) {
      assertThat(s.getSpec().getAllNodes()).isTrue();
      assertThat(s.getSpec().getNodeSelector()).isNull();
    } else {
      assertThat(s.getSpec().getAllNodes()).isNull();
      var terms = s.getSpec().getNodeSelector().getNodeSelectorTerms();
      assertThat(terms)
          .singleElement()
          .satisfies(
              t ->
                  assertThat(t.getMatchExpressions())
                      .extracting(r -> r.getKey() + " " + r.getOperator() + " " + r.getValues())
                      .containsExactly("fabric In [a]", "zone In [z1]"));
    }
  }

  @Test
  void networkPoolsAreFedEvenWithoutTheSourceNodeObject() {
    SlicePlanner planner =
        new SlicePlanner(
            PlannerSettings.defaults(DRIVER)
                .withNetworkPools(
                    List.of(new NetworkPoolSpec("fabric-a", DRIVER, "gw-1", Map.of()))));
    assertThat(plan(planner, inv("gw-1", devs(1)), null, T0)).isPresent();
  }

  @Test
  void planCoversEveryInventory() {
    var pools =
        PLANNER.plan(
            List.of(
                inv("n1", devs(1)).build(),
                inv("n2", devs(2)).build(),
                inv("gone", devs(1)).build()),
            Map.of("n1", node("n1"), "n2", node("n2")),
            T0);
    assertThat(pools).containsOnlyKeys(new PoolKey(DRIVER, "n1"), new PoolKey(DRIVER, "n2"));
  }
}
