package io.kdra.devicedriver.sharing;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.junit.jupiter.api.Assertions.assertTimeoutPreemptively;

import io.kdra.devicedriver.sharing.CommandRunner.Command;
import io.kdra.devicedriver.sharing.CommandRunner.CommandException;
import io.kdra.devicedriver.testing.HungCommand;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class ProcessCommandRunnerTest {
  private static final Duration TIMEOUT = Duration.ofSeconds(1);

  @TempDir Path dir;

  @Test
  void aHungCommandFailsWithinTheTimeoutAndItsProcessTreeIsKilled() throws Exception {
    try (HungCommand hung = HungCommand.in(dir)) {
      ProcessCommandRunner runner = new ProcessCommandRunner(TIMEOUT);

      assertTimeoutPreemptively(
          HungCommand.bound(TIMEOUT),
          () ->
              assertThatThrownBy(() -> runner.run(Command.of(hung.path(), "mig", "-lgi")))
                  .isInstanceOf(CommandException.class)
                  .hasMessageContaining(hung.path() + " mig -lgi: did not finish within PT1S"));

      hung.assertAllGone();
    }
  }

  @Test
  void passesInputAndEnvironmentAndReturnsTheOutput() throws Exception {
    Path script = dir.resolve("echo");
    Files.writeString(script, "#!/bin/sh\necho \"$GREETING\"\ncat\necho oops >&2\n");
    script.toFile().setExecutable(true);

    CommandRunner.Output out =
        new ProcessCommandRunner(Duration.ofSeconds(30))
            .run(new Command(List.of(script.toString()), Map.of("GREETING", "hi"), "quit\n"));

    assertThat(out.exitCode()).isZero();
    assertThat(out.text()).isEqualTo("hi\nquit\noops\n");
  }

  @Test
  void aFailingCommandNamesItsExitStatusAndFirstLine() throws Exception {
    Path script = dir.resolve("fail");
    Files.writeString(script, "#!/bin/sh\necho 'No GPU instances found'\nexit 6\n");
    script.toFile().setExecutable(true);

    assertThatThrownBy(
            () ->
                new ProcessCommandRunner(Duration.ofSeconds(30)).run(Command.of(script.toString())))
        .hasMessage(script + ": exited with 6: No GPU instances found");
  }
}
