package io.kdra.alloc.cli;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.regex.Pattern;
import java.util.stream.Stream;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * The native executable (native/build-native-image.sh) against the command on the JVM: for each
 * case, the same exit status, standard output and standard error, byte for byte (but for the random
 * share IDs a time-sliced allocation draws). The examples, each output format, input read from
 * stdin, and the error paths: usage errors, a missing file, broken YAML, a CEL selector that does
 * not compile. Built in the package phase when -Dkdra.native (root pom) says so; without the
 * executable the cases are skipped, or fail with -Dkdra.native=true.
 */
class NativeCliIT {
  private static final Path BINARY =
      Path.of(System.getProperty("kdra.native.binary", "target/native/dra-alloc"));
  private static final Path EXAMPLES = Path.of(System.getProperty("kdra.examples", "../examples"));
  private static final Pattern SHARE_ID = Pattern.compile("(shareID\"?\\s*:\\s*\"?)[0-9a-f-]{36}");

  @BeforeAll
  static void binaryIsBuilt() {
    boolean required = "true".equals(System.getProperty("kdra.native"));
    if (!Files.isExecutable(BINARY)) {
      assertThat(required)
          .as(BINARY + " is missing although -Dkdra.native=true asked for it")
          .isFalse();
      Assumptions.abort(BINARY + " is not built (-Dkdra.native=true builds it)");
    }
  }

  static Stream<Arguments> cases() throws IOException {
    List<Arguments> cases = new ArrayList<>();
    try (Stream<Path> dirs = Files.list(EXAMPLES)) {
      for (Path dir : dirs.filter(d -> Files.exists(d.resolve("README.md"))).sorted().toList()) {
        List<String> files = new ArrayList<>(yamlFiles(dir));
        files.addAll(yamlFiles(dir.resolve("cluster")));
        cases.add(Arguments.of(dir.getFileName() + ", yaml", "", files));
        cases.add(Arguments.of(dir.getFileName() + ", json", "", concat(files, "-o", "json")));
        cases.add(
            Arguments.of(dir.getFileName() + ", summary", "", concat(files, "-o", "summary")));
      }
    }
    String cluster = Files.readString(EXAMPLES.resolve("a100-or-2xl4/cluster/cluster.yaml"));
    String claim = Files.readString(EXAMPLES.resolve("a100-or-2xl4/2-inference.yaml"));
    cases.add(Arguments.of("stdin", cluster + "\n---\n" + claim, List.of("-")));
    cases.add(Arguments.of("version", "", List.of("--version")));
    cases.add(Arguments.of("help", "", List.of("--help")));
    cases.add(Arguments.of("unknown option", "", List.of("--no-such-option")));
    cases.add(Arguments.of("missing file", "", List.of("no-such-file.yaml")));
    cases.add(Arguments.of("broken yaml", "kind: [ResourceClaim\n", List.of("-")));
    cases.add(
        Arguments.of(
            "empty list",
            "{\"apiVersion\":\"v1\",\"kind\":\"List\",\"items\":[]}",
            List.of("-", "-o", "json")));
    String brokenSelector =
        claim.replace("productName.startsWith(\"NVIDIA A100\")", "productName.startsWith(");
    assertThat(brokenSelector).as("the example's A100 selector, to break").isNotEqualTo(claim);
    cases.add(
        Arguments.of(
            "selector does not compile", cluster + "\n---\n" + brokenSelector, List.of("-")));
    return cases.stream();
  }

  @ParameterizedTest(name = "{0}")
  @MethodSource("cases")
  void behavesAsOnTheJvm(String name, String stdin, List<String> args) throws Exception {
    MainTest.Run jvm = MainTest.run(stdin, args.toArray(String[]::new));
    MainTest.Run nativeRun = runNative(stdin, args);
    assertThat(nativeRun.status())
        .as(name + ": exit status; stderr " + nativeRun.err())
        .isEqualTo(jvm.status());
    assertThat(withoutShareIds(nativeRun.out()))
        .as(name + ": stdout")
        .isEqualTo(withoutShareIds(jvm.out()));
    assertThat(nativeRun.err()).as(name + ": stderr").isEqualTo(jvm.err());
  }

  private static MainTest.Run runNative(String stdin, List<String> args) throws Exception {
    Path out = Files.createTempFile("native-cli", ".out");
    Path err = Files.createTempFile("native-cli", ".err");
    Path in = Files.createTempFile("native-cli", ".in");
    try {
      Files.writeString(in, stdin);
      List<String> command = new ArrayList<>(List.of(BINARY.toString()));
      command.addAll(args);
      Process process =
          new ProcessBuilder(command)
              .redirectInput(in.toFile())
              .redirectOutput(out.toFile())
              .redirectError(err.toFile())
              .start();
      assertThat(process.waitFor(5, TimeUnit.MINUTES)).as("the native run ends").isTrue();
      return new MainTest.Run(
          process.exitValue(),
          Files.readString(out, StandardCharsets.UTF_8),
          Files.readString(err, StandardCharsets.UTF_8));
    } finally {
      Files.deleteIfExists(out);
      Files.deleteIfExists(err);
      Files.deleteIfExists(in);
    }
  }

  private static List<String> yamlFiles(Path dir) throws IOException {
    try (Stream<Path> files = Files.list(dir)) {
      return files
          .filter(f -> f.toString().endsWith(".yaml"))
          .sorted()
          .map(Path::toString)
          .toList();
    }
  }

  private static List<String> concat(List<String> files, String... more) {
    List<String> all = new ArrayList<>(files);
    all.addAll(List.of(more));
    return all;
  }

  private static String withoutShareIds(String text) {
    return SHARE_ID.matcher(text).replaceAll("$1<random>");
  }
}
