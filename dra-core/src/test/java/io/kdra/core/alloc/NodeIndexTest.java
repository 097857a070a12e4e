package io.kdra.core.alloc;

import static io.kdra.core.alloc.AllocatedStateTest.result;
import static io.kdra.core.testing.AllocFixtures.claim;
import static io.kdra.core.testing.AllocFixtures.device;
import static io.kdra.core.testing.AllocFixtures.deviceClass;
import static io.kdra.core.testing.AllocFixtures.node;
import static io.kdra.core.testing.AllocFixtures.request;
import static io.kdra.core.testing.AllocFixtures.slice;
import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Named.named;
import static org.junit.jupiter.params.provider.Arguments.arguments;

import io.fabric8.kubernetes.api.model.Node;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * The node index: name order, reuse only for the same node objects, and full-node marks that hold
 * exactly for the states that include the state they were found in.
 */
class NodeIndexTest {

  static final List<Node> NODES =
      List.of(node("n4"), node("n0"), node("n2"), node("n1"), node("n3"));

  /**
   * States: s0 empty; s1 = s0 + d0; s2 = s1 + d1 (one history); branch = s0 + d2, made after s1, so
   * a copy whose parent is s0's store; other: an unrelated history.
   */
  static Map<String, AllocatedState> states() {
    AllocatedState s0 = AllocatedState.empty();
    AllocatedState s1 = s0.plus(result("gpu.example.com/p/d0"));
    AllocatedState s2 = s1.plus(result("gpu.example.com/p/d1"));
    AllocatedState branch = s0.plus(result("gpu.example.com/p/d2"));
    AllocatedState other = AllocatedState.empty().plus(result("gpu.example.com/p/d0"));
    return Map.of("s0", s0, "s1", s1, "s2", s2, "branch", branch, "other", other);
  }

  record Mark(int position, String state) {}

  static Arguments tc(String name, List<Mark> marks, String query, Integer... next) {
    return arguments(named(name, marks), query, List.of(next));
  }

  static Stream<Arguments> marks() {
    return Stream.of(
        tc("no marks: every node is a candidate", List.of(), "s1", 0, 1, 2, 3, 4),
        tc(
            "marks hold in the state they were found in",
            List.of(new Mark(0, "s1"), new Mark(1, "s1"), new Mark(3, "s1")),
            "s1",
            2,
            2,
            2,
            4,
            4),
        tc(
            "and in later states of the same history",
            List.of(new Mark(0, "s1"), new Mark(1, "s1")),
            "s2",
            2,
            2,
            2,
            3,
            4),
        tc("not in an earlier state", List.of(new Mark(0, "s1")), "s0", 0, 1, 2, 3, 4),
        tc(
            "a mark from an earlier state joins the newer ones",
            List.of(new Mark(0, "s2"), new Mark(1, "s1")),
            "s2",
            2,
            2,
            2,
            3,
            4),
        tc(
            "an earlier state sees, node by node, the marks of states it includes",
            List.of(new Mark(0, "s0"), new Mark(1, "s2")),
            "s1",
            1,
            1,
            2,
            3,
            4),
        tc(
            "a node keeps its earliest mark",
            List.of(new Mark(0, "s0"), new Mark(0, "s2")),
            "s1",
            1,
            1,
            2,
            3,
            4),
        tc(
            "marks found in a start hold in a branch of it after later marks moved on",
            List.of(new Mark(0, "s0"), new Mark(1, "s0"), new Mark(2, "s2")),
            "branch",
            2,
            2,
            2,
            3,
            4),
        tc(
            "every node full: past the end",
            List.of(
                new Mark(0, "s1"),
                new Mark(1, "s1"),
                new Mark(2, "s1"),
                new Mark(3, "s1"),
                new Mark(4, "s1")),
            "s1",
            5,
            5,
            5,
            5,
            5),
        tc(
            "a branch sees marks of its parent up to the branch point",
            List.of(new Mark(2, "s0")),
            "branch",
            0,
            1,
            3,
            3,
            4),
        tc("but not marks made after it", List.of(new Mark(2, "s1")), "branch", 0, 1, 2, 3, 4),
        tc(
            "an unrelated history sees no marks",
            List.of(new Mark(0, "s1")),
            "other",
            0,
            1,
            2,
            3,
            4),
        tc(
            "a mark from an unrelated history leaves the others' marks node by node",
            List.of(new Mark(0, "s1"), new Mark(1, "other")),
            "s2",
            1,
            1,
            2,
            3,
            4),
        tc(
            "and its own node's mark is then of that history",
            List.of(new Mark(0, "s1"), new Mark(0, "other")),
            "s2",
            0,
            1,
            2,
            3,
            4),
        tc(
            "... and holds for its own history",
            List.of(new Mark(0, "s1"), new Mark(1, "other")),
            "other",
            0,
            2,
            2,
            3,
            4));
  }

  @ParameterizedTest(name = "{0}")
  @MethodSource("marks")
  void fullMarks(List<Mark> marks, String query, List<Integer> next) {
    Map<String, AllocatedState> states = states();
    NodeIndex index = NodeIndex.of(NODES, true);
    for (Mark m : marks) {
      index.markFull(m.position(), states.get(m.state()));
    }
    List<Integer> got = new ArrayList<>();
    for (int from = 0; from < NODES.size(); from++) {
      got.add(index.nextNotKnownFull(from, states.get(query)));
    }
    assertThat(got).isEqualTo(next);
  }

  @Test
  void sortsByNameKeepingEqualNamesInGivenOrder() {
    Node dupA = node("n1", "copy", "a");
    Node dupB = node("n1", "copy", "b");
    NodeIndex index = NodeIndex.of(List.of(node("n2"), dupA, node("n0"), dupB), false);
    assertThat(index.sorted())
        .extracting(n -> n.getMetadata().getName())
        .containsExactly("n0", "n1", "n1", "n2");
    assertThat(index.sorted().get(1)).isSameAs(dupA);
    assertThat(index.sorted().get(2)).isSameAs(dupB);
  }

  static Stream<Arguments> lists() {
    List<Node> reordered = new ArrayList<>(NODES);
    java.util.Collections.swap(reordered, 0, 1);
    List<Node> replaced = new ArrayList<>(NODES);
    replaced.set(2, node("n2"));
    return Stream.of(
        arguments("the same list", NODES, true, true),
        arguments("a copy holding the same node objects", new ArrayList<>(NODES), true, true),
        arguments("the same objects reordered", reordered, true, false),
        arguments("an equal but new node object", replaced, true, false),
        arguments("one node fewer", NODES.subList(0, 4), true, false),
        arguments("other features (pools gathered differently)", NODES, false, false));
  }

  @ParameterizedTest(name = "{0}")
  @MethodSource("lists")
  void reusedOnlyForTheSameNodeObjects(
      String name, List<Node> nodes, boolean partitionable, boolean same) {
    assertThat(NodeIndex.of(NODES, true).sameNodes(nodes, partitionable)).isEqualTo(same);
  }

  /** Decisions, not speed: reusing one node list across states never skips a node with room. */
  @Test
  void schedulingFromAnEarlierStateStillSeesItsFreeNodes() {
    List<Node> nodes = List.of(node("node-a"), node("node-b"), node("node-c"));
    AllocationSnapshot snap =
        AllocationSnapshot.of(
            List.of(
                slice("a", "node-a", device("d0").build()).build(),
                slice("b", "node-b", device("d0").build()).build(),
                slice("c", "node-c", device("d0").build()).build()),
            InMemoryDeviceClassLister.of(deviceClass("gpu", AllocatorCases.ANY_GPU)),
            AllocatedState.empty());
    AllocatorOptions opts = AllocatorOptions.defaults(AllocatorFeatures.defaults(), () -> "id");
    List<AllocationSnapshot> states = new ArrayList<>(List.of(snap));
    List<String> placed = new ArrayList<>();
    for (int i = 0; i < 4; i++) {
      AllocationSnapshot current = states.get(states.size() - 1);
      PodScheduler.Placement p =
          PodScheduler.schedule(
              new Allocator(current, opts),
              nodes,
              null,
              List.of(claim("c" + i, request("r", "gpu").build()).build()));
      placed.add(p.node());
      if (p.allocated()) {
        var result = ((ClaimOutcome.Allocated) p.outcomes().get(0)).result();
        states.add(current.withAllocated(current.allocated().plus(result)));
      }
    }
    assertThat(placed).containsExactly("node-a", "node-b", "node-c", null);
    PlacementIn again =
        i ->
            PodScheduler.schedule(
                    new Allocator(states.get(i), opts),
                    nodes,
                    null,
                    List.of(claim("again", request("r", "gpu").build()).build()))
                .node();
    assertThat(again.placedIn(0)).isEqualTo("node-a");
    assertThat(again.placedIn(2)).isEqualTo("node-c");
    assertThat(again.placedIn(3)).isNull();
    // an unrelated history in which only node-b is taken
    AllocationSnapshot other =
        snap.withAllocated(
            AllocatedState.empty().plus(AllocatedStateTest.result("gpu.example.com/node-b/d0")));
    assertThat(
            PodScheduler.schedule(
                    new Allocator(other, opts),
                    nodes,
                    null,
                    List.of(claim("x", request("r", "gpu").build()).build()))
                .node())
        .isEqualTo("node-a");
    assertThat(
            PodScheduler.schedule(
                    new Allocator(
                        other.withAllocated(
                            other
                                .allocated()
                                .plus(AllocatedStateTest.result("gpu.example.com/node-a/d0"))),
                        opts),
                    nodes,
                    null,
                    List.of(claim("y", request("r", "gpu").build()).build()))
                .node())
        .isEqualTo("node-c");
  }

  private interface PlacementIn {
    String placedIn(int state);
  }
}
