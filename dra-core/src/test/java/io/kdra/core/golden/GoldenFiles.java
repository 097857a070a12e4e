package io.kdra.core.golden;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.kdra.core.cel.UpstreamSources;
import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStream;
import java.io.InputStreamReader;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;

/**
 * The golden files: upstream's answers (the oracle, {@code dra-alloc-upstream}) for the CEL corpus
 * and for generated allocation scenarios, in dra-core's test resources under {@code golden/}, so
 * that dra-core's unit tests compare with upstream without Go. Each is JSON lines: a header (what
 * the file holds, the oracle's {@code version} output, the command that regenerates it), then one
 * line per case. The integration tests write them ({@value #WRITE_PROPERTY}) and, on every run,
 * fail when the live oracle answers otherwise than the files.
 */
public final class GoldenFiles {

  /** The system property with which the integration tests rewrite the files. */
  public static final String WRITE_PROPERTY = "kdra.golden.write";

  /** How to regenerate them all (docs/dev/oracles.md). */
  public static final String REGENERATE =
      "./mvnw -B -pl integration-tests -am verify -Dkdra.golden.write=true"
          + " -Dit.test='CelDifferentialIT,UpstreamDifferentialIT'";

  /** The folder in the test resources (and on the test class path). */
  public static final String FOLDER = "golden";

  static final ObjectMapper JSON = new ObjectMapper();

  private GoldenFiles() {}

  /** Whether this run rewrites the golden files. */
  public static boolean writing() {
    return Boolean.getBoolean(WRITE_PROPERTY);
  }

  /** One golden file: its header and its case lines. */
  public record Content(ObjectNode header, List<ObjectNode> lines) {
    /** The header's oracle: {@code {"go": ..., "modules": {path: version}}}. */
    public JsonNode oracle() {
      return header.path("oracle");
    }
  }

  /**
   * A header: {@code kind} names what the file holds, {@code oracle} is {@code dra-alloc-upstream
   * version}'s output; the caller adds what else identifies the inputs.
   */
  public static ObjectNode header(String kind, JsonNode oracle) {
    ObjectNode h = JSON.createObjectNode();
    h.put("golden", kind);
    h.set("oracle", oracle);
    h.put("regenerate", REGENERATE);
    return h;
  }

  /** The file's text: one JSON object per line, the header first. */
  public static String text(ObjectNode header, List<ObjectNode> lines) {
    StringBuilder out = new StringBuilder();
    try {
      out.append(JSON.writeValueAsString(header)).append('\n');
      for (ObjectNode line : lines) {
        out.append(JSON.writeValueAsString(line)).append('\n');
      }
    } catch (JsonProcessingException e) {
      throw new IllegalStateException(e);
    }
    return out.toString();
  }

  /** Reads a golden file from the test class path ({@code golden/<name>}). */
  public static Content readResource(String name) {
    String resource = FOLDER + "/" + name;
    InputStream in = GoldenFiles.class.getClassLoader().getResourceAsStream(resource);
    if (in == null) {
      throw new IllegalStateException(
          resource + " is not on the test class path: write it with " + REGENERATE);
    }
    try (in) {
      return parse(new String(in.readAllBytes(), StandardCharsets.UTF_8));
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }

  /** Reads a golden file of the source tree, or null when it does not exist. */
  public static Content readSource(String name) {
    Path file = sourceFolder().resolve(name);
    if (!Files.exists(file)) {
      return null;
    }
    try {
      return parse(Files.readString(file, StandardCharsets.UTF_8));
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }

  /** Writes a golden file into the source tree ({@code dra-core/src/test/resources/golden/}). */
  public static Path writeSource(String name, ObjectNode header, List<ObjectNode> lines) {
    Path file = sourceFolder().resolve(name);
    try {
      Files.createDirectories(file.getParent());
      Files.writeString(file, text(header, lines), StandardCharsets.UTF_8);
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
    return file;
  }

  private static Content without(Content c, String... fields) {
    if (fields.length == 0) {
      return c;
    }
    List<ObjectNode> lines = new ArrayList<>();
    for (ObjectNode l : c.lines()) {
      ObjectNode copy = l.deepCopy();
      copy.remove(List.of(fields));
      lines.add(copy);
    }
    return new Content(c.header(), lines);
  }

  /** The content as a golden file would read back (numbers in their smallest node type). */
  public static Content normalized(Content c) {
    return parse(text(c.header(), c.lines()));
  }

  static Content parse(String text) {
    List<ObjectNode> lines = new ArrayList<>();
    try (BufferedReader r =
        new BufferedReader(
            new InputStreamReader(
                new java.io.ByteArrayInputStream(text.getBytes(StandardCharsets.UTF_8)),
                StandardCharsets.UTF_8))) {
      String line;
      while ((line = r.readLine()) != null) {
        if (!line.isBlank()) {
          lines.add((ObjectNode) JSON.readTree(line));
        }
      }
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
    if (lines.isEmpty()) {
      throw new IllegalStateException("an empty golden file");
    }
    return new Content(lines.get(0), List.copyOf(lines.subList(1, lines.size())));
  }

  /**
   * Where the oracle that wrote a file differs from {@link UpstreamSources#PINNED}: cel-go, the
   * k8s.io modules, the Go release. Empty when it is the pinned one.
   */
  public static List<String> pinProblems(JsonNode oracle, UpstreamSources.Versions pinned) {
    List<String> out = new ArrayList<>();
    JsonNode modules = oracle.path("modules");
    expect(out, modules, "github.com/google/cel-go", pinned.celGo());
    for (String m :
        List.of(
            "k8s.io/api",
            "k8s.io/apimachinery",
            "k8s.io/apiserver",
            "k8s.io/dynamic-resource-allocation")) {
      expect(out, modules, m, pinned.kubernetesModules());
    }
    String go = oracle.path("go").asText("");
    if (!go.equals("go" + pinned.go()) && !go.startsWith("go" + pinned.go() + ".")) {
      out.add("Go " + (go.isEmpty() ? "(none)" : go) + ", pinned " + pinned.go());
    }
    return out;
  }

  private static void expect(List<String> out, JsonNode modules, String module, String pinned) {
    String v = modules.path(module).asText("");
    if (!v.equals(pinned)) {
      out.add(module + " " + (v.isEmpty() ? "(none)" : v) + ", pinned " + pinned);
    }
  }

  /**
   * Where a golden file no longer says what the live oracle says: the header's fields (the
   * regenerate command aside), and each line the live run has, matched by {@code key} (a field
   * name; null: by position, and the line counts must be equal), the fields named in {@code
   * ignored} left out. At most {@code limit} lines are named, then a count. Empty when the golden
   * file is current.
   */
  public static List<String> staleness(
      Content golden, Content live, String key, int limit, String... ignored) {
    // as read back from the file: an int read is not equal to the long that was written
    live = without(normalized(live), ignored);
    golden = without(golden, ignored);
    List<String> out = new ArrayList<>();
    var names = new java.util.TreeSet<String>();
    golden.header().fieldNames().forEachRemaining(names::add);
    live.header().fieldNames().forEachRemaining(names::add);
    names.remove("regenerate");
    for (String n : names) {
      if (!golden.header().path(n).equals(live.header().path(n))) {
        out.add(
            "header "
                + n
                + ": golden "
                + golden.header().path(n)
                + ", live "
                + live.header().path(n));
      }
    }
    java.util.Map<String, ObjectNode> byKey = new java.util.HashMap<>();
    if (key != null) {
      golden.lines().forEach(l -> byKey.put(l.path(key).asText(), l));
    } else if (golden.lines().size() != live.lines().size()) {
      out.add("golden " + golden.lines().size() + " lines, live " + live.lines().size());
    }
    int differing = 0;
    for (int i = 0; i < live.lines().size(); i++) {
      ObjectNode l = live.lines().get(i);
      ObjectNode g =
          key != null
              ? byKey.get(l.path(key).asText())
              : i < golden.lines().size() ? golden.lines().get(i) : null;
      if (g == null && key != null) {
        continue; // a case the golden file does not cover
      }
      if (!l.equals(g)) {
        if (differing++ < limit) {
          out.add("golden " + g + "\n  live " + l);
        }
      }
    }
    if (differing > limit) {
      out.add("... " + (differing - limit) + " more lines differ");
    }
    return out;
  }

  /** The project root: the first directory upwards that holds dra-core's sources. */
  static Path sourceFolder() {
    for (Path p = Path.of("").toAbsolutePath(); p != null; p = p.getParent()) {
      if (Files.isDirectory(p.resolve("dra-core/src/test/java"))) {
        return p.resolve("dra-core/src/test/resources").resolve(FOLDER);
      }
    }
    throw new IllegalStateException("no dra-core/src/test/java above the working directory");
  }
}
