package io.kdra.helmtests;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.io.IOException;
import java.nio.file.Files;
import java.util.ArrayList;
import java.util.List;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * Every service property that docs/user/ documents can be set from values: the schema has it under
 * the component's {@code config} (and additionalProperties false everywhere else means a property
 * missing here could not be set at all).
 */
class ConfigReachabilityTest {

  static Stream<Arguments> components() {
    return Stream.of(
        Arguments.of("device-driver", "deviceDriver", "kdra.device-driver."),
        Arguments.of("slice-publisher", "slicePublisher", "kdra.slice-publisher."),
        Arguments.of("claim-controller", "claimController", "kdra.claim-controller."),
        Arguments.of("computeclass-bridge", "computeClassBridge", "kdra.computeclass-bridge."));
  }

  @ParameterizedTest(name = "{0}")
  @MethodSource("components")
  void everyDocumentedPropertyIsInTheSchema(String service, String values, String prefix)
      throws IOException {
    List<String> properties = documented(RbacTest.servicePages(service), prefix);
    assertThat(properties).as("properties found in the %s pages", service).hasSizeGreaterThan(5);
    JsonNode schema =
        new ObjectMapper().readTree(Files.readString(Chart.DIR.resolve("values.schema.json")));
    JsonNode config = schema.at("/properties/" + values + "/properties/config");
    List<String> missing = new ArrayList<>();
    for (String p : properties) {
      if (!reachable(schema, config, p.substring(prefix.length()).split("\\."))) {
        missing.add(p);
      }
    }
    assertThat(missing).as("documented but not settable through %s.config", values).isEmpty();
  }

  /**
   * Property names in backticks: {@code `kdra.device-driver.nvidia.smi-path` / `.timeout`} names
   * two, {@code <pool>} stands for any map key, {@code =value} is an example and is cut; a value in
   * backticks that starts with a dot is a sibling only after " / ".
   */
  static List<String> documented(String section, String prefix) {
    List<String> out = new ArrayList<>();
    Matcher m = Pattern.compile("`([a-z][^`\\s]*|\\.[a-z][^`\\s]*)`").matcher(section);
    String last = null;
    while (m.find()) {
      String token = m.group(1).replaceAll("=.*", "");
      boolean listed = m.start() >= 3 && section.startsWith(" / ", m.start() - 3);
      if (token.startsWith(".") && listed && last != null) {
        String sibling = last.substring(0, last.lastIndexOf('.')) + token;
        out.add(sibling);
      } else if (token.startsWith(prefix) && !token.contains("*")) {
        out.add(token);
        last = token;
      }
    }
    return out;
  }

  static boolean reachable(JsonNode schema, JsonNode node, String[] path) {
    for (String segment : path) {
      node = deref(schema, node);
      if (node.path("properties").has(segment)) {
        node = node.get("properties").get(segment);
      } else if (node.path("additionalProperties").isObject()) {
        node = node.get("additionalProperties"); // a map: <pool>, <profile>, <label>
      } else {
        return false;
      }
    }
    return true;
  }

  static JsonNode deref(JsonNode schema, JsonNode node) {
    while (node.has("$ref")) {
      node = schema.at(node.get("$ref").asText().substring(1));
    }
    return node;
  }
}
