package io.kdra.alloc.cli;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Named.named;
import static org.junit.jupiter.params.provider.Arguments.arguments;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.dataformat.yaml.YAMLFactory;
import java.io.ByteArrayInputStream;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

/** The command in-process: exit statuses, messages, and the output shape. */
class MainTest {

  static final Path EXAMPLES = Path.of("..", "examples");

  @TempDir Path tmp;

  record Run(int status, String out, String err) {
    JsonNode yaml() throws IOException {
      return new ObjectMapper(new YAMLFactory()).readTree(out);
    }
  }

  static Run run(String stdin, String... args) {
    ByteArrayOutputStream out = new ByteArrayOutputStream();
    ByteArrayOutputStream err = new ByteArrayOutputStream();
    int status =
        Main.run(
            args,
            new ByteArrayInputStream(stdin.getBytes(StandardCharsets.UTF_8)),
            new PrintStream(out, true, StandardCharsets.UTF_8),
            new PrintStream(err, true, StandardCharsets.UTF_8));
    return new Run(
        status, out.toString(StandardCharsets.UTF_8), err.toString(StandardCharsets.UTF_8));
  }

  /**
   * An example's files as its README's command names them: {@code examples/<name>/*.yaml
   * examples/<name>/cluster/*.yaml} (the cluster folder, which kubectl skips, stands for the
   * cluster).
   */
  static String[] example(String name) throws IOException {
    List<String> files = new ArrayList<>();
    for (Path dir : List.of(EXAMPLES.resolve(name), EXAMPLES.resolve(name).resolve("cluster"))) {
      try (var s = Files.list(dir)) {
        s.filter(p -> p.toString().endsWith(".yaml"))
            .sorted()
            .forEach(p -> files.add(p.toString()));
      }
    }
    return files.toArray(new String[0]);
  }

  static final String CLASS =
      """
      apiVersion: resource.k8s.io/v1
      kind: DeviceClass
      metadata: {name: gpu}
      spec:
        selectors: [{cel: {expression: 'device.driver == "gpu.example.com"'}}]
      """;

  static final String SLICE =
      """
      apiVersion: resource.k8s.io/v1
      kind: ResourceSlice
      metadata: {name: s}
      spec:
        driver: gpu.example.com
        nodeName: node-a
        pool: {name: node-a, generation: 1, resourceSliceCount: 1}
        devices: [{name: gpu-0}]
      """;

  static final String TAINTED_SLICE =
      SLICE.replace(
          "devices: [{name: gpu-0}]",
          "devices: [{name: gpu-0, taints: [{key: example.com/broken, effect: NoSchedule}]}]");

  static String claim(String name) {
    return """
        apiVersion: resource.k8s.io/v1
        kind: ResourceClaim
        metadata: {name: %s, namespace: ns}
        spec:
          devices:
            requests: [{name: gpu, exactly: {deviceClassName: gpu}}]
        """
        .formatted(name);
  }

  static String docs(String... docs) {
    return String.join("---\n", docs);
  }

  static Arguments tc(String name, String stdin, int status, String errContains, String... args) {
    return arguments(named(name, stdin), status, errContains, args);
  }

  static Stream<Arguments> statuses() {
    return Stream.of(
        tc(
            "0: every pending claim allocated (stdin, multi-document)",
            docs(CLASS, SLICE, claim("a")),
            0,
            "",
            "-"),
        tc(
            "1: second claim finds no free device",
            docs(CLASS, SLICE, claim("a"), claim("b")),
            1,
            "ns/b: cannot allocate: request \"gpu\": 1 device in class \"gpu\", 0 free (1 "
                + "allocated to other claims)",
            "-"),
        tc(
            "1: missing DeviceClass is named",
            docs(SLICE, claim("a")),
            1,
            "ns/a: cannot allocate: request \"gpu\": device class gpu not found",
            "-"),
        tc(
            "1: a pod's missing template is named",
            docs(
                CLASS,
                SLICE,
                """
            apiVersion: v1
            kind: Pod
            metadata: {name: p, namespace: ns}
            spec:
              resourceClaims: [{name: g, resourceClaimTemplateName: nosuch}]
              containers: [{name: c, image: x}]
            """),
            1,
            "ns/p: cannot allocate: resource claim template nosuch not found",
            "-"),
        tc(
            "2: unparseable YAML names the file",
            "kind: [unclosed",
            2,
            "dra-alloc: <stdin>: not valid YAML or JSON",
            "-"),
        tc(
            "2: wrong field type names object and field",
            docs(
                CLASS,
                """
            apiVersion: resource.k8s.io/v1
            kind: ResourceClaim
            metadata: {name: bad, namespace: ns}
            spec:
              devices:
                requests: [{name: gpu, exactly: {deviceClassName: gpu, count: many}}]
            """),
            2,
            "dra-alloc: <stdin>: ResourceClaim bad (document 2): field "
                + "spec.devices.requests[0].exactly.count:",
            "-"),
        tc(
            "2: unsupported apiVersion",
            CLASS.replace("resource.k8s.io/v1", "resource.k8s.io/v1beta1"),
            2,
            "DeviceClass gpu (document 1): field apiVersion: \"resource.k8s.io/v1beta1\" is not "
                + "supported",
            "-"),
        tc(
            "2: missing file",
            "",
            2,
            "dra-alloc: no-such-file.yaml: no such file",
            "no-such-file.yaml"),
        tc(
            "2: bad output format",
            docs(CLASS),
            2,
            "option -o: must be yaml, json or summary",
            "-o",
            "xml",
            "-"),
        tc("2: no files", "", 2, "dra-alloc: missing FILE"),
        tc(
            "1: a tainted device is not allocated (DRADeviceTaints on by default)",
            docs(CLASS, TAINTED_SLICE, claim("a")),
            1,
            "ns/a: cannot allocate",
            "-"),
        tc(
            "0: --feature-gates=DRADeviceTaints=false ignores device taints, as upstream's gate",
            docs(CLASS, TAINTED_SLICE, claim("a")),
            0,
            "",
            "--feature-gates",
            "DRADeviceTaints=false",
            "-"),
        tc(
            "2: an unknown feature gate is named with those known",
            docs(CLASS),
            2,
            "dra-alloc: option --feature-gates: unrecognized feature gate: DRAFancy (known: "
                + "DRAAdminAccess,",
            "--feature-gates=DRAFancy=true",
            "-"),
        tc(
            "2: a feature gate without a bool",
            docs(CLASS),
            2,
            "dra-alloc: option --feature-gates: invalid value of DRAAdminAccess=yes",
            "--feature-gates=DRAAdminAccess=yes",
            "-"));
  }

  @ParameterizedTest(name = "{0}")
  @MethodSource("statuses")
  void exitStatus(String stdin, int status, String errContains, String[] args) {
    Run r = run(stdin, args);
    assertThat(r.status()).as(r.err()).isEqualTo(status);
    assertThat(r.err()).contains(errContains);
  }

  static final String EXTENDED_CLASS =
      CLASS.replace("spec:\n", "spec:\n  extendedResourceName: gpu.example.com/gpu\n");

  static final String TWO_GPU_SLICE =
      SLICE.replace("devices: [{name: gpu-0}]", "devices: [{name: gpu-0}, {name: gpu-1}]");

  /** A device-plugin-style pod: limits only, no resource claims. */
  static String gpuPod(String name, int gpus) {
    return """
        apiVersion: v1
        kind: Pod
        metadata: {name: %s, namespace: ns}
        spec:
          containers: [{name: c, image: x, resources: {limits: {gpu.example.com/gpu: %d}}}]
        """
        .formatted(name, gpus);
  }

  @Test
  void aDevicePluginStylePodGetsItsSpecialClaimAsKubeSchedulerWouldBuildIt() throws IOException {
    Run r = run(docs(EXTENDED_CLASS, TWO_GPU_SLICE, gpuPod("train", 2)), "-");
    assertThat(r.status()).as(r.err()).isZero();
    JsonNode item = r.yaml().path("items").get(0);
    assertThat(item.at("/metadata/name").asText()).isEqualTo("train-extended-resources");
    assertThat(
            item.at("/metadata/annotations")
                .path("resource.kubernetes.io/extended-resource-claim")
                .asText())
        .isEqualTo("true");
    assertThat(item.at("/spec/devices/requests/0/name").asText())
        .isEqualTo("container-0-request-0");
    assertThat(item.at("/spec/devices/requests/0/exactly/count").asLong()).isEqualTo(2);
    assertThat(item.at("/status/allocation/devices/results")).hasSize(2);
  }

  @Test
  void extendedResourcesBeyondTheDevicesAreNamedAndADevicePluginNodeNeedsNoClaim()
      throws IOException {
    Run tooMany = run(docs(EXTENDED_CLASS, TWO_GPU_SLICE, gpuPod("train", 3)), "-");
    assertThat(tooMany.status()).isEqualTo(1);
    assertThat(tooMany.err()).contains("ns/train-extended-resources: cannot allocate");

    String pluginNode =
        """
        apiVersion: v1
        kind: Node
        metadata: {name: node-p}
        status: {allocatable: {gpu.example.com/gpu: "4"}}
        """;
    Run plugin = run(docs(EXTENDED_CLASS, pluginNode, gpuPod("train", 3)), "-");
    assertThat(plugin.status()).as(plugin.err()).isZero();
    assertThat(plugin.yaml().path("items")).isEmpty();

    Run none = run(docs(CLASS, SLICE, gpuPod("train", 1)), "-");
    assertThat(none.status()).isEqualTo(1);
    assertThat(none.err())
        .contains(
            "ns/train: cannot schedule: 0/1 nodes fit its extended "
                + "resources: Insufficient gpu.example.com/gpu");
  }

  @Test
  void outputIsListOfPendingClaimsWithAllocation() throws IOException {
    Run r = run("", example("a100-or-2xl4"));
    assertThat(r.status()).as(r.err()).isZero();
    JsonNode list = r.yaml();
    assertThat(list.path("apiVersion").asText()).isEqualTo("v1");
    assertThat(list.path("kind").asText()).isEqualTo("List");
    assertThat(list.path("items")).hasSize(2); // in input order: training's claim, then inference's
    JsonNode item = list.path("items").get(1);
    assertThat(item.path("metadata").path("name").asText()).isEqualTo("inference");
    JsonNode results = item.path("status").path("allocation").path("devices").path("results");
    assertThat(results).hasSize(2);
    assertThat(results.get(0).path("request").asText()).isEqualTo("gpu/two-l4");
    assertThat(results.get(0).path("pool").asText()).isEqualTo("node-a");
    assertThat(
            item.path("status")
                .path("allocation")
                .path("nodeSelector")
                .path("nodeSelectorTerms")
                .get(0)
                .path("matchFields")
                .get(0)
                .path("values")
                .get(0)
                .asText())
        .isEqualTo("node-a");
  }

  @Test
  void templatesAreInstantiatedAsPodDashEntry() throws IOException {
    Run r = run("", example("a100-40gb-class"));
    assertThat(r.status()).as(r.err()).isZero();
    JsonNode item = r.yaml().path("items").get(0);
    assertThat(item.path("metadata").path("name").asText()).isEqualTo("trainer-gpu");
    assertThat(item.path("metadata").path("namespace").asText()).isEqualTo("ml");
    assertThat(
            item.path("status")
                .path("allocation")
                .path("devices")
                .path("results")
                .get(0)
                .path("pool")
                .asText())
        .isEqualTo("node-b");
  }

  @Test
  void earlierAllocationsConsumeDevicesForLaterOnes() throws IOException {
    Run r = run("", example("memory-filter"));
    assertThat(r.status()).as(r.err()).isZero();
    JsonNode items = r.yaml().path("items");
    assertThat(items.get(0).at("/status/allocation/devices/results/0/pool").asText())
        .isEqualTo("node-b");
    assertThat(items.get(1).at("/status/allocation/devices/results/0/pool").asText())
        .isEqualTo("node-c");
  }

  @Test
  void unallocatedClaimIsPrintedWithoutAllocation() throws IOException {
    Run r = run(docs(CLASS, SLICE, claim("a"), claim("b")), "-");
    JsonNode items = r.yaml().path("items");
    assertThat(items).hasSize(2);
    assertThat(items.get(0).path("status").path("allocation").isMissingNode()).isFalse();
    assertThat(items.get(1).path("status").path("allocation").isMissingNode()).isTrue();
  }

  @Test
  void jsonOutputAndKindListInput() throws IOException {
    String list =
        """
        {"apiVersion": "v1", "kind": "List", "items": [
          %s, %s, %s, {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "cm"}}]}
        """
            .formatted(toJson(CLASS), toJson(SLICE), toJson(claim("a")));
    Path file = Files.writeString(tmp.resolve("in.json"), list);
    Run r = run("", "-o", "json", file.toString());
    assertThat(r.status()).as(r.err()).isZero();
    assertThat(r.err()).contains("skipping ConfigMap cm");
    JsonNode out = new ObjectMapper().readTree(r.out());
    assertThat(out.at("/items/0/status/allocation/devices/results/0/device").asText())
        .isEqualTo("gpu-0");
  }

  @Test
  void nodeOptionRestrictsNodes() {
    Run r = run(docs(CLASS, SLICE, claim("a")), "--node", "node-b", "-");
    assertThat(r.status()).isEqualTo(1);
    assertThat(r.err())
        .contains(
            "ns/a: cannot allocate: request \"gpu\": 1 device in class "
                + "\"gpu\", 1 free; enough free devices exist, but not on any one node; 1 node tried");
  }

  @Test
  void summaryPrintsOneLinePerAllocatedClaimAndExplainsTheRest() throws IOException {
    Run r = run(docs(CLASS, SLICE, claim("a"), claim("b")), "-o", "summary", "-");
    assertThat(r.status()).isEqualTo(1);
    assertThat(r.out().lines())
        .containsExactly("ns/a -> node-a: gpu (gpu.example.com/node-a/gpu-0)");
    assertThat(r.err()).contains("ns/b: cannot allocate: request \"gpu\"");
  }

  @Test
  void summaryOfTheFallbackExample() throws IOException {
    Run r = run("", concat(new String[] {"-o", "summary"}, example("a100-or-2xl4")));
    assertThat(r.status()).as(r.err()).isZero();
    assertThat(r.out().lines())
        .isNotEmpty()
        .allMatch(line -> line.matches("\\S+/\\S+ -> \\S+: .+"));
  }

  /** A slice with {@code gpus} GPUs on {@code node}, its own pool. */
  static String slice(String node, int gpus) {
    StringBuilder devices = new StringBuilder();
    for (int i = 0; i < gpus; i++) {
      devices.append(i == 0 ? "" : ", ").append("{name: gpu-").append(i).append('}');
    }
    return """
        apiVersion: resource.k8s.io/v1
        kind: ResourceSlice
        metadata: {name: %1$s}
        spec:
          driver: gpu.example.com
          nodeName: %1$s
          pool: {name: %1$s, generation: 1, resourceSliceCount: 1}
          devices: [%2$s]
        """
        .formatted(node, devices);
  }

  /** A claim allocated before the run: device {@code gpu-0} of {@code node}, pinned there. */
  static String pinned(String name, String node) {
    return claim(name)
        + """
        status:
          allocation:
            devices:
              results: [{request: gpu, driver: gpu.example.com, pool: %1$s, device: gpu-0}]
            nodeSelector:
              nodeSelectorTerms: [{matchFields: [{key: metadata.name, operator: In, values: [%1$s]}]}]
        """
            .formatted(node);
  }

  /** A pod using the named claims, in namespace ns; {@code spec} adds to its spec. */
  static String pod(String name, String spec, String... claims) {
    StringBuilder refs = new StringBuilder();
    for (int i = 0; i < claims.length; i++) {
      refs.append(i == 0 ? "" : ", ")
          .append("{name: c")
          .append(i)
          .append(", resourceClaimName: ")
          .append(claims[i])
          .append('}');
    }
    return """
        apiVersion: v1
        kind: Pod
        metadata: {name: %s, namespace: ns}
        spec:
          resourceClaims: [%s]
          containers: [{name: c, image: x}]
        %s"""
        .formatted(name, refs, spec.isEmpty() ? "" : "  " + spec + "\n");
  }

  static Stream<Arguments> allocatedClaims() {
    return Stream.of(
        // the shared claim takes node-a's only GPU for p1: p2 must stay on node-a, where its
        // own claim finds no GPU, not move to node-b
        arguments(
            named(
                "a shared claim allocated by an earlier pod pins the next pod",
                docs(
                    CLASS,
                    slice("node-a", 1),
                    slice("node-b", 1),
                    claim("shared"),
                    claim("own"),
                    pod("p1", "", "shared"),
                    pod("p2", "", "shared", "own"))),
            1,
            List.of("ns/shared -> node-a: gpu (gpu.example.com/node-a/gpu-0)"),
            "ns/own: cannot allocate: "),
        arguments(
            named(
                "a shared claim allocated in the input pins the pod to a full node",
                docs(
                    CLASS,
                    slice("node-a", 1),
                    slice("node-b", 1),
                    pinned("shared", "node-a"),
                    claim("own"),
                    pod("p2", "", "shared", "own"))),
            1,
            List.of(),
            "ns/own: cannot allocate: "),
        arguments(
            named(
                "a pinned claim puts the pod's new claim on the pinned node",
                docs(
                    CLASS,
                    slice("node-a", 2),
                    slice("node-b", 2),
                    pinned("pinned", "node-b"),
                    claim("new"),
                    pod("p", "", "pinned", "new"))),
            0,
            List.of("ns/new -> node-b: gpu (gpu.example.com/node-b/gpu-1)"),
            ""),
        arguments(
            named(
                "a pod restricted to node-b cannot use a claim pinned to node-a",
                docs(
                    CLASS,
                    slice("node-a", 1),
                    slice("node-b", 1),
                    pinned("shared", "node-a"),
                    pod("p", "nodeName: node-b", "shared"))),
            1,
            List.of(),
            "ns/p: cannot schedule: "),
        arguments(
            named(
                "a pod restricted to node-b gets no new claim beside one pinned to node-a",
                docs(
                    CLASS,
                    slice("node-a", 1),
                    slice("node-b", 1),
                    pinned("shared", "node-a"),
                    claim("new"),
                    pod(
                        "p",
                        "affinity: {nodeAffinity: {requiredDuringSchedulingIgnoredDuringExecution: "
                            + "{nodeSelectorTerms: [{matchFields: [{key: metadata.name, operator: In, "
                            + "values: [node-b]}]}]}}}",
                        "shared",
                        "new"))),
            1,
            List.of(),
            "ns/new: cannot allocate: "));
  }

  @ParameterizedTest(name = "{0}")
  @MethodSource("allocatedClaims")
  void allocatedClaimsRestrictThePodsNode(
      String stdin, int status, List<String> summary, String errContains) {
    Run r = run(stdin, "-o", "summary", "-");
    assertThat(r.status()).as(r.err()).isEqualTo(status);
    assertThat(r.out().lines()).containsExactlyElementsOf(summary);
    assertThat(r.err()).contains(errContains);
  }

  @Test
  void claimWithoutNamespaceIsNamedInTheDefaultNamespace() {
    String a = claim("a").replace(", namespace: ns", "");
    String b = claim("b").replace(", namespace: ns", "");
    Run r = run(docs(CLASS, SLICE, a, b), "-o", "summary", "-");
    assertThat(r.status()).isEqualTo(1);
    assertThat(r.out().lines())
        .containsExactly("default/a -> node-a: gpu (gpu.example.com/node-a/gpu-0)");
    assertThat(r.err()).contains("default/b: cannot allocate: ").doesNotContain("null/");
  }

  private static String[] concat(String[] a, String[] b) {
    String[] all = new String[a.length + b.length];
    System.arraycopy(a, 0, all, 0, a.length);
    System.arraycopy(b, 0, all, a.length, b.length);
    return all;
  }

  static String toJson(String yaml) throws IOException {
    return new ObjectMapper()
        .writeValueAsString(new ObjectMapper(new YAMLFactory()).readTree(yaml));
  }
}
