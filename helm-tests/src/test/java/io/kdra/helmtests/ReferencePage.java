package io.kdra.helmtests;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;

/**
 * A page of docs/reference/, generated from the sources it names. The committed page must equal
 * what its generator makes now; with {@code -Dkdra.docs.write=true} the check writes the page
 * instead (and passes), which is how a stale page is regenerated.
 */
record ReferencePage(String file, String title, String sources, String body) {

  static final Path ROOT = Chart.DIR.resolve("../..").normalize();
  static final Path DIR = ROOT.resolve("docs/reference");
  static final String REGENERATE =
      "./mvnw -B -pl helm-tests test -Dtest=ReferenceDocsTest -Dkdra.docs.write=true";

  /** The page's full text: a header saying where it comes from and how to regenerate it. */
  String text() {
    return "<!-- Generated from "
        + sources
        + " by helm-tests' ReferenceDocsTest; do not edit.\n     Regenerate: "
        + REGENERATE
        + " -->\n\n# "
        + title
        + "\n\n"
        + body.strip()
        + "\n";
  }

  /** Fails when the committed page differs from {@link #text()}; writes it when asked to. */
  void check() {
    Path path = DIR.resolve(file);
    try {
      if (Boolean.getBoolean("kdra.docs.write")) {
        Files.createDirectories(DIR);
        Files.writeString(path, text());
      }
      String committed = Files.exists(path) ? Files.readString(path) : "";
      assertThat(committed)
          .as("docs/reference/%s is stale; regenerate it with: %s", file, REGENERATE)
          .isEqualTo(text());
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }

  /** A table cell: one line, pipes escaped. */
  static String cell(String text) {
    return text.strip().replaceAll("\\s+", " ").replace("|", "\\|");
  }

  /** Inline code, with backticks that survive a backtick inside. */
  static String code(String text) {
    return text.contains("`") ? "`` " + text + " ``" : "`" + text + "`";
  }
}
