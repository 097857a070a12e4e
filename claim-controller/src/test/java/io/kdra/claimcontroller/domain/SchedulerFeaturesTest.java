package io.kdra.claimcontroller.domain;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.junit.jupiter.api.Named.named;

import java.util.List;
import java.util.stream.Stream;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

/** The scheduler's gates in upstream's --feature-gates syntax, with 1.37.2's defaults. */
class SchedulerFeaturesTest {

  /** Columns: --feature-gates value, the gates then on. */
  static Stream<Arguments> gates() {
    return Stream.of(
        Arguments.of(named("none: 1.37's default, alpha off", ""), List.of()),
        Arguments.of(
            named("on", "TopologyAwareWorkloadScheduling=true"),
            List.of("TopologyAwareWorkloadScheduling")),
        Arguments.of(
            named("Go's bools, the later entry wins", " TopologyAwareWorkloadScheduling=T, ,"),
            List.of("TopologyAwareWorkloadScheduling")),
        Arguments.of(
            named(
                "off again",
                "TopologyAwareWorkloadScheduling=1,TopologyAwareWorkloadScheduling=false"),
            List.of()));
  }

  @ParameterizedTest(name = "{0}")
  @MethodSource("gates")
  void gatesAreSetAsNamed(String spec, List<String> enabled) {
    assertThat(SchedulerFeatures.defaults().withGates(spec).enabledNames()).isEqualTo(enabled);
  }

  /** Columns: --feature-gates value, the error. */
  static Stream<Arguments> badGates() {
    return Stream.of(
        Arguments.of(
            named("an allocator's gate is not the scheduler's", "DRAAdminAccess=true"),
            "unrecognized feature gate: DRAAdminAccess (known: TopologyAwareWorkloadScheduling)"),
        Arguments.of(
            named("no value", "TopologyAwareWorkloadScheduling"),
            "missing bool value for TopologyAwareWorkloadScheduling"),
        Arguments.of(
            named("not a bool", "TopologyAwareWorkloadScheduling=on"),
            "invalid value of TopologyAwareWorkloadScheduling=on: not a bool (true or false)"));
  }

  @ParameterizedTest(name = "{0}")
  @MethodSource("badGates")
  void badGatesAreRefusedWithTheEntry(String spec, String message) {
    assertThatThrownBy(() -> SchedulerFeatures.defaults().withGates(spec))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessage(message);
  }
}
