package io.kdra.alloc.cli;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.kdra.alloc.cli.MainTest.Run;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import org.junit.jupiter.api.Test;

/**
 * dra-alloc's command line: help, version, usage errors, option forms and the exit status of a
 * fault.
 */
class CommandLineTest {

  @Test
  void helpAndVersionGoToStdoutWithStatusZero() {
    Run help = MainTest.run("", "--help");
    assertThat(help.status()).isZero();
    assertThat(help.out())
        .contains("usage:  dra-alloc [OPTION]... FILE...")
        .contains("-o, --output <yaml|json|summary>")
        .contains("--feature-gates <GATE=BOOL,...>")
        .contains("Exit status: 0 every pending claim allocated");
    assertThat(help.err()).isEmpty();

    Run version = MainTest.run("", "-V");
    assertThat(version.status()).isZero();
    assertThat(version.out()).isEqualTo("dra-alloc 0.1.0" + System.lineSeparator());
  }

  @Test
  void aBadCommandLineIsStatusTwoWithAPointerToTheHelp() {
    Run unknown = MainTest.run(MainTest.docs(MainTest.CLASS), "--bogus", "-");
    assertThat(unknown.status()).isEqualTo(2);
    assertThat(unknown.err())
        .isEqualTo(
            "dra-alloc: Unrecognized option: --bogus"
                + System.lineSeparator()
                + "Try 'dra-alloc --help' for more information."
                + System.lineSeparator());
    assertThat(unknown.out()).isEmpty();

    Run noValue = MainTest.run("", "-", "-o");
    assertThat(noValue.status()).isEqualTo(2);
    assertThat(noValue.err()).startsWith("dra-alloc: Missing argument for option: o");
  }

  @Test
  void aFaultOfTheProgramIsStatusTwoNotOne() {
    // a stdin whose read fails midway: not an input error the reader explains
    java.io.InputStream broken =
        new java.io.InputStream() {
          @Override
          public int read() {
            throw new IllegalStateException("boom");
          }
        };
    ByteArrayOutputStream err = new ByteArrayOutputStream();
    int status =
        Main.run(
            new String[] {"-"},
            broken,
            new PrintStream(new ByteArrayOutputStream(), true, StandardCharsets.UTF_8),
            new PrintStream(err, true, StandardCharsets.UTF_8));
    assertThat(status).isEqualTo(2);
    assertThat(err.toString(StandardCharsets.UTF_8))
        .contains("dra-alloc: internal error: java.lang.IllegalStateException: boom");
  }

  @Test
  void optionsMayFollowTheFilesAndTakeTheirValueAfterAnEqualsSign() throws IOException {
    Run r =
        MainTest.run(
            MainTest.docs(MainTest.CLASS, MainTest.SLICE, MainTest.claim("a")),
            "-",
            "--output=json",
            "--node",
            "node-a");
    assertThat(r.status()).as(r.err()).isZero();
    JsonNode list = new ObjectMapper().readTree(r.out());
    assertThat(list.path("items").get(0).at("/status/allocation/devices/results")).hasSize(1);
  }
}
