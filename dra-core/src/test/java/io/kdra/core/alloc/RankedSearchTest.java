package io.kdra.core.alloc;

import static io.kdra.core.testing.AllocFixtures.DRIVER;
import static io.kdra.core.testing.AllocFixtures.claim;
import static io.kdra.core.testing.AllocFixtures.deviceClass;
import static io.kdra.core.testing.AllocFixtures.firstAvailable;
import static io.kdra.core.testing.AllocFixtures.gpu;
import static io.kdra.core.testing.AllocFixtures.node;
import static io.kdra.core.testing.AllocFixtures.request;
import static io.kdra.core.testing.AllocFixtures.slice;
import static io.kdra.core.testing.AllocFixtures.sub;
import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.params.provider.Arguments.arguments;

import io.fabric8.kubernetes.api.model.Node;
import io.fabric8.kubernetes.api.model.resource.v1.ResourceClaim;
import io.fabric8.kubernetes.api.model.resource.v1.ResourceSlice;
import java.util.ArrayList;
import java.util.List;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * The search in score order: the first fit in the caller's order without alternatives; with them,
 * the highest total of base score and kube-scheduler's weighted DynamicResources score.
 */
class RankedSearchTest {

  /** node-a: an L4 only; node-b: an A100 and an L4; node-c: an L4 only. */
  static final List<ResourceSlice> SLICES =
      List.of(
          slice("a", "node-a", gpu("l0", "L4", "24Gi", "p0")).build(),
          slice("b", "node-b", gpu("x0", "A100", "40Gi", "p0"), gpu("l0", "L4", "24Gi", "p0"))
              .build(),
          slice("c", "node-c", gpu("l0", "L4", "24Gi", "p0")).build());

  static final List<Node> BY_NAME = List.of(node("node-a"), node("node-b"), node("node-c"));

  static Allocator allocator() {
    return new Allocator(
        AllocationSnapshot.of(
            SLICES,
            InMemoryDeviceClassLister.of(
                deviceClass("gpu", "true"),
                deviceClass("a100", "device.attributes[\"" + DRIVER + "\"].model == \"A100\""),
                deviceClass("l4", "device.attributes[\"" + DRIVER + "\"].model == \"L4\"")),
            AllocatedState.empty()),
        AllocatorOptions.defaults(AllocatorFeatures.defaults(), () -> "s"));
  }

  /** The nodes in the order given by name, with these base scores (highest first). */
  static RankedSearch.Ranked ranked(String[] order, long[] base) {
    List<Node> nodes = new ArrayList<>();
    for (String name : order) {
      nodes.add(
          BY_NAME.stream().filter(n -> n.getMetadata().getName().equals(name)).findFirst().get());
    }
    return new RankedSearch.Ranked(BY_NAME, nodes, base);
  }

  static ResourceClaim prefersA100() {
    return claim("c", firstAvailable("gpu", sub("a100", "a100", 1), sub("l4", "l4", 1))).build();
  }

  /** A claim of the pod allocated earlier, whose first choice was taken (raw score 8). */
  static ResourceClaim allocatedFirstChoice() {
    ResourceClaim c =
        claim("earlier", firstAvailable("gpu", sub("a100", "a100", 1), sub("l4", "l4", 1)))
            .withAllocated(DRIVER + "/elsewhere/x9")
            .build();
    c.getStatus().getAllocation().getDevices().getResults().get(0).setRequest("gpu/a100");
    return c;
  }

  static Arguments tc(
      String name,
      String[] order,
      long[] base,
      List<ResourceClaim> claims,
      List<ResourceClaim> allocated,
      String expected) {
    return arguments(name, order, base, claims, allocated, expected);
  }

  static String[] o(String... names) {
    return names;
  }

  static long[] b(long... scores) {
    return scores;
  }

  static Stream<Arguments> cases() {
    List<ResourceClaim> plain = List.of(claim("c", request("r", "gpu").build()).build());
    List<ResourceClaim> fa = List.of(prefersA100());
    List<ResourceClaim> none = List.of();
    return Stream.of(
        tc(
            "without alternatives: the first fit in score order",
            o("node-c", "node-a", "node-b"),
            b(300, 200, 100),
            plain,
            none,
            "node-c"),
        tc(
            "equal bases keep the given order (name order)",
            o("node-a", "node-b", "node-c"),
            b(100, 100, 100),
            plain,
            none,
            "node-a"),
        // node-a: 200 + 2 * (100 * 7 / 8 = 87) = 374; node-b: 180 + 2 * 100 = 380
        tc(
            "the first choice's score outweighs a lower base",
            o("node-a", "node-b", "node-c"),
            b(200, 180, 0),
            fa,
            none,
            "node-b"),
        // node-b: 170 + 200 = 370 < 374
        tc(
            "a base high enough outweighs the first choice",
            o("node-a", "node-b", "node-c"),
            b(200, 170, 0),
            fa,
            none,
            "node-a"),
        // node-c: 26 + 174 = 200 = node-b's 0 + 200: equal totals go to the first in score order
        tc(
            "equal totals go to the first in score order",
            o("node-c", "node-b", "node-a"),
            b(26, 0, 0),
            fa,
            none,
            "node-c"),
        // with the earlier claim (8): node-a 15 -> 100 * 15 / 16 = 93, node-b 16 -> 100;
        // node-a: 194 + 186 = 380 > node-b: 174 + 200 = 374; without it node-a would have 368
        tc(
            "claims allocated earlier count in the normalisation",
            o("node-a", "node-b", "node-c"),
            b(194, 174, 0),
            fa,
            List.of(allocatedFirstChoice()),
            "node-a"));
  }

  @ParameterizedTest(name = "{0}")
  @MethodSource("cases")
  void choosesTheHighestTotal(
      String name,
      String[] order,
      long[] base,
      List<ResourceClaim> claims,
      List<ResourceClaim> allocated,
      String expected) {
    PodScheduler.Searched s =
        RankedSearch.search(
            allocator(), ranked(order, base), null, claims, allocated, Deadline.NONE);
    assertThat(s.explained().node()).isEqualTo(expected);
  }

  @Test
  void withoutAlternativesTheSearchStopsAtTheFirstFit() {
    PodScheduler.Searched s =
        RankedSearch.search(
            allocator(),
            ranked(o("node-c", "node-a", "node-b"), b(3, 2, 1)),
            null,
            List.of(claim("c", request("r", "gpu").build()).build()),
            List.of(),
            Deadline.NONE);
    assertThat(s.examined()).isEqualTo(1);
  }

  @Test
  void aNodeThatCannotBeatTheBestIsNotTried() {
    // node-b reaches the best any node can (the A100): node-a's 10 + 200 < 500 + 200
    PodScheduler.Searched s =
        RankedSearch.search(
            allocator(),
            ranked(o("node-b", "node-a", "node-c"), b(500, 10, 0)),
            null,
            List.of(prefersA100()),
            List.of(),
            Deadline.NONE);
    assertThat(s.explained().node()).isEqualTo("node-b");
    assertThat(s.examined()).isEqualTo(1);
  }

  @Test
  void noNodeFitsIsExplained() {
    PodScheduler.Searched s =
        RankedSearch.search(
            allocator(),
            ranked(o("node-a", "node-b", "node-c"), b(0, 0, 0)),
            null,
            List.of(claim("c", request("r", "a100").withCount(2).build()).build()),
            List.of(),
            Deadline.NONE);
    assertThat(s.explained().node()).isNull();
    assertThat(s.explained().outcomes())
        .singleElement()
        .isInstanceOf(ClaimOutcome.NotAllocated.class);
  }
}
