package io.kdra.slicepublisher;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.stream.Stream;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * The packages depend downwards only: the wiring ({@code config}, and the health checks at the top)
 * on {@code grpc} and {@code k8s}, those on {@code domain} and {@code observability}, never back,
 * so that each layer is tested without the ones above. Read from the sources: no library for
 * architecture rules is on the build's class path.
 */
class PackageLayersTest {

  private static final Path SOURCES = Path.of("src/main/java/io/kdra/slicepublisher");
  private static final String BASE = "io.kdra.slicepublisher.";

  static Stream<Arguments> layers() {
    return Stream.of(
        Arguments.of("domain", List.of("config", "grpc", "k8s", "observability")),
        Arguments.of("observability", List.of("config", "grpc", "k8s")),
        Arguments.of("k8s", List.of("config", "grpc")),
        Arguments.of("grpc", List.of("config", "k8s")));
  }

  @ParameterizedTest(name = "{0} imports none of {1}")
  @MethodSource("layers")
  void noPackageImportsALayerAboveIt(String pkg, List<String> above) throws IOException {
    List<String> upward;
    try (Stream<Path> files = Files.list(SOURCES.resolve(pkg))) {
      upward =
          files
              .filter(f -> f.toString().endsWith(".java"))
              .flatMap(
                  f ->
                      lines(f)
                          .filter(l -> l.startsWith("import "))
                          .map(l -> f.getFileName() + ": " + l))
              .filter(
                  l ->
                      above.stream()
                          .anyMatch(
                              a ->
                                  l.contains(" " + BASE + a + ".")
                                      || l.contains(" static " + BASE + a + ".")
                                      || l.matches(
                                          ".*import " + BASE.replace(".", "\\.") + "[A-Z].*")))
              .toList();
    }
    assertThat(upward).isEmpty();
  }

  private static Stream<String> lines(Path file) {
    try {
      return Files.readAllLines(file).stream();
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }
}
