package io.kdra.it.examples;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import com.fasterxml.jackson.dataformat.yaml.YAMLFactory;
import io.fabric8.kubernetes.api.model.Quantity;
import io.fabric8.kubernetes.api.model.resource.v1.ResourceSlice;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.kdra.it.nodes.SimulatedNode;
import io.kdra.it.services.Stack;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.math.BigDecimal;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;

/**
 * The cluster an example's {@code cluster/cluster.yaml} stands for: its nodes, each slice's devices
 * as that node's simulated inventory, and the check that the driver publishes exactly those devices
 * (so the file is what a cluster running kdra shows).
 */
public record ExampleCluster(Path file) {

  private static final ObjectMapper YAML = new ObjectMapper(new YAMLFactory());
  private static final Duration PUBLISHED = Duration.ofSeconds(90);

  /** "shared" for examples/cluster/cluster.yaml, else the folder of the example that has it. */
  public String name(Path examples) throws IOException {
    Path example = file.getParent().getParent();
    return Files.isSameFile(example, examples) ? "shared" : example.getFileName().toString();
  }

  /** One simulated node per node of the file's slices, with those slices' devices. */
  public List<SimulatedNode> nodes() throws IOException {
    Map<String, SimulatedNode> byName = new LinkedHashMap<>();
    for (JsonNode slice : slices()) {
      String node = slice.at("/spec/nodeName").asText();
      if (!byName.containsKey(node)) {
        byName.put(node, new SimulatedNode(node, inventory(slicesOf(node))));
      }
    }
    return List.copyOf(byName.values());
  }

  /** Waits until the published devices are the file's: names, attributes, capacities, counters. */
  public void assertPublished(KubernetesClient client) throws IOException {
    Map<String, JsonNode> expected = new TreeMap<>();
    for (JsonNode slice : slices()) {
      for (JsonNode d : slice.at("/spec/devices")) {
        expected.put(slice.at("/spec/nodeName").asText() + "/" + d.path("name").asText(), d);
      }
    }
    ObjectMapper json = new ObjectMapper();
    await()
        .atMost(PUBLISHED)
        .untilAsserted(
            () -> {
              Map<String, JsonNode> published = new TreeMap<>();
              for (ResourceSlice s : client.resources(ResourceSlice.class).list().getItems()) {
                if (!Stack.DRIVER.equals(s.getSpec().getDriver())
                    || s.getSpec().getDevices() == null) {
                  continue;
                }
                for (var d : s.getSpec().getDevices()) {
                  published.put(s.getSpec().getNodeName() + "/" + d.getName(), json.valueToTree(d));
                }
              }
              assertThat(published.keySet()).isEqualTo(expected.keySet());
              for (String key : expected.keySet()) {
                assertThat(comparable(published.get(key), expected.get(key)))
                    .as("device %s as %s has it", key, file)
                    .isEqualTo(comparable(expected.get(key), expected.get(key)));
              }
            });
  }

  /**
   * The fields of {@code device} that {@code file} sets, quantities as numbers (the driver may
   * write {@code 24Gi} where the file says {@code 24Gi} or {@code 25769803776}).
   */
  private static JsonNode comparable(JsonNode device, JsonNode file) {
    ObjectNode out = YAML.createObjectNode();
    file.fieldNames()
        .forEachRemaining(
            field -> {
              JsonNode value = device.path(field);
              out.set(
                  field,
                  Set.of("capacity", "consumesCounters").contains(field) ? numbers(value) : value);
            });
    // read again, so that an int attribute is the same node type from YAML and from fabric8's long
    try {
      return YAML.readTree(YAML.writeValueAsString(out));
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }

  private static JsonNode numbers(JsonNode node) {
    if (node.isTextual()) {
      try {
        BigDecimal amount = Quantity.getAmountInBytes(new Quantity(node.asText()));
        return YAML.getNodeFactory().textNode(amount.stripTrailingZeros().toPlainString());
      } catch (RuntimeException notAQuantity) {
        return node;
      }
    }
    if (node.isObject()) {
      ObjectNode out = YAML.createObjectNode();
      node.fields().forEachRemaining(e -> out.set(e.getKey(), numbers(e.getValue())));
      return out;
    }
    if (node.isArray()) {
      var out = YAML.createArrayNode();
      node.forEach(e -> out.add(numbers(e)));
      return out;
    }
    return node;
  }

  /** The ResourceSlices of the file. */
  private List<JsonNode> slices() throws IOException {
    List<JsonNode> out = new ArrayList<>();
    for (JsonNode item : YAML.readTree(file.toFile()).path("items")) {
      if ("ResourceSlice".equals(item.path("kind").asText())) {
        out.add(item);
      }
    }
    return out;
  }

  /** Every slice of {@code node}, in file order. */
  private List<JsonNode> slicesOf(String node) throws IOException {
    return slices().stream().filter(s -> node.equals(s.at("/spec/nodeName").asText())).toList();
  }

  /**
   * The simulated inventory that makes the driver publish these slices' devices: typed attribute
   * values as plain YAML values, quantities without their request policies (the driver adds those
   * from its sharing settings), and the shared counter sets.
   */
  static String inventory(List<JsonNode> nodeSlices) throws IOException {
    ObjectNode inventory = YAML.createObjectNode();
    var devices = inventory.putArray("devices");
    var counterSets = YAML.createArrayNode();
    for (JsonNode slice : nodeSlices) {
      for (JsonNode set : slice.at("/spec/sharedCounters")) {
        ObjectNode s = counterSets.addObject();
        s.put("name", set.path("name").asText());
        s.set("counters", values(set.path("counters")));
      }
      for (JsonNode d : slice.at("/spec/devices")) {
        devices.add(device(d));
      }
    }
    if (!counterSets.isEmpty()) {
      inventory.set("sharedCounters", counterSets);
    }
    return YAML.writeValueAsString(inventory);
  }

  private static ObjectNode device(JsonNode d) {
    ObjectNode device = YAML.createObjectNode();
    device.put("name", d.path("name").asText());
    ObjectNode attributes = device.putObject("attributes");
    d.path("attributes")
        .fields()
        .forEachRemaining(
            a -> {
              JsonNode typed = a.getValue();
              attributes.set(
                  a.getKey(),
                  typed.has("version")
                      ? typed
                      : typed.has("string")
                          ? typed.get("string")
                          : typed.has("int") ? typed.get("int") : typed.get("bool"));
            });
    if (d.has("capacity")) {
      device.set("capacity", values(d.path("capacity")));
    }
    if (d.has("consumesCounters")) {
      var consumes = device.putArray("consumesCounters");
      for (JsonNode c : d.path("consumesCounters")) {
        ObjectNode entry = consumes.addObject();
        entry.put("counterSet", c.path("counterSet").asText());
        entry.set("counters", values(c.path("counters")));
      }
    }
    return device;
  }

  /** {@code {name: {value: q, ...}}} to {@code {name: q}}. */
  private static ObjectNode values(JsonNode quantities) {
    ObjectNode out = YAML.createObjectNode();
    quantities
        .fields()
        .forEachRemaining(e -> out.put(e.getKey(), e.getValue().path("value").asText()));
    return out;
  }
}
