package io.kdra.helmtests;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.Path;
import java.util.List;
import java.util.stream.Stream;

/** The folders and files of {@code examples/}, as a user and kubectl see them. */
final class ExampleFiles {

  static final Path EXAMPLES = Path.of("..", "examples").toAbsolutePath().normalize();

  /** The subfolder of a scenario that stands for the cluster, for {@code bin/dra-alloc} only. */
  static final String CLUSTER_FOLDER = "cluster";

  /** The extensions kubectl reads from a folder given to {@code -f}. */
  private static final List<String> KUBECTL_EXTENSIONS = List.of(".json", ".yaml", ".yml");

  private ExampleFiles() {}

  /** Each scenario: a folder of examples/ with a README. */
  static List<Path> scenarios() {
    return list(EXAMPLES)
        .filter(Files::isDirectory)
        .filter(d -> Files.isRegularFile(d.resolve("README.md")))
        .toList();
  }

  /**
   * What {@code kubectl apply -f <folder>/} reads: the folder's own files (not its subfolders, as
   * without {@code -R}) named *.json, *.yaml or *.yml; a symbolic link to a file is read as that
   * file.
   */
  static List<Path> kubectlApplyFiles(Path folder) {
    return list(folder)
        .filter(p -> !Files.isDirectory(p, LinkOption.NOFOLLOW_LINKS))
        .filter(p -> KUBECTL_EXTENSIONS.stream().anyMatch(p.getFileName().toString()::endsWith))
        .toList();
  }

  /** The files of a scenario's cluster folder, which {@code bin/dra-alloc} reads with it. */
  static List<Path> clusterFiles(Path scenario) {
    Path cluster = scenario.resolve(CLUSTER_FOLDER);
    return Files.isDirectory(cluster)
        ? list(cluster).filter(p -> p.toString().endsWith(".yaml")).toList()
        : List.of();
  }

  private static Stream<Path> list(Path folder) {
    try (Stream<Path> files = Files.list(folder)) {
      return files.sorted().toList().stream();
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }
}
