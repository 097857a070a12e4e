package io.kdra.computeclassbridge.scaleout;

import static io.kdra.computeclassbridge.TestData.computeClass;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.junit.jupiter.api.Named.named;

import io.fabric8.kubernetes.api.model.GenericKubernetesResource;
import io.kdra.computeclassbridge.mapping.PriorityNote;
import io.kdra.computeclassbridge.model.ComputeClass;
import io.kdra.computeclassbridge.model.Priority;
import java.util.List;
import java.util.Map;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

class NodePoolMapperTest {

  private static final ScaleOutSettings SETTINGS =
      new ScaleOutSettings(
          InstanceType.parse(
              List.of(
                  "a100-40gb-x1=nvidia-tesla-a100:1",
                  "a2-highgpu-1g=nvidia-tesla-a100:1",
                  "a100-40gb-x2=nvidia-tesla-a100:2",
                  "l4-x2=nvidia-l4:2",
                  "l4-x1=nvidia-l4:1",
                  "v5e-2x2=tpu-v5-lite-podslice:4")),
          "karpenter.kwok.sh",
          "KWOKNodeClass",
          "default");

  private static final NodePoolMapper MAPPER = new NodePoolMapper(SETTINGS);

  static Priority spot(Priority p) {
    p.setAdditional("spot", true);
    return p;
  }

  static Priority gpuWithoutCount(String type) {
    Priority p = new Priority();
    p.setGpu(new io.kdra.computeclassbridge.model.Gpu(type, null));
    return p;
  }

  static ComputeClass whenUnsatisfiable(String value, Priority... priorities) {
    ComputeClass cc = computeClass("cc", priorities);
    cc.getSpec().setAdditional("whenUnsatisfiable", value);
    return cc;
  }

  /** "name weight instance-types capacity-type" per NodePool, in weight order. */
  static List<String> summary(NodePoolPlan plan) {
    return plan.nodePools().stream()
        .sorted((a, b) -> Integer.compare(weight(b), weight(a)))
        .map(
            np ->
                np.getMetadata().getName()
                    + " "
                    + weight(np)
                    + " "
                    + values(np, NodePoolMapper.INSTANCE_TYPE)
                    + " "
                    + values(np, NodePoolMapper.CAPACITY_TYPE))
        .toList();
  }

  static Stream<Arguments> mappings() {
    return Stream.of(
        Arguments.of(
            named(
                "the seed: one A100, else two L4s",
                computeClass(
                    "cc", Priority.gpu("nvidia-tesla-a100", 1), Priority.gpu("nvidia-l4", 2))),
            List.of(
                "cc-nvidia-tesla-a100-x1 100 [a100-40gb-x1, a2-highgpu-1g] [on-demand]",
                "cc-nvidia-l4-x2 99 [l4-x2] [on-demand]"),
            List.of()),
        Arguments.of(
            named(
                "reordered: the same names, weights swapped",
                computeClass(
                    "cc", Priority.gpu("nvidia-l4", 2), Priority.gpu("nvidia-tesla-a100", 1))),
            List.of(
                "cc-nvidia-l4-x2 100 [l4-x2] [on-demand]",
                "cc-nvidia-tesla-a100-x1 99 [a100-40gb-x1, a2-highgpu-1g] [on-demand]"),
            List.of()),
        Arguments.of(
            named(
                "count selects the machines: two A100s per node",
                computeClass("cc", Priority.gpu("nvidia-tesla-a100", 2))),
            List.of("cc-nvidia-tesla-a100-x2 100 [a100-40gb-x2] [on-demand]"),
            List.of()),
        Arguments.of(
            named("no count means one", computeClass("cc", gpuWithoutCount("nvidia-l4"))),
            List.of("cc-nvidia-l4-x1 100 [l4-x1] [on-demand]"),
            List.of()),
        Arguments.of(
            named(
                "spot first, then the same on demand: two NodePools",
                computeClass(
                    "cc", spot(Priority.gpu("nvidia-l4", 1)), Priority.gpu("nvidia-l4", 1))),
            List.of(
                "cc-nvidia-l4-x1-spot 100 [l4-x1] [spot]",
                "cc-nvidia-l4-x1 99 [l4-x1] [on-demand]"),
            List.of()),
        Arguments.of(
            named(
                "a TPU priority",
                computeClass("cc", Priority.tpu("tpu-v5-lite-podslice", 4, "2x2"))),
            List.of("cc-tpu-v5-lite-podslice-x4 100 [v5e-2x2] [on-demand]"),
            List.of()),
        Arguments.of(
            named(
                "no machines for a priority: a problem, the next keeps its place",
                computeClass(
                    "cc", Priority.gpu("nvidia-h100-80gb", 8), Priority.gpu("nvidia-l4", 2))),
            List.of("cc-nvidia-l4-x2 100 [l4-x2] [on-demand]"),
            List.of("spec.priorities[0]: no instance type has 8 x nvidia-h100-80gb")),
        Arguments.of(
            named(
                "ScaleUpAnyway adds a last NodePool without accelerator",
                whenUnsatisfiable("ScaleUpAnyway", Priority.gpu("nvidia-l4", 2))),
            List.of("cc-nvidia-l4-x2 100 [l4-x2] [on-demand]", "cc-anyway 1 [] [on-demand]"),
            List.of()),
        Arguments.of(
            named(
                "DoNotScaleUp adds none",
                whenUnsatisfiable("DoNotScaleUp", Priority.gpu("nvidia-l4", 2))),
            List.of("cc-nvidia-l4-x2 100 [l4-x2] [on-demand]"),
            List.of()),
        Arguments.of(
            named("machine family only: skipped", computeClass("cc", Priority.machineFamily("n2"))),
            List.of(),
            List.of()));
  }

  @ParameterizedTest
  @MethodSource("mappings")
  void prioritiesBecomeWeightedNodePools(
      ComputeClass cc, List<String> expected, List<String> problemStarts) {
    NodePoolPlan plan = MAPPER.plan(cc);
    assertThat(summary(plan)).containsExactlyElementsOf(expected);
    assertThat(plan.problems()).hasSameSizeAs(problemStarts);
    for (int i = 0; i < problemStarts.size(); i++) {
      assertThat(plan.problems().get(i).message()).startsWith(problemStarts.get(i));
    }
  }

  @Test
  void repeatedMachinesAreSkippedNotDuplicated() {
    NodePoolPlan plan =
        MAPPER.plan(
            computeClass(
                "cc",
                Priority.gpu("nvidia-l4", 2),
                Priority.machineFamily("n2"),
                Priority.gpu("nvidia-l4", 2)));
    assertThat(summary(plan)).containsExactly("cc-nvidia-l4-x2 100 [l4-x2] [on-demand]");
    assertThat(plan.skipped()).extracting(PriorityNote::priority).containsExactly(1, 2);
    assertThat(plan.skipped().get(1).message()).contains("same machines as spec.priorities[0]");
  }

  @Test
  void eachNodePoolIsOwnedLabelledAndRefersToTheNodeClass() {
    GenericKubernetesResource np =
        MAPPER.plan(computeClass("seed", Priority.gpu("nvidia-l4", 2))).nodePools().get(0);
    assertThat(np.getApiVersion()).isEqualTo("karpenter.sh/v1");
    assertThat(np.getKind()).isEqualTo("NodePool");
    assertThat(np.getMetadata().getOwnerReferences())
        .singleElement()
        .satisfies(
            o -> {
              assertThat(o.getKind()).isEqualTo("ComputeClass");
              assertThat(o.getName()).isEqualTo("seed");
              assertThat(o.getUid()).isEqualTo("uid-seed");
            });
    assertThat(np.getMetadata().getLabels())
        .containsEntry("app.kubernetes.io/managed-by", "kdra-computeclass-bridge")
        .containsEntry("computeclass.kdra.io/name", "seed");
    Map<String, Object> template = map(spec(np).get("template"));
    assertThat(map(map(template.get("metadata")).get("labels")))
        .containsEntry("cloud.google.com/compute-class", "seed");
    assertThat(map(map(template.get("spec")).get("nodeClassRef")))
        .isEqualTo(
            Map.of("group", "karpenter.kwok.sh", "kind", "KWOKNodeClass", "name", "default"));
  }

  @Test
  void equalInputsGiveEqualNodePools() {
    ComputeClass cc =
        computeClass("cc", Priority.gpu("nvidia-tesla-a100", 1), Priority.gpu("nvidia-l4", 2));
    assertThat(MAPPER.plan(cc)).isEqualTo(MAPPER.plan(cc));
  }

  @Test
  void longNamesStayValidNodeLabels() {
    String longName = "a".repeat(70);
    GenericKubernetesResource np =
        MAPPER.plan(computeClass(longName, Priority.gpu("nvidia-l4", 2))).nodePools().get(0);
    assertThat(np.getMetadata().getName()).hasSizeLessThanOrEqualTo(63);
  }

  static Stream<Arguments> badEntries() {
    return Stream.of(
        Arguments.of("l4-x2", "is not <instance type>=<accelerator type>:<count>"),
        Arguments.of("l4-x2=nvidia-l4", "is not <instance type>=<accelerator type>:<count>"),
        Arguments.of("=nvidia-l4:2", "is not <instance type>=<accelerator type>:<count>"),
        Arguments.of("l4-x2=nvidia-l4:two", "not a whole number"),
        Arguments.of("l4-x0=nvidia-l4:0", "at least 1"));
  }

  @ParameterizedTest
  @MethodSource("badEntries")
  void instanceTypeEntriesThatAreNotOfTheFormAreRefused(String entry, String message) {
    assertThatThrownBy(() -> InstanceType.parse(List.of(entry)))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining(message);
  }

  @Test
  void instanceTypeNamesMayHaveDotsAndColonsAreTakenFromTheEnd() {
    assertThat(InstanceType.parse(List.of(" p4d.24xlarge = nvidia-tesla-a100:8 ")))
        .containsExactly(new InstanceType("p4d.24xlarge", "nvidia-tesla-a100", 8));
  }

  private static int weight(GenericKubernetesResource np) {
    return ((Number) spec(np).get("weight")).intValue();
  }

  private static List<String> values(GenericKubernetesResource np, String key) {
    List<Object> requirements =
        (List<Object>) map(map(spec(np).get("template")).get("spec")).get("requirements");
    return requirements.stream()
        .map(NodePoolMapperTest::map)
        .filter(r -> key.equals(r.get("key")))
        .findFirst()
        .map(r -> (List<String>) r.get("values"))
        .orElse(List.of());
  }

  private static Map<String, Object> spec(GenericKubernetesResource np) {
    return map(np.getAdditionalProperties().get("spec"));
  }

  @SuppressWarnings("unchecked")
  private static Map<String, Object> map(Object o) {
    return (Map<String, Object>) o;
  }
}
