package io.kdra.it.support;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.time.Duration;
import java.util.List;
import org.junit.jupiter.api.Test;

class CommandsTest {

  private static final Duration LIMIT = Duration.ofSeconds(30);

  @Test
  void anExitStatusAndBothStreamsComeBack() {
    Commands.Result r = Commands.run(LIMIT, List.of("sh", "-c", "echo out; echo err >&2; exit 3"));
    assertThat(r.exitCode()).isEqualTo(3);
    assertThat(r.output()).contains("out").contains("err");
  }

  @Test
  void aCommandThatCannotStartIsMinusOne() {
    assertThat(Commands.run(LIMIT, List.of("/nonexistent/kdra-no-such-binary")).exitCode())
        .isEqualTo(-1);
  }

  @Test
  void aCommandPastItsLimitIsEndedAndMinusOne() {
    // the command holds its output open while it runs: the limit must not wait for that
    long started = System.nanoTime();
    Commands.Result r = Commands.run(Duration.ofMillis(300), List.of("sh", "-c", "exec sleep 60"));
    assertThat(r.exitCode()).isEqualTo(-1);
    assertThat(Duration.ofNanos(System.nanoTime() - started)).isLessThan(Duration.ofSeconds(30));
  }

  @Test
  void checkGivesTheOutputOrThrowsWithIt() {
    assertThat(Commands.check(LIMIT, List.of("echo", "fine"))).isEqualTo("fine\n");
    assertThatThrownBy(() -> Commands.check(LIMIT, List.of("sh", "-c", "echo why; exit 1")))
        .hasMessageContaining("exit 1")
        .hasMessageContaining("why");
  }
}
