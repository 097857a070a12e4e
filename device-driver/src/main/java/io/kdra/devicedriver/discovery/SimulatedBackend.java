package io.kdra.devicedriver.discovery;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.dataformat.yaml.YAMLFactory;
import io.kdra.core.model.AttributeValue;
import io.kdra.core.model.Quantity;
import io.kdra.core.model.Semver;
import java.io.IOException;
import java.io.InputStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.FileTime;
import java.util.ArrayList;
import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * Devices from a YAML file, re-read when its modification time changes. For local runs, tests and
 * demos: edit the file (e.g. set {@code health: Unhealthy}) and the next discovery pass, and so the
 * slice-publisher, sees it. Without the file a built-in inventory of eight GPUs is used.
 *
 * <pre>
 * devices:
 * - name: gpu-0
 *   attributes:                 # int, bool and string by YAML type; {version: "1.2.3"} for semver
 *     productName: Simulated H100
 *     index: 0
 *     driverVersion: {version: 550.54.15}
 *   capacity: {memory: 80Gi}
 *   consumesCounters: [{counterSet: gpu-0-memory, counters: {memory: 40Gi}}]
 *   health: Healthy             # or Unhealthy
 *   healthMessage: ""
 *   deviceNodes: [/dev/null]
 *   env: {SIMULATED_GPU_0: "1"}
 * sharedCounters: [{name: gpu-0-memory, counters: {memory: 80Gi}}]
 * commonDeviceNodes: []
 * </pre>
 *
 * Unknown keys are errors naming the file and path, so a typo cannot silently drop a device.
 *
 * <p>{@code deviceNodes} and {@code commonDeviceNodes} go into the claims' CDI specs, so whoever
 * may edit this file (a ConfigMap) could hand containers any device of the node ({@code /dev/sda},
 * {@code /dev/mem}). They must be one of {@link #HARMLESS_DEVICE_NODES}, unless the driver runs
 * with {@code kdra.device-driver.inventory-allow-any-device-node}.
 */
public final class SimulatedBackend implements DiscoveryBackend {
  private static final ObjectMapper YAML = new ObjectMapper(new YAMLFactory());
  private static final String BUILT_IN = "/simulated-inventory.yaml";

  /**
   * Device nodes a simulated device may have: character devices that give a container nothing of
   * the node (no disk, memory, terminal or GPU), which tests and demos on machines without GPUs use
   * to show that a container got its devices through CDI.
   */
  public static final List<String> HARMLESS_DEVICE_NODES =
      List.of(
          "/dev/null",
          "/dev/zero",
          "/dev/full",
          "/dev/random",
          "/dev/urandom",
          "/dev/fuse",
          "/dev/vsock",
          "/dev/hwrng",
          "/dev/loop-control",
          "/dev/userfaultfd",
          "/dev/cpu_dma_latency");

  private final Path file;
  private final boolean anyDeviceNode;
  private FileTime lastModified;
  private Inventory last;

  /** Only {@link #HARMLESS_DEVICE_NODES} are accepted. */
  public SimulatedBackend(Path file) {
    this(file, false);
  }

  /**
   * @param anyDeviceNode whether any device node is accepted ({@code
   *     kdra.device-driver.inventory-allow-any-device-node}), not only {@link
   *     #HARMLESS_DEVICE_NODES}
   */
  public SimulatedBackend(Path file, boolean anyDeviceNode) {
    this.file = file;
    this.anyDeviceNode = anyDeviceNode;
  }

  @Override
  public String name() {
    return "simulated";
  }

  @Override
  public synchronized Inventory discover() throws DiscoveryException {
    try {
      if (!Files.exists(file)) {
        if (last == null || lastModified != null) {
          try (InputStream in = SimulatedBackend.class.getResourceAsStream(BUILT_IN)) {
            last = parse(YAML.readTree(in), "built-in " + BUILT_IN, anyDeviceNode);
          }
          lastModified = null;
        }
        return last;
      }
      FileTime modified = Files.getLastModifiedTime(file);
      if (last == null || !modified.equals(lastModified)) {
        last = parse(YAML.readTree(file.toFile()), file.toString(), anyDeviceNode);
        lastModified = modified;
      }
      return last;
    } catch (IOException e) {
      throw new DiscoveryException("reading " + file + ": " + e.getMessage(), e);
    }
  }

  /**
   * Parses an inventory document, accepting only {@link #HARMLESS_DEVICE_NODES}.
   *
   * @param source named in error messages
   */
  public static Inventory parse(JsonNode root, String source) throws DiscoveryException {
    return parse(root, source, false);
  }

  /**
   * Parses an inventory document.
   *
   * @param source named in error messages
   * @param anyDeviceNode whether device nodes other than {@link #HARMLESS_DEVICE_NODES} are taken
   */
  public static Inventory parse(JsonNode root, String source, boolean anyDeviceNode)
      throws DiscoveryException {
    Where at = new Where(source, anyDeviceNode);
    if (root == null || !root.isObject()) {
      throw at.error("", "must be a mapping with a devices list");
    }
    at.allowOnly(root, "", Set.of("devices", "sharedCounters", "commonDeviceNodes"));
    List<NodeDevice> devices = new ArrayList<>();
    JsonNode list = root.path("devices");
    for (int i = 0; i < list.size(); i++) {
      devices.add(device(list.get(i), "devices[" + i + "]", at));
    }
    List<CounterSet> counters = new ArrayList<>();
    JsonNode sets = root.path("sharedCounters");
    for (int i = 0; i < sets.size(); i++) {
      String p = "sharedCounters[" + i + "]";
      at.allowOnly(sets.get(i), p, Set.of("name", "counters"));
      counters.add(
          new CounterSet(
              at.text(sets.get(i), p, "name"),
              quantities(sets.get(i).path("counters"), p + ".counters", at)));
    }
    try {
      return new Inventory(
          devices, counters, at.deviceNodes(root.path("commonDeviceNodes"), "commonDeviceNodes"));
    } catch (IllegalArgumentException e) {
      throw at.error("", e.getMessage());
    }
  }

  private static NodeDevice device(JsonNode d, String p, Where at) throws DiscoveryException {
    at.allowOnly(
        d,
        p,
        Set.of(
            "name",
            "attributes",
            "capacity",
            "consumesCounters",
            "health",
            "healthMessage",
            "deviceNodes",
            "env"));
    Map<String, AttributeValue> attributes = new LinkedHashMap<>();
    for (Iterator<Map.Entry<String, JsonNode>> it = d.path("attributes").fields(); it.hasNext(); ) {
      Map.Entry<String, JsonNode> e = it.next();
      attributes.put(e.getKey(), attribute(e.getValue(), p + ".attributes." + e.getKey(), at));
    }
    List<NodeDevice.CounterConsumption> consumes = new ArrayList<>();
    JsonNode cc = d.path("consumesCounters");
    for (int i = 0; i < cc.size(); i++) {
      String q = p + ".consumesCounters[" + i + "]";
      at.allowOnly(cc.get(i), q, Set.of("counterSet", "counters"));
      consumes.add(
          new NodeDevice.CounterConsumption(
              at.text(cc.get(i), q, "counterSet"),
              quantities(cc.get(i).path("counters"), q + ".counters", at)));
    }
    String health = d.path("health").asText("Healthy");
    if (!health.equals("Healthy") && !health.equals("Unhealthy")) {
      throw at.error(p + ".health", "\"" + health + "\" is not Healthy or Unhealthy");
    }
    Map<String, String> env = new LinkedHashMap<>();
    d.path("env").fields().forEachRemaining(e -> env.put(e.getKey(), e.getValue().asText()));
    return new NodeDevice(
        at.text(d, p, "name"),
        attributes,
        quantities(d.path("capacity"), p + ".capacity", at),
        consumes,
        health.equals("Healthy") ? NodeDevice.Health.HEALTHY : NodeDevice.Health.UNHEALTHY,
        d.path("healthMessage").asText(""),
        at.deviceNodes(d.path("deviceNodes"), p + ".deviceNodes"),
        env);
  }

  private static AttributeValue attribute(JsonNode v, String p, Where at)
      throws DiscoveryException {
    if (v.isIntegralNumber()) {
      return new AttributeValue.IntValue(v.asLong());
    }
    if (v.isBoolean()) {
      return new AttributeValue.BoolValue(v.asBoolean());
    }
    if (v.isTextual()) {
      return new AttributeValue.StringValue(v.asText());
    }
    if (v.isObject() && v.size() == 1 && v.has("version")) {
      try {
        return new AttributeValue.VersionValue(Semver.parse(v.get("version").asText()));
      } catch (IllegalArgumentException e) {
        throw at.error(p + ".version", "\"" + v.get("version").asText() + "\" is not semver");
      }
    }
    throw at.error(p, "must be an int, bool, string or {version: x.y.z}");
  }

  private static Map<String, Quantity> quantities(JsonNode m, String p, Where at)
      throws DiscoveryException {
    Map<String, Quantity> out = new LinkedHashMap<>();
    for (Iterator<Map.Entry<String, JsonNode>> it = m.fields(); it.hasNext(); ) {
      Map.Entry<String, JsonNode> e = it.next();
      try {
        out.put(e.getKey(), Quantity.parse(e.getValue().asText()));
      } catch (IllegalArgumentException ex) {
        throw at.error(p + "." + e.getKey(), "\"" + e.getValue().asText() + "\" is not a quantity");
      }
    }
    return out;
  }

  /** Error messages that name the source and the path; the device node check. */
  private record Where(String source, boolean anyDeviceNode) {
    List<String> deviceNodes(JsonNode array, String path) throws DiscoveryException {
      List<String> out = new ArrayList<>();
      for (int i = 0; i < array.size(); i++) {
        String node = array.get(i).asText();
        if (!anyDeviceNode && !HARMLESS_DEVICE_NODES.contains(node)) {
          throw error(
              path + "[" + i + "]",
              "\""
                  + node
                  + "\" is not one of the harmless device nodes a simulated device may have ("
                  + String.join(", ", HARMLESS_DEVICE_NODES)
                  + "); the CDI spec would give it to the claim's containers. Set"
                  + " kdra.device-driver.inventory-allow-any-device-node=true to allow any");
        }
        out.add(node);
      }
      return out;
    }

    DiscoveryException error(String path, String problem) {
      return new DiscoveryException(source + (path.isEmpty() ? "" : ": " + path) + ": " + problem);
    }

    void allowOnly(JsonNode n, String path, Set<String> known) throws DiscoveryException {
      if (!n.isObject()) {
        throw error(path, "must be a mapping");
      }
      for (Iterator<String> it = n.fieldNames(); it.hasNext(); ) {
        String f = it.next();
        if (!known.contains(f)) {
          throw error(path.isEmpty() ? f : path + "." + f, "unknown field");
        }
      }
    }

    String text(JsonNode n, String path, String field) throws DiscoveryException {
      JsonNode v = n.get(field);
      if (v == null || !v.isTextual() || v.asText().isEmpty()) {
        throw error(path + "." + field, "is required");
      }
      return v.asText();
    }
  }
}
