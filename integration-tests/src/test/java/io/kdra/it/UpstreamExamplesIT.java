package io.kdra.it;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.kdra.it.upstream.UpstreamAlloc;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.stream.Stream;
import org.junit.jupiter.api.DynamicTest;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestFactory;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/**
 * {@code bin/dra-alloc} and upstream's allocator ({@code dra-alloc-upstream}) decide alike on every
 * scenario in {@code examples/}: the same exit status, the same claims allocated, on the same node
 * with the same devices (the examples are small enough that upstream's first-fit choice is
 * deterministic), and the same claims reported as failing. No control plane needed.
 */
class UpstreamExamplesIT {

  private static final Path EXAMPLES = Path.of("..", "examples");
  private static final ObjectMapper JSON = new ObjectMapper();

  @TestFactory
  Stream<DynamicTest> everyExampleScenarioAgrees() throws IOException {
    List<Path> scenarios;
    try (Stream<Path> dirs = Files.list(EXAMPLES)) {
      scenarios = dirs.filter(d -> Files.exists(d.resolve("README.md"))).sorted().toList();
    }
    assertThat(scenarios).as("scenarios in " + EXAMPLES.toAbsolutePath()).isNotEmpty();
    return scenarios.stream()
        .map(
            dir ->
                DynamicTest.dynamicTest(
                    dir.getFileName().toString(),
                    () -> {
                      List<String> files = exampleFiles(dir);
                      Decision ours = decide(UpstreamAlloc.kdra(args(files)));
                      Decision upstream =
                          decide(UpstreamAlloc.upstream(args(workloadsAsPods(files))));
                      assertThat(ours).as("dra-alloc vs upstream on " + dir).isEqualTo(upstream);
                      assertThat(ours.exit()).as("every example allocates").isZero();
                    }));
  }

  /** A claim that fits nowhere and a pod whose template is missing fail in both, alike. */
  @Test
  void failuresAgree(@TempDir Path tmp) throws IOException {
    Path extra = tmp.resolve("unsatisfiable.yaml");
    Files.writeString(
        extra,
        """
        apiVersion: resource.k8s.io/v1
        kind: ResourceClaim
        metadata: {name: two-big-gpus, namespace: ml}
        spec:
          devices:
            requests:
            - name: gpu
              exactly:
                deviceClassName: gpu.kdra.io
                count: 2
                selectors:
                - cel:
                    expression: device.capacity["gpu.kdra.io"].memory.compareTo(quantity("40Gi")) >= 0
        ---
        apiVersion: v1
        kind: Pod
        metadata: {name: orphan, namespace: ml}
        spec:
          resourceClaims:
          - {name: gpu, resourceClaimTemplateName: no-such-template}
          containers:
          - {name: main, image: app:1}
        """);
    List<String> files = new ArrayList<>(exampleFiles(EXAMPLES.resolve("memory-filter")));
    files.add(extra.toString());
    Decision ours = decide(UpstreamAlloc.kdra(args(files)));
    Decision upstream = decide(UpstreamAlloc.upstream(args(files)));
    assertThat(ours).isEqualTo(upstream);
    assertThat(ours.exit()).isEqualTo(1);
    assertThat(ours.failed()).containsExactly("ml/orphan", "ml/two-big-gpus");
    assertThat(ours.allocated()).containsOnlyKeys("ml/big-gpu-1", "ml/big-gpu-2");
  }

  /**
   * With the A100-40GB free on node-b (the example's second file without its first), the
   * prioritized-list scoring picks node-b's first choice over node-a's fallback, although node-a
   * comes first in name order: in both.
   */
  @Test
  void firstAvailableScoringAgrees() throws IOException {
    Path dir = EXAMPLES.resolve("a100-or-2xl4");
    List<String> files =
        List.of(
            dir.resolve("cluster/cluster.yaml").toString(),
            dir.resolve("2-inference.yaml").toString());
    Decision ours = decide(UpstreamAlloc.kdra(args(files)));
    Decision upstream = decide(UpstreamAlloc.upstream(args(files)));
    assertThat(ours).isEqualTo(upstream);
    assertThat(ours.allocated()).containsOnlyKeys("ml/inference");
    assertThat(ours.allocated().get("ml/inference").devices())
        .containsExactly("gpu/one-a100-40gb gpu.kdra.io/node-b/gpu-0");
  }

  /**
   * A plain {@code n} is a string in both readers, not the YAML 1.1 boolean that sigs.k8s.io/yaml
   * would make of it: a request named {@code n} is allocated by both. (Unquoted yes/no/on/off still
   * differ: Jackson reads them as YAML 1.1 booleans, the Go reader as strings; inputs should quote
   * them.)
   */
  @Test
  void yamlWordsThatLookBooleanStayStrings(@TempDir Path tmp) throws IOException {
    Path claim = tmp.resolve("request-n.yaml");
    Files.writeString(
        claim,
        """
        apiVersion: resource.k8s.io/v1
        kind: ResourceClaim
        metadata: {name: request-n, namespace: ml}
        spec:
          devices:
            requests:
            - name: n
              exactly: {deviceClassName: gpu.kdra.io}
        """);
    List<String> files = new ArrayList<>(exampleFiles(EXAMPLES.resolve("memory-filter")));
    files.add(claim.toString());
    Decision ours = decide(UpstreamAlloc.kdra(args(files)));
    Decision upstream = decide(UpstreamAlloc.upstream(args(files)));
    assertThat(ours).isEqualTo(upstream);
    assertThat(ours.allocated()).containsKey("ml/request-n");
    assertThat(ours.allocated().get("ml/request-n").devices())
        .singleElement()
        .asString()
        .startsWith("n gpu.kdra.io/");
  }

  /**
   * Pods whose claims are allocated already: such a claim keeps its allocation and its node
   * selector restricts the pod, in both. Files in {@code src/test/resources/allocated-claims/};
   * each names what it shows.
   */
  @ParameterizedTest(name = "{0}")
  @CsvSource(
      delimiter = '|',
      value = {
        "shared-claim-pins-the-next-pod | 1 | ml/shared=gpu gpu.kdra.io/node-a/gpu-0 | ml/own",
        "pinned-claim-moves-the-new-claim | 0 | ml/new=gpu gpu.kdra.io/node-b/gpu-1 |",
        "pinned-claim-outside-the-pods-nodes | 1 | | ml/new ml/p",
        "claims-without-namespace | 1 | default/a=gpu gpu.kdra.io/node-a/gpu-0 | default/b"
      })
  void allocatedClaimsRestrictThePodAlike(String name, int exit, String allocated, String failed)
      throws IOException {
    List<String> files =
        List.of(Path.of("src/test/resources/allocated-claims", name + ".yaml").toString());
    Decision ours = decide(UpstreamAlloc.kdra(args(files)));
    Decision upstream = decide(UpstreamAlloc.upstream(args(files)));
    assertThat(ours).isEqualTo(upstream);
    assertThat(ours.exit()).isEqualTo(exit);
    Map<String, String> devices = new TreeMap<>();
    ours.allocated().forEach((k, v) -> devices.put(k, String.join(", ", v.devices())));
    assertThat(devices)
        .isEqualTo(
            allocated == null
                ? Map.of()
                : Map.of(allocated.split("=")[0], allocated.split("=")[1]));
    assertThat(ours.failed())
        .containsExactlyElementsOf(failed == null ? List.of() : List.of(failed.split(" ")));
  }

  /** Both reject bad input with exit status 2. */
  @Test
  void badInputIsExitTwo(@TempDir Path tmp) throws IOException {
    Path bad = tmp.resolve("bad.yaml");
    Files.writeString(
        bad,
        "apiVersion: resource.k8s.io/v1beta1\nkind: DeviceClass\n" + "metadata: {name: old}\n");
    assertThat(UpstreamAlloc.kdra(List.of(bad.toString())).exit()).isEqualTo(2);
    assertThat(UpstreamAlloc.upstream(List.of(bad.toString())).exit()).isEqualTo(2);
  }

  /**
   * What is compared: the exit status, per allocated claim its node selector and devices (as
   * "request driver/pool/device", sorted), and the keys named on failure lines.
   */
  record Decision(int exit, Map<String, Placed> allocated, TreeSet<String> failed) {}

  /** Where a claim landed: its node selector (compared as JSON, key order aside), its devices. */
  record Placed(JsonNode nodeSelector, TreeSet<String> devices) {}

  private static Decision decide(UpstreamAlloc.Result r) throws IOException {
    assertThat(r.exit()).as("exit status; stderr: " + r.err()).isIn(0, 1);
    Map<String, Placed> allocated = new TreeMap<>();
    for (JsonNode claim : JSON.readTree(r.out()).path("items")) {
      JsonNode allocation = claim.path("status").path("allocation");
      if (allocation.isMissingNode()) {
        continue;
      }
      TreeSet<String> devices = new TreeSet<>();
      for (JsonNode d : allocation.path("devices").path("results")) {
        devices.add(
            d.path("request").asText()
                + " "
                + d.path("driver").asText()
                + "/"
                + d.path("pool").asText()
                + "/"
                + d.path("device").asText());
      }
      allocated.put(
          claim.path("metadata").path("namespace").asText("default")
              + "/"
              + claim.path("metadata").path("name").asText(),
          new Placed(allocation.path("nodeSelector"), devices));
    }
    TreeSet<String> failed = new TreeSet<>();
    for (String line : r.err().split("\n")) {
      int at = Math.max(line.indexOf(": cannot allocate: "), line.indexOf(": cannot schedule: "));
      if (at > 0) {
        failed.add(line.substring(0, at));
      }
    }
    return new Decision(r.exit(), allocated, failed);
  }

  private static List<String> args(List<String> files) {
    List<String> args = new ArrayList<>(List.of("-o", "json"));
    args.addAll(files);
    return args;
  }

  /**
   * The files with every Deployment, ReplicaSet, StatefulSet and Job replaced by its pods, for
   * upstream's reader, which takes Pods only (dra-alloc expands them itself, with the same {@link
   * io.kdra.alloc.cli.WorkloadPods}); files without workloads are passed as they are.
   */
  private static List<String> workloadsAsPods(List<String> files) throws IOException {
    com.fasterxml.jackson.databind.ObjectMapper yaml =
        new com.fasterxml.jackson.databind.ObjectMapper(
            new com.fasterxml.jackson.dataformat.yaml.YAMLFactory());
    Path dir = null;
    List<String> out = new ArrayList<>();
    for (String file : files) {
      List<JsonNode> docs =
          yaml.readerFor(JsonNode.class).<JsonNode>readValues(Path.of(file).toFile()).readAll();
      if (docs.stream()
          .noneMatch(d -> io.kdra.alloc.cli.WorkloadPods.KINDS.contains(d.path("kind").asText()))) {
        out.add(file);
        continue;
      }
      StringBuilder text = new StringBuilder();
      for (JsonNode d : docs) {
        List<? extends JsonNode> expanded =
            io.kdra.alloc.cli.WorkloadPods.KINDS.contains(d.path("kind").asText())
                ? io.kdra.alloc.cli.WorkloadPods.expand(d)
                : List.of(d);
        for (JsonNode e : expanded) {
          text.append(yaml.writeValueAsString(e)); // each document starts with ---
        }
      }
      if (dir == null) {
        dir =
            Files.createTempDirectory(
                Files.createDirectories(Path.of("target")), "examples-as-pods");
      }
      Path expanded = dir.resolve(out.size() + "-" + Path.of(file).getFileName());
      Files.writeString(expanded, text);
      out.add(expanded.toString());
    }
    return out;
  }

  /** A scenario's files as its README's command names them: its own, then its cluster folder's. */
  private static List<String> exampleFiles(Path dir) throws IOException {
    List<String> files = new ArrayList<>(yamlFiles(dir));
    files.addAll(yamlFiles(dir.resolve("cluster")));
    return files;
  }

  private static List<String> yamlFiles(Path dir) throws IOException {
    try (Stream<Path> files = Files.list(dir)) {
      return files
          .filter(f -> f.toString().endsWith(".yaml"))
          .sorted()
          .map(Path::toString)
          .toList();
    }
  }
}
