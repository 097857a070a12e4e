package io.kdra.it;

import static io.kdra.it.SoakWebhook.Outcome.ADMITTED;
import static io.kdra.it.SoakWebhook.Outcome.DENIED;
import static io.kdra.it.SoakWebhook.Outcome.NOT_CHECKED;
import static org.assertj.core.api.Assertions.assertThat;

import io.kdra.it.SoakWebhook.Config;
import io.kdra.it.SoakWebhook.Outcome;
import java.util.List;
import java.util.stream.Stream;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

/** How the soak expects a write through the chart's webhook (failurePolicy Fail) to end. */
class SoakWebhookTest {

  static Stream<Arguments> writes() {
    return Stream.of(
        // never called without a config of our driver (matchConditions), even while down
        Arguments.of(Config.NONE, false, List.of(ADMITTED)),
        Arguments.of(Config.NONE, true, List.of(ADMITTED)),
        Arguments.of(Config.VALID, false, List.of(ADMITTED)),
        // never admitted unchecked
        Arguments.of(Config.VALID, true, List.of(NOT_CHECKED)),
        Arguments.of(Config.INVALID, true, List.of(NOT_CHECKED)),
        // up, a replica may still be restarting: refused either way, never admitted
        Arguments.of(Config.INVALID, false, List.of(DENIED, NOT_CHECKED)));
  }

  @ParameterizedTest(name = "{0} config, down {1}: {2}")
  @MethodSource("writes")
  void aWriteEndsAsFailurePolicyFailSays(Config config, boolean down, List<Outcome> allowed) {
    assertThat(SoakWebhook.expected(config, down)).isEqualTo(allowed);
  }
}
