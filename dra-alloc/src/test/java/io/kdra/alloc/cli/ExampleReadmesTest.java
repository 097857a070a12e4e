package io.kdra.alloc.cli;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * Each example's README states its outcome as {@code bin/dra-alloc -o summary} prints it, and that
 * is what the command prints now: a change to an example, the shared cluster or the allocator that
 * moves a device leaves the README behind and fails here. Every example is listed in
 * examples/README.md.
 */
class ExampleReadmesTest {

  private static final String HEADING = "## Expected outcome";

  static List<String> examples() throws IOException {
    try (Stream<Path> dirs = Files.list(MainTest.EXAMPLES)) {
      return dirs.filter(d -> Files.isRegularFile(d.resolve("README.md")))
          .map(d -> d.getFileName().toString())
          .sorted()
          .toList();
    }
  }

  @ParameterizedTest(name = "{0}")
  @MethodSource("examples")
  void theReadmeShowsWhatTheCommandPrints(String example) throws IOException {
    String readme = Files.readString(MainTest.EXAMPLES.resolve(example).resolve("README.md"));
    String command =
        "$ bin/dra-alloc -o summary examples/%s/*.yaml examples/%s/cluster/*.yaml\n"
            .formatted(example, example);
    int heading = readme.indexOf(HEADING);
    assertThat(heading).as("%s/README.md has a section '%s'", example, HEADING).isNotNegative();
    int start = readme.indexOf("```console\n" + command, heading);
    assertThat(start).as("%s/README.md's outcome starts with %s", example, command).isPositive();
    int body = start + "```console\n".length() + command.length();
    String shown = readme.substring(body, readme.indexOf("```", body));

    String[] args =
        Stream.concat(Stream.of("-o", "summary"), Stream.of(MainTest.example(example)))
            .toArray(String[]::new);
    MainTest.Run run = MainTest.run("", args);
    assertThat(run.status()).as("every example allocates; stderr: %s", run.err()).isZero();
    assertThat(shown).as("%s/README.md's expected outcome", example).isEqualTo(run.out());
  }

  @Test
  void everyExampleIsListedInTheExamplesReadme() throws IOException {
    String index = Files.readString(MainTest.EXAMPLES.resolve("README.md"));
    assertThat(examples())
        .allSatisfy(e -> assertThat(index).contains("[" + e + "](" + e + "/README.md)"));
  }
}
