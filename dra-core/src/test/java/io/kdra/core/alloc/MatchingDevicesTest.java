package io.kdra.core.alloc;

import static io.kdra.core.alloc.AllocatedStateTest.result;
import static io.kdra.core.testing.AllocFixtures.device;
import static io.kdra.core.testing.AllocFixtures.slice;
import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Named.named;
import static org.junit.jupiter.params.provider.Arguments.arguments;

import java.util.List;
import java.util.Map;
import java.util.stream.Stream;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * The free-device count behind the early stop of {@code firstAvailable} scoring: the same answer as
 * checking every device in the state asked about, whatever states were asked before (devices found
 * allocated in one state are skipped only in states that include it).
 */
class MatchingDevicesTest {

  /** d0..d3 on pool p; d3 allows multiple allocations. */
  static List<CandidateDevice> devices() {
    return new SliceInfo(
            slice(
                    "s",
                    "p",
                    device("d0").build(),
                    device("d1").build(),
                    device("d2").build(),
                    device("d3").withMultipleAllocations().build())
                .build())
        .devices();
  }

  /**
   * s0 empty; s1 = s0 + d0; s2 = s1 + d1 + d3 (one history); branch = s0 + d2, made after s2;
   * other: an unrelated history holding d0 and d1.
   */
  static Map<String, AllocatedState> states() {
    AllocatedState s0 = AllocatedState.empty();
    AllocatedState s1 = s0.plus(result("gpu.example.com/p/d0"));
    AllocatedState s2 = s1.plus(result("gpu.example.com/p/d1", "gpu.example.com/p/d3"));
    AllocatedState branch = s0.plus(result("gpu.example.com/p/d2"));
    AllocatedState other =
        AllocatedState.empty().plus(result("gpu.example.com/p/d0", "gpu.example.com/p/d1"));
    return Map.of("s0", s0, "s1", s1, "s2", s2, "branch", branch, "other", other);
  }

  /** Asked in {@code asked} order, each with the number of free devices that state has. */
  static Arguments tc(String name, List<String> asked, List<Integer> free) {
    return arguments(named(name, asked), free);
  }

  static Stream<Arguments> histories() {
    return Stream.of(
        tc("one state", List.of("s0"), List.of(4)),
        tc("forward in one history", List.of("s0", "s1", "s2"), List.of(4, 3, 2)),
        tc(
            "back to an earlier state after a later one",
            List.of("s2", "s1", "s0"),
            List.of(2, 3, 4)),
        tc(
            "a branch from the start after the history moved on",
            List.of("s2", "branch", "s2"),
            List.of(2, 3, 2)),
        tc(
            "an unrelated history in between",
            List.of("s1", "other", "s1", "s2"),
            List.of(3, 2, 3, 2)),
        tc(
            "a device allowing multiple allocations stays free",
            List.of("s2", "s2"),
            List.of(2, 2)));
  }

  @ParameterizedTest(name = "{0}")
  @MethodSource("histories")
  void countsTheFreeDevicesOfTheStateAsked(List<String> asked, List<Integer> free) {
    Map<String, AllocatedState> states = states();
    MatchingDevices matching = new MatchingDevices(devices());
    for (int i = 0; i < asked.size(); i++) {
      AllocatedState state = states.get(asked.get(i));
      int expected = free.get(i);
      String where = asked.get(i) + " (query " + i + ")";
      assertThat(matching.enoughFree(state, expected, d -> true)).as(where).isTrue();
      assertThat(matching.enoughFree(state, expected + 1, d -> true)).as(where).isFalse();
    }
  }

  @ParameterizedTest(name = "usable excludes {0}")
  @org.junit.jupiter.params.provider.ValueSource(strings = {"d2", "d3"})
  void devicesThatAreNotUsableAreNotCounted(String excluded) {
    MatchingDevices matching = new MatchingDevices(devices());
    AllocatedState s1 = states().get("s1");
    assertThat(matching.enoughFree(s1, 2, d -> !d.id().device().equals(excluded))).isTrue();
    assertThat(matching.enoughFree(s1, 3, d -> !d.id().device().equals(excluded))).isFalse();
  }
}
