package io.kdra.core.cel;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Set;
import java.util.TreeSet;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;

/** The pinned versions are the oracle's, and every CEL class names what it follows. */
class UpstreamSourcesTest {

  private static final Path ROOT = projectRoot();

  @Test
  void celGoIsTheOraclesPin() throws IOException {
    assertThat(goModVersion("github.com/google/cel-go"))
        .as(
            "cel-go in integration-tests/upstream/go.mod: bump UpstreamSources.PINNED and read "
                + "the upstream diff of the files UpstreamSources.FILES names")
        .isEqualTo(UpstreamSources.PINNED.celGo());
  }

  @Test
  void kubernetesModulesAreTheOraclesPin() throws IOException {
    for (String module :
        new String[] {
          "k8s.io/apiserver", "k8s.io/apimachinery", "k8s.io/dynamic-resource-allocation"
        }) {
      assertThat(goModVersion(module))
          .as(module + " in integration-tests/upstream/go.mod")
          .isEqualTo(UpstreamSources.PINNED.kubernetesModules());
    }
  }

  @Test
  void goIsTheOraclesRelease() throws IOException {
    Matcher m = Pattern.compile("(?m)^go (\\d+\\.\\d+)").matcher(Files.readString(goMod()));
    assertThat(m.find()).isTrue();
    assertThat(m.group(1)).isEqualTo(UpstreamSources.PINNED.go());
  }

  @Test
  void celJavaIsTheBuildsVersion() throws IOException {
    Matcher m =
        Pattern.compile("<cel\\.version>([^<]+)</cel\\.version>")
            .matcher(Files.readString(ROOT.resolve("pom.xml")));
    assertThat(m.find()).isTrue();
    assertThat(m.group(1))
        .as("cel-java in the root pom: the compat canaries say which workarounds can go")
        .isEqualTo(UpstreamSources.PINNED.celJava());
  }

  @Test
  void everyClassNamesItsUpstreamFile() throws IOException {
    Path base = ROOT.resolve("dra-core/src/main/java/io/kdra/core/cel");
    Set<String> classes = new TreeSet<>();
    try (Stream<Path> files = Files.walk(base)) {
      files
          .filter(p -> p.toString().endsWith(".java"))
          .filter(p -> !p.getFileName().toString().equals("package-info.java"))
          .forEach(
              p -> {
                String rel = base.relativize(p).toString();
                classes.add(rel.substring(0, rel.length() - ".java".length()).replace('/', '.'));
              });
    }
    assertThat(UpstreamSources.FILES.keySet()).containsExactlyInAnyOrderElementsOf(classes);
  }

  private static String goModVersion(String module) throws IOException {
    Matcher m =
        Pattern.compile("(?m)^\\s*" + Pattern.quote(module) + " (v\\S+)")
            .matcher(Files.readString(goMod()));
    assertThat(m.find()).as(module + " in go.mod").isTrue();
    return m.group(1);
  }

  private static Path goMod() {
    return ROOT.resolve("integration-tests/upstream/go.mod");
  }

  /** The reactor root: the first directory upwards that holds the oracle's go.mod. */
  private static Path projectRoot() {
    for (Path p = Path.of("").toAbsolutePath(); p != null; p = p.getParent()) {
      if (Files.exists(p.resolve("integration-tests/upstream/go.mod"))) {
        return p;
      }
    }
    throw new IllegalStateException("no integration-tests/upstream/go.mod above the working dir");
  }
}
