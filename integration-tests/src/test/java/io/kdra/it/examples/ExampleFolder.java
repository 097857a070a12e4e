package io.kdra.it.examples;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.dataformat.yaml.YAMLFactory;
import io.kdra.alloc.cli.WorkloadPods;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.stream.Stream;

/**
 * One folder of {@code examples/}: the objects {@code kubectl apply -f examples/<example>/} reads
 * (its own YAML files; the {@code cluster/} subfolder stands for the cluster and is not applied),
 * the objects its {@code cluster/} shows as the computeclass-bridge writes them, and its README's
 * expected outcome.
 */
public record ExampleFolder(Path dir) {

  /** Where a scenario keeps the file that stands for its cluster, for dra-alloc and the test. */
  public static final String CLUSTER_FILE = "cluster/cluster.yaml";

  public static final String COMPUTE_CLASS = "ComputeClass";

  /** The label value of the objects the computeclass-bridge writes. */
  public static final String BRIDGE = "kdra-computeclass-bridge";

  private static final ObjectMapper YAML = new ObjectMapper(new YAMLFactory());

  /** Every folder of {@code examples} with a README, by name. */
  public static List<ExampleFolder> all(Path examples) throws IOException {
    try (Stream<Path> dirs = Files.list(examples)) {
      return dirs.filter(d -> Files.exists(d.resolve("README.md")))
          .sorted()
          .map(ExampleFolder::new)
          .toList();
    }
  }

  public String name() {
    return dir.getFileName().toString();
  }

  /** The cluster file, links resolved (several examples share one). */
  public Path clusterFile() throws IOException {
    return dir.resolve(CLUSTER_FILE).toRealPath();
  }

  /** Whether the example declares a ComputeClass: its stack runs the bridge. */
  public boolean declaresComputeClass() throws IOException {
    return docs().stream().anyMatch(d -> COMPUTE_CLASS.equals(d.path("kind").asText()));
  }

  /** The example's workloads (Deployments, Jobs, ...) by name. */
  public Map<String, JsonNode> workloads() throws IOException {
    Map<String, JsonNode> workloads = new LinkedHashMap<>();
    for (JsonNode doc : docs()) {
      if (WorkloadPods.KINDS.contains(doc.path("kind").asText())) {
        workloads.put(doc.at("/metadata/name").asText(), doc);
      }
    }
    return workloads;
  }

  /** The lines of the README's "Expected outcome" block, after its command line. */
  public List<String> readmeOutcome() throws IOException {
    String readme = Files.readString(dir.resolve("README.md"));
    int heading = readme.indexOf("## Expected outcome");
    assertThat(heading).as(dir + "/README.md has its expected outcome").isNotNegative();
    int command = readme.indexOf("$ bin/dra-alloc", heading);
    int body = readme.indexOf('\n', command) + 1;
    return readme.substring(body, readme.indexOf("```", body)).lines().toList();
  }

  /**
   * The README's outcome with each workload's template claims named for any replica ({@link
   * ReplicaNames}).
   */
  public List<String> readmeOutcomeForAnyReplica() throws IOException {
    Map<String, String> names = new LinkedHashMap<>();
    for (JsonNode workload : workloads().values()) {
      names.putAll(ReplicaNames.ofDraAlloc(workload));
    }
    return readmeOutcome().stream().map(l -> ReplicaNames.renamed(l, names)).toList();
  }

  /**
   * The example's documents with, right after its ComputeClass, the objects its cluster folder
   * shows as the computeclass-bridge writes them (to be awaited, not created).
   */
  public List<JsonNode> docsWithTheBridgesObjects() throws IOException {
    List<JsonNode> bridges = new ArrayList<>();
    try (Stream<Path> files = Files.list(dir.resolve("cluster"))) {
      for (Path f : files.filter(f -> f.toString().endsWith(".yaml")).sorted().toList()) {
        read(f).stream().filter(ExampleFolder::isTheBridges).forEach(bridges::add);
      }
    }
    List<JsonNode> docs = new ArrayList<>();
    for (JsonNode doc : docs()) {
      docs.add(doc);
      if (COMPUTE_CLASS.equals(doc.path("kind").asText())) {
        docs.addAll(bridges);
        bridges.clear();
      }
    }
    assertThat(bridges).as("the bridge's objects of %s follow a ComputeClass", dir).isEmpty();
    return docs;
  }

  /** Whether the document is labelled as the computeclass-bridge's. */
  public static boolean isTheBridges(JsonNode doc) {
    return BRIDGE.equals(doc.at("/metadata/labels/app.kubernetes.io~1managed-by").asText());
  }

  /** What {@code kubectl apply -f examples/<example>/} reads, in file order. */
  public List<JsonNode> docs() throws IOException {
    List<JsonNode> docs = new ArrayList<>();
    try (Stream<Path> files = Files.list(dir)) {
      for (Path f :
          files
              .filter(Files::isRegularFile)
              .filter(f -> f.toString().endsWith(".yaml"))
              .sorted()
              .toList()) {
        docs.addAll(read(f));
      }
    }
    return docs;
  }

  private static List<JsonNode> read(Path f) throws IOException {
    return YAML.readerFor(JsonNode.class).<JsonNode>readValues(f.toFile()).readAll();
  }
}
