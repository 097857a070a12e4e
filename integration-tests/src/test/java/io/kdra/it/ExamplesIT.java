package io.kdra.it;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import com.fasterxml.jackson.dataformat.yaml.YAMLFactory;
import io.fabric8.kubernetes.api.model.GenericKubernetesResource;
import io.fabric8.kubernetes.api.model.HasMetadata;
import io.fabric8.kubernetes.api.model.ObjectMetaBuilder;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.PodResourceClaimStatus;
import io.fabric8.kubernetes.api.model.resource.v1.DeviceClass;
import io.fabric8.kubernetes.api.model.resource.v1.ResourceClaim;
import io.fabric8.kubernetes.api.model.resource.v1.ResourceClaimBuilder;
import io.fabric8.kubernetes.api.model.resource.v1.ResourceClaimTemplate;
import io.fabric8.kubernetes.api.model.resource.v1.ResourceSlice;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.kdra.alloc.cli.Summary;
import io.kdra.alloc.cli.WorkloadPods;
import io.kdra.it.controlplane.ControlPlane;
import io.kdra.it.nodes.SimulatedNode;
import io.kdra.it.services.Stack;
import java.io.IOException;
import java.math.BigDecimal;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.stream.Stream;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.DynamicContainer;
import org.junit.jupiter.api.DynamicNode;
import org.junit.jupiter.api.DynamicTest;
import org.junit.jupiter.api.TestFactory;
import org.junit.jupiter.api.extension.ExtendWith;

/**
 * Every scenario in {@code examples/} applied on the real stack (the real API server, the four
 * services, simulated nodes), with the outcome its README states: the lines {@code bin/dra-alloc -o
 * summary} prints, which {@code ExampleReadmesTest} checks against the command. The nodes are the
 * example's {@code cluster/cluster.yaml}: each slice's devices become that node's simulated
 * inventory, and the test first checks that the driver publishes exactly those devices (so the file
 * is what a cluster running kdra shows). One stack per cluster file, examples in name order.
 *
 * <p>The objects are created in file order, each pod bound before the next is created, as dra-alloc
 * places pods in input order. This stack has no kube-controller-manager: Deployments and Jobs are
 * created as the pods they run ({@link WorkloadPods}, named as dra-alloc names them), and the
 * claim-controller makes the template claims ({@code own} mode). A claim the file gives an
 * allocation already is created with that status, as if allocated before. Where an example has a
 * ComputeClass, its stack runs the computeclass-bridge, and the objects the example labels as the
 * bridge's are not created: the bridge's are awaited and must equal them.
 */
@ExtendWith(ControlPlane.class)
class ExamplesIT {

  private static final Path EXAMPLES = Path.of("..", "examples");

  /**
   * Where a scenario keeps the file that stands for its cluster, for dra-alloc and for this test.
   */
  private static final String CLUSTER_FILE = "cluster/cluster.yaml";

  private static final ObjectMapper YAML = new ObjectMapper(new YAMLFactory());
  private static final Duration BOUND = Duration.ofSeconds(90);

  /** What the cluster files' comments say the driver runs with. */
  private static final Map<String, Map<String, String>> DRIVER_PROPERTIES =
      Map.of(
          "gpu-time-slicing",
          Map.of(
              "kdra.device-driver.sharing.strategy", "time-slicing",
              "kdra.device-driver.sharing.shares", "4"),
          "mig-3g40gb-job",
          Map.of("kdra.device-driver.mig-mode", "dynamic"));

  private static final String COMPUTE_CLASS = "ComputeClass";
  private static final String BRIDGE = "kdra-computeclass-bridge";

  private static final List<Stack> OPEN = new ArrayList<>();

  @AfterAll
  static void closeStacks() {
    OPEN.forEach(Stack::close);
    OPEN.clear();
  }

  @TestFactory
  Stream<DynamicNode> everyExampleHasItsReadmesOutcome(ControlPlane.Running cp) throws IOException {
    Map<Path, List<Path>> byCluster = new TreeMap<>();
    try (Stream<Path> dirs = Files.list(EXAMPLES)) {
      for (Path dir : dirs.filter(d -> Files.exists(d.resolve("README.md"))).sorted().toList()) {
        byCluster
            .computeIfAbsent(dir.resolve(CLUSTER_FILE).toRealPath(), k -> new ArrayList<>())
            .add(dir);
      }
    }
    assertThat(byCluster).isNotEmpty();
    List<DynamicNode> nodes = new ArrayList<>();
    for (Map.Entry<Path, List<Path>> group : byCluster.entrySet()) {
      Path cluster = group.getKey();
      List<Path> dirs = group.getValue();
      String name = clusterName(cluster);
      Stack[] stack = new Stack[1];
      List<DynamicTest> tests = new ArrayList<>();
      tests.add(
          DynamicTest.dynamicTest(
              "the driver publishes " + name + "/" + CLUSTER_FILE,
              () -> {
                stack[0] = start(cp, cluster, dirs);
                assertPublishedAsTheFileSays(stack[0].client, cluster);
              }));
      for (int i = 0; i < dirs.size(); i++) {
        Path dir = dirs.get(i);
        boolean last = i == dirs.size() - 1;
        tests.add(
            DynamicTest.dynamicTest(
                dir.getFileName().toString(),
                () -> {
                  try {
                    assertThat(stack[0]).as("the stack of " + name).isNotNull();
                    assertThat(applied(stack[0], dir))
                        .as("%s on the real stack, as its README says", dir.getFileName())
                        .containsExactlyInAnyOrderElementsOf(readmeOutcome(dir));
                  } finally {
                    if (stack[0] != null) {
                      cleanUp(stack[0]);
                      if (last) {
                        OPEN.remove(stack[0]);
                        stack[0].close();
                      }
                    }
                  }
                }));
      }
      nodes.add(DynamicContainer.dynamicContainer(name + "/" + CLUSTER_FILE, tests));
    }
    return nodes.stream();
  }

  private static Stack start(ControlPlane.Running cp, Path cluster, List<Path> dirs)
      throws IOException {
    List<SimulatedNode> nodes = new ArrayList<>();
    for (JsonNode slice : slices(cluster)) {
      nodes.add(
          new SimulatedNode(
              slice.at("/spec/nodeName").asText(), inventory(slicesOf(cluster, slice))));
    }
    Map<String, String> properties = new LinkedHashMap<>();
    dirs.forEach(
        d ->
            properties.putAll(
                DRIVER_PROPERTIES.getOrDefault(d.getFileName().toString(), Map.of())));
    Stack stack =
        Stack.start(
            cp.client(),
            cp.server().getKubeConfigYaml(),
            "examples-" + clusterName(cluster),
            distinctByName(nodes),
            hasComputeClass(dirs) ? 1 : 0,
            1,
            properties);
    OPEN.add(stack);
    return stack;
  }

  /** Whether an example of these declares a ComputeClass: its stack runs the bridge. */
  private static boolean hasComputeClass(List<Path> dirs) throws IOException {
    for (Path dir : dirs) {
      if (exampleDocs(dir).stream().anyMatch(d -> COMPUTE_CLASS.equals(d.path("kind").asText()))) {
        return true;
      }
    }
    return false;
  }

  /** "shared" for examples/cluster/cluster.yaml, else the folder of the example that has it. */
  private static String clusterName(Path cluster) throws IOException {
    Path example = cluster.getParent().getParent();
    return Files.isSameFile(example, EXAMPLES) ? "shared" : example.getFileName().toString();
  }

  /** One node per name: a node whose pool is in several slices of the file appears once. */
  private static List<SimulatedNode> distinctByName(List<SimulatedNode> nodes) {
    Map<String, SimulatedNode> byName = new LinkedHashMap<>();
    nodes.forEach(n -> byName.putIfAbsent(n.name(), n));
    return List.copyOf(byName.values());
  }

  /**
   * Creates the example's objects in file order and returns the summary line of every claim it
   * allocated, as dra-alloc prints them (template claims named {@code <pod>-<entry>}, the example's
   * namespace).
   */
  private static List<String> applied(Stack stack, Path dir) throws IOException {
    KubernetesClient client = stack.client;
    String exampleNamespace = null;
    List<Pod> pods = new ArrayList<>();
    List<String> preallocated = new ArrayList<>();
    for (JsonNode doc : withTheBridgesObjects(dir)) {
      List<? extends JsonNode> expanded =
          WorkloadPods.KINDS.contains(doc.path("kind").asText())
              ? WorkloadPods.expand(doc)
              : List.of(doc);
      for (JsonNode d : expanded) {
        HasMetadata object = client.getKubernetesSerialization().unmarshal(d.toString());
        if (COMPUTE_CLASS.equals(object.getKind())) {
          client
              .genericKubernetesResources(d.path("apiVersion").asText(), COMPUTE_CLASS)
              .resource((GenericKubernetesResource) object)
              .create();
          continue;
        }
        if (BRIDGE.equals(label(object))) {
          awaitTheBridges(stack, object);
          continue;
        }
        if (object instanceof DeviceClass dc) {
          // an example uses the chart's classes (its cluster file holds them for dra-alloc) and
          // never defines one: kubectl apply would take it over from the Helm release
          assertThat(client.resource(dc).get())
              .as("DeviceClass %s exists already (the chart's?)", dc.getMetadata().getName())
              .isNull();
          stack.createClusterScoped(dc);
          continue;
        }
        exampleNamespace = object.getMetadata().getNamespace();
        object.getMetadata().setNamespace(stack.namespace);
        if (object instanceof ResourceClaim claim && claim.getStatus() != null) {
          var status = claim.getStatus();
          ResourceClaim created =
              client.resource(new ResourceClaimBuilder(claim).withStatus(null).build()).create();
          created.setStatus(status);
          client.resource(created).updateStatus();
          preallocated.add(claim.getMetadata().getName());
        } else if (object instanceof Pod pod) {
          Pod created = client.resource(pod).create();
          await()
              .atMost(BOUND)
              .untilAsserted(
                  () ->
                      assertThat(client.resource(created).get().getSpec().getNodeName())
                          .as("pod %s bound", pod.getMetadata().getName())
                          .isNotNull());
          pods.add(created);
        } else if (object instanceof ResourceClaimTemplate || object instanceof ResourceClaim) {
          client.resource(object).create();
        } else {
          throw new AssertionError("no rule to apply a " + object.getKind() + " here");
        }
      }
    }
    Map<String, String> names = templateClaimNames(client, pods);
    List<String> lines = new ArrayList<>();
    for (ResourceClaim claim :
        client.resources(ResourceClaim.class).inNamespace(stack.namespace).list().getItems()) {
      String name = claim.getMetadata().getName();
      if (preallocated.contains(name)) {
        continue;
      }
      ResourceClaim asNamed =
          new ResourceClaimBuilder(claim)
              .withMetadata(
                  new ObjectMetaBuilder()
                      .withName(names.getOrDefault(name, name))
                      .withNamespace(exampleNamespace)
                      .build())
              .build();
      Summary.line(asNamed).ifPresent(lines::add);
    }
    return lines;
  }

  private static String label(HasMetadata object) {
    Map<String, String> labels = object.getMetadata().getLabels();
    return labels == null ? null : labels.get("app.kubernetes.io/managed-by");
  }

  /**
   * An object the example shows as the computeclass-bridge writes it: the bridge's is awaited and
   * must be the same (DeviceClass selectors, template spec).
   */
  private static void awaitTheBridges(Stack stack, HasMetadata shown) {
    KubernetesClient client = stack.client;
    await()
        .atMost(BOUND)
        .untilAsserted(
            () -> {
              if (shown instanceof DeviceClass dc) {
                DeviceClass written = client.resource(dc).get();
                assertThat(written)
                    .as("the bridge's DeviceClass " + dc.getMetadata().getName())
                    .isNotNull();
                assertThat(written.getSpec().getSelectors()).isEqualTo(dc.getSpec().getSelectors());
              } else if (shown instanceof ResourceClaimTemplate t) {
                ResourceClaimTemplate written =
                    client
                        .resources(ResourceClaimTemplate.class)
                        .inNamespace(stack.namespace)
                        .withName(t.getMetadata().getName())
                        .get();
                assertThat(written)
                    .as("the bridge's template " + t.getMetadata().getName())
                    .isNotNull();
                assertThat(written.getSpec().getSpec()).isEqualTo(t.getSpec().getSpec());
              } else {
                throw new AssertionError("the bridge writes no " + shown.getKind());
              }
            });
  }

  /** Generated claim name to {@code <pod>-<entry>}, from the pods' status. */
  private static Map<String, String> templateClaimNames(KubernetesClient client, List<Pod> pods) {
    Map<String, String> names = new LinkedHashMap<>();
    for (Pod pod : pods) {
      Pod current = client.resource(pod).get();
      if (current.getStatus() == null || current.getStatus().getResourceClaimStatuses() == null) {
        continue;
      }
      for (PodResourceClaimStatus s : current.getStatus().getResourceClaimStatuses()) {
        if (s.getResourceClaimName() != null) {
          names.put(s.getResourceClaimName(), pod.getMetadata().getName() + "-" + s.getName());
        }
      }
    }
    return names;
  }

  /** Every pod, claim and template of the example gone, and the classes it created. */
  private static void cleanUp(Stack stack) {
    KubernetesClient client = stack.client;
    client.pods().inNamespace(stack.namespace).delete();
    client.resources(ResourceClaimTemplate.class).inNamespace(stack.namespace).delete();
    await()
        .atMost(Duration.ofSeconds(60))
        .untilAsserted(
            () ->
                assertThat(client.pods().inNamespace(stack.namespace).list().getItems()).isEmpty());
    client.resources(ResourceClaim.class).inNamespace(stack.namespace).delete();
    await()
        .atMost(Duration.ofSeconds(60))
        .untilAsserted(
            () ->
                assertThat(
                        client
                            .resources(ResourceClaim.class)
                            .inNamespace(stack.namespace)
                            .list()
                            .getItems())
                    .isEmpty());
    client
        .resources(DeviceClass.class)
        .withLabel(io.kdra.it.nodes.NodeRegistration.TEST_LABEL, stack.namespace)
        .delete();
    if (client
            .apiextensions()
            .v1()
            .customResourceDefinitions()
            .withName("computeclasses.cloud.google.com")
            .get()
        != null) {
      client.genericKubernetesResources("cloud.google.com/v1", COMPUTE_CLASS).delete();
    }
  }

  /** The lines of the README's "Expected outcome" block, after its command line. */
  static List<String> readmeOutcome(Path dir) throws IOException {
    String readme = Files.readString(dir.resolve("README.md"));
    int heading = readme.indexOf("## Expected outcome");
    assertThat(heading).as(dir + "/README.md has its expected outcome").isNotNegative();
    int command = readme.indexOf("$ bin/dra-alloc", heading);
    int body = readme.indexOf('\n', command) + 1;
    return readme.substring(body, readme.indexOf("```", body)).lines().toList();
  }

  /** The published devices are the file's: names, attributes, capacities and counters. */
  private static void assertPublishedAsTheFileSays(KubernetesClient client, Path cluster)
      throws IOException {
    Map<String, JsonNode> expected = new TreeMap<>();
    for (JsonNode slice : slices(cluster)) {
      for (JsonNode d : slice.at("/spec/devices")) {
        expected.put(slice.at("/spec/nodeName").asText() + "/" + d.path("name").asText(), d);
      }
    }
    ObjectMapper json = new ObjectMapper();
    await()
        .atMost(BOUND)
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
                    .as("device %s as %s has it", key, cluster)
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
    for (Iterator<String> it = file.fieldNames(); it.hasNext(); ) {
      String field = it.next();
      JsonNode value = device.path(field);
      out.set(
          field, Set.of("capacity", "consumesCounters").contains(field) ? numbers(value) : value);
    }
    // read again, so that an int attribute is the same node type from YAML and from fabric8's long
    try {
      return YAML.readTree(YAML.writeValueAsString(out));
    } catch (IOException e) {
      throw new java.io.UncheckedIOException(e);
    }
  }

  private static JsonNode numbers(JsonNode node) {
    if (node.isTextual()) {
      try {
        BigDecimal amount =
            io.fabric8.kubernetes.api.model.Quantity.getAmountInBytes(
                new io.fabric8.kubernetes.api.model.Quantity(node.asText()));
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

  /** The ResourceSlices of a cluster file. */
  private static List<JsonNode> slices(Path cluster) throws IOException {
    List<JsonNode> out = new ArrayList<>();
    for (JsonNode item : YAML.readTree(cluster.toFile()).path("items")) {
      if ("ResourceSlice".equals(item.path("kind").asText())) {
        out.add(item);
      }
    }
    return out;
  }

  /** Every slice of {@code slice}'s node, in file order. */
  private static List<JsonNode> slicesOf(Path cluster, JsonNode slice) throws IOException {
    String node = slice.at("/spec/nodeName").asText();
    return slices(cluster).stream()
        .filter(s -> node.equals(s.at("/spec/nodeName").asText()))
        .toList();
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
        ObjectNode device = devices.addObject();
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
      }
    }
    if (!counterSets.isEmpty()) {
      inventory.set("sharedCounters", counterSets);
    }
    return YAML.writeValueAsString(inventory);
  }

  /** {@code {name: {value: q, ...}}} to {@code {name: q}}. */
  private static ObjectNode values(JsonNode quantities) {
    ObjectNode out = YAML.createObjectNode();
    quantities
        .fields()
        .forEachRemaining(e -> out.put(e.getKey(), e.getValue().path("value").asText()));
    return out;
  }

  /**
   * The example's documents with, right after its ComputeClass, the objects its cluster folder
   * shows as the computeclass-bridge writes them (awaited, not created).
   */
  private static List<JsonNode> withTheBridgesObjects(Path dir) throws IOException {
    List<JsonNode> bridges = new ArrayList<>();
    try (Stream<Path> files = Files.list(dir.resolve("cluster"))) {
      for (Path f : files.filter(f -> f.toString().endsWith(".yaml")).sorted().toList()) {
        YAML.readerFor(JsonNode.class).<JsonNode>readValues(f.toFile()).readAll().stream()
            .filter(
                d -> BRIDGE.equals(d.at("/metadata/labels/app.kubernetes.io~1managed-by").asText()))
            .forEach(bridges::add);
      }
    }
    List<JsonNode> docs = new ArrayList<>();
    for (JsonNode doc : exampleDocs(dir)) {
      docs.add(doc);
      if (COMPUTE_CLASS.equals(doc.path("kind").asText())) {
        docs.addAll(bridges);
        bridges.clear();
      }
    }
    assertThat(bridges).as("the bridge's objects of %s follow a ComputeClass", dir).isEmpty();
    return docs;
  }

  /**
   * The example's documents: what {@code kubectl apply -f examples/<example>/} reads (the folder's
   * own YAML files; its {@code cluster/} subfolder stands for the cluster and is not applied).
   */
  private static List<JsonNode> exampleDocs(Path dir) throws IOException {
    List<JsonNode> docs = new ArrayList<>();
    try (Stream<Path> files = Files.list(dir)) {
      for (Path f :
          files
              .filter(Files::isRegularFile)
              .filter(f -> f.toString().endsWith(".yaml"))
              .sorted()
              .toList()) {
        docs.addAll(YAML.readerFor(JsonNode.class).<JsonNode>readValues(f.toFile()).readAll());
      }
    }
    return docs;
  }
}
