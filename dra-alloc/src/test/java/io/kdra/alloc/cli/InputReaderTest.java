package io.kdra.alloc.cli;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Named.named;
import static org.junit.jupiter.params.provider.Arguments.arguments;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.MappingIterator;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.dataformat.yaml.YAMLFactory;
import java.io.ByteArrayInputStream;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.stream.Stream;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * The fast paths of {@link InputReader}: JSON input gives the documents the YAML parser gave it
 * before, input that only starts like JSON is still read as YAML, and errors read as before, for
 * JSON and for block YAML (read by {@link BlockYamlReader}, tested on its own beside this).
 */
class InputReaderTest {

  private static final ObjectMapper YAML = new ObjectMapper(new YAMLFactory());

  static Arguments tc(String name, String input, boolean readAsJson, String asYaml) {
    return arguments(named(name, input), readAsJson, asYaml);
  }

  /**
   * Each input, whether it takes the JSON path, and a YAML text with the same documents (null: the
   * input itself, read by the YAML parser as all input was read before the JSON path).
   */
  static Stream<Arguments> documents() {
    return Stream.of(
        tc(
            "one object",
            "{\"kind\": \"DeviceClass\", \"metadata\": {\"name\": \"g\"}}",
            true,
            null),
        tc(
            "kind: List with nested arrays and nulls",
            "{\"kind\":\"List\",\"items\":[{\"kind\":"
                + "\"Pod\",\"spec\":{\"nodeName\":null,\"containers\":[]}},{}]}",
            true,
            null),
        tc(
            "numbers: int, long, big, negative, decimal",
            "{\"i\":1,\"l\":8589934592,"
                + "\"big\":123456789012345678901234567890,\"n\":-7,\"d\":0.5}",
            true,
            null),
        tc(
            "escapes and non-ASCII text",
            "{\"s\":\"a\\\"b\\\\c\\n\\u00e9\",\"t\":\"\u00fc\u4e2d\"}",
            true,
            null),
        tc("a duplicate key: the last value wins", "{\"a\":1,\"a\":2}", true, null),
        tc("a top-level array", "[{\"kind\":\"Node\"}]", true, null),
        // accepted now, rejected by the YAML parser before (upstream's reader accepts both)
        tc(
            "a stream of JSON values, with and without white space between",
            "{\"a\":1}{\"b\":2}\n\n{\"c\":[1,2,3]}",
            true,
            "a: 1\n---\nb: 2\n---\nc: [1, 2, 3]\n"),
        tc(
            "a byte order mark, then a tab before the JSON",
            "\ufeff \n\t{\"kind\":\"Node\"}",
            true,
            "kind: Node\n"),
        // starts like JSON but is YAML: read as YAML, as before
        tc("a YAML flow mapping", "{kind: Pod, a: [x]}", false, null),
        tc("JSON then a YAML document", "{\"kind\":\"Node\"}\n---\nkind: Pod\n", false, null),
        tc("YAML block style", "kind: Pod\nmetadata: {name: p}\n", false, null));
  }

  @ParameterizedTest(name = "{0}")
  @MethodSource("documents")
  void jsonGivesTheDocumentsYamlGave(String input, boolean json, String asYaml) throws Exception {
    byte[] bytes = input.getBytes(StandardCharsets.UTF_8);
    List<JsonNode> docs = new ArrayList<>();
    boolean readAsJson = new InputReader("test", System.err).forEachDocument(bytes, docs::add);

    assertThat(readAsJson).as("read as JSON").isEqualTo(json);
    assertThat(docs).isEqualTo(yamlDocuments(asYaml != null ? asYaml : input));
  }

  private static List<JsonNode> yamlDocuments(String text) throws IOException {
    List<JsonNode> docs = new ArrayList<>();
    try (MappingIterator<JsonNode> it =
        YAML.readValues(
            YAML.getFactory().createParser(text.getBytes(StandardCharsets.UTF_8)),
            JsonNode.class)) {
      while (it.hasNextValue()) {
        docs.add(it.nextValue());
      }
    }
    return docs;
  }

  static Stream<Arguments> errors() {
    return Stream.of(
        arguments(
            named("JSON cut short: the YAML parser's message, as before", "{\"kind\": "),
            "dra-alloc: <stdin>: not valid YAML or JSON"),
        arguments(
            named(
                "a type error in JSON names object and field",
                "{\"apiVersion\":\"resource.k8s.io/v1\",\"kind\":\"ResourceClaim\",\"metadata\":"
                    + "{\"name\":\"bad\"},\"spec\":{\"devices\":{\"requests\":[{\"name\":\"gpu\","
                    + "\"exactly\":{\"deviceClassName\":\"gpu\",\"count\":\"many\"}}]}}}"),
            "dra-alloc: <stdin>: ResourceClaim bad (document 1): field "
                + "spec.devices.requests[0].exactly.count:"),
        arguments(
            named(
                "a type error before a syntax error: the type error, as before",
                "{\"apiVersion\":\"resource.k8s.io/v1\",\"kind\":\"DeviceClass\",\"metadata\":"
                    + "{\"name\":\"bad\"},\"spec\":{\"selectors\":7}}\n{\"kind\": "),
            "dra-alloc: <stdin>: DeviceClass bad (document 1): field spec.selectors:"),
        arguments(
            named(
                "a type error in block YAML names object and field",
                "apiVersion: resource.k8s.io/v1\nkind: DeviceClass\nmetadata:\n  name: bad\n"
                    + "spec:\n  selectors: 7\n"),
            "dra-alloc: <stdin>: DeviceClass bad (document 1): field spec.selectors:"),
        arguments(
            named(
                "block YAML: a type error before a syntax error, the type error",
                "apiVersion: resource.k8s.io/v1\nkind: DeviceClass\nmetadata:\n  name: bad\n"
                    + "spec:\n  selectors: 7\n---\nkind: Pod\nmetadata: name: x\n"),
            "dra-alloc: <stdin>: DeviceClass bad (document 1): field spec.selectors:"),
        arguments(
            named(
                "a YAML syntax error: SnakeYAML's message and place",
                "kind: Pod\nmetadata:\n  name: a\n name: b\n"),
            "dra-alloc: <stdin>: not valid YAML or JSON: "));
  }

  /**
   * A YAML dump beyond SnakeYAML's default limit of 3 Mi characters, read by SnakeYAML (a flow
   * mapping per item takes it outside the block reader's subset) and by the block reader.
   */
  @ParameterizedTest(name = "labels written {0}")
  @MethodSource("largeDumpLabels")
  void readsYamlLargerThanSnakeYamlsDefaultLimit(String labels) throws Exception {
    StringBuilder yaml = new StringBuilder("apiVersion: v1\nkind: List\nitems:\n");
    int nodes = 40_000;
    for (int i = 0; i < nodes; i++) {
      yaml.append("- apiVersion: v1\n  kind: Node\n  metadata:\n    name: node-")
          .append(i)
          .append("\n    labels:")
          .append(labels);
    }
    byte[] bytes = yaml.toString().getBytes(StandardCharsets.UTF_8);
    assertThat(bytes.length).isGreaterThan(3 * 1024 * 1024);
    Inputs inputs = new Inputs();
    new InputReader("test", System.err).read("-", new ByteArrayInputStream(bytes), inputs);
    assertThat(inputs.nodes).hasSize(nodes);
    assertThat(inputs.nodes.get(nodes - 1).getMetadata().getLabels()).containsEntry("zone", "a");
  }

  static Stream<String> largeDumpLabels() {
    return Stream.of(" {zone: a}\n", "\n      zone: a\n");
  }

  @ParameterizedTest(name = "{0}")
  @MethodSource("errors")
  void errorsReadAsBefore(String input, String message) throws IOException {
    ByteArrayOutputStream err = new ByteArrayOutputStream();
    int status =
        Main.run(
            new String[] {"-"},
            new ByteArrayInputStream(input.getBytes(StandardCharsets.UTF_8)),
            new PrintStream(new ByteArrayOutputStream(), true, StandardCharsets.UTF_8),
            new PrintStream(err, true, StandardCharsets.UTF_8));
    assertThat(status).isEqualTo(2);
    assertThat(err.toString(StandardCharsets.UTF_8)).contains(message);
  }
}
