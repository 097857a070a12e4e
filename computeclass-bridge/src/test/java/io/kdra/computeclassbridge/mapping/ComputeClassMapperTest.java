package io.kdra.computeclassbridge.mapping;

import static io.kdra.computeclassbridge.TestData.a100OrTwoL4;
import static io.kdra.computeclassbridge.TestData.computeClass;
import static io.kdra.computeclassbridge.TestData.defaultCatalog;
import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Named.named;

import io.fabric8.kubernetes.api.model.resource.v1.DeviceClass;
import io.fabric8.kubernetes.api.model.resource.v1.DeviceSubRequest;
import io.fabric8.kubernetes.api.model.resource.v1.ResourceClaimTemplate;
import io.kdra.computeclassbridge.model.ComputeClass;
import io.kdra.computeclassbridge.model.Gpu;
import io.kdra.computeclassbridge.model.Priority;
import io.kdra.computeclassbridge.model.Tpu;
import io.kdra.core.validation.Validator;
import java.util.List;
import java.util.stream.IntStream;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

class ComputeClassMapperTest {

  private static final ComputeClassMapper MAPPER = new ComputeClassMapper(MapperSettings.DEFAULTS);

  private static Mapping map(ComputeClass cc) {
    return MAPPER.map(cc, defaultCatalog(), List.of("team-a"));
  }

  /** "name:class:count" per subrequest of the (single) template's (single) request. */
  private static List<String> subrequests(Mapping m) {
    return m
        .templates()
        .get(0)
        .getSpec()
        .getSpec()
        .getDevices()
        .getRequests()
        .get(0)
        .getFirstAvailable()
        .stream()
        .map(s -> s.getName() + ":" + s.getDeviceClassName() + ":" + s.getCount())
        .toList();
  }

  static Priority both() {
    Priority p = Priority.gpu("nvidia-l4", 1);
    p.setTpu(new Tpu("tpu-v6e-slice", 4, null));
    return p;
  }

  static Priority gpuWithoutType() {
    Priority p = new Priority();
    p.setGpu(new Gpu(null, 1));
    return p;
  }

  static Priority gpuWithoutCount() {
    Priority p = new Priority();
    p.setGpu(new Gpu("nvidia-l4", null));
    return p;
  }

  static Stream<Arguments> cases() {
    return Stream.of(
        Arguments.of(
            named("the seed: one A100 40GB, else two L4s", a100OrTwoL4("cc")),
            List.of(
                "nvidia-tesla-a100-x1:nvidia-tesla-a100.computeclass.kdra.io:1",
                "nvidia-l4-x2:nvidia-l4.computeclass.kdra.io:2"),
            List.of(),
            List.of()),
        Arguments.of(
            named(
                "reordered priorities reorder subrequests, names unchanged",
                computeClass(
                    "cc", Priority.gpu("nvidia-l4", 2), Priority.gpu("nvidia-tesla-a100", 1))),
            List.of(
                "nvidia-l4-x2:nvidia-l4.computeclass.kdra.io:2",
                "nvidia-tesla-a100-x1:nvidia-tesla-a100.computeclass.kdra.io:1"),
            List.of(),
            List.of()),
        Arguments.of(
            named(
                "a priority without accelerator is skipped and said so",
                computeClass("cc", Priority.gpu("nvidia-l4", 1), Priority.machineFamily("n2"))),
            List.of("nvidia-l4-x1:nvidia-l4.computeclass.kdra.io:1"),
            List.of(
                "spec.priorities[1] (machineFamily n2): no gpu or tpu, nothing to request through DRA"),
            List.of()),
        Arguments.of(
            named(
                "an unknown type degrades, naming the priority",
                computeClass(
                    "cc", Priority.gpu("nvidia-tesla-a100", 1), Priority.gpu("nvidia-a1000", 1))),
            List.of("nvidia-tesla-a100-x1:nvidia-tesla-a100.computeclass.kdra.io:1"),
            List.of(),
            List.of(
                "spec.priorities[1] (gpu nvidia-a1000 x1): unknown accelerator type nvidia-a1000; "
                    + "the catalog knows [nvidia-a100-80gb, nvidia-b200, nvidia-h100-80gb, "
                    + "nvidia-h100-mega-80gb, nvidia-h200-141gb, nvidia-l4, nvidia-rtx-pro-6000, "
                    + "nvidia-tesla-a100, nvidia-tesla-p100, nvidia-tesla-p4, nvidia-tesla-t4, "
                    + "nvidia-tesla-v100]")),
        Arguments.of(
            named(
                "a TPU type under gpu",
                computeClass("cc", Priority.gpu("tpu-v6e-slice", 1), Priority.gpu("nvidia-l4", 1))),
            List.of("nvidia-l4-x1:nvidia-l4.computeclass.kdra.io:1"),
            List.of(),
            List.of(
                "spec.priorities[0] (gpu tpu-v6e-slice x1): tpu-v6e-slice is a tpu type, not a gpu type")),
        Arguments.of(
            named("gpu and tpu in one priority", computeClass("cc", both())),
            List.of(),
            List.of(),
            List.of("spec.priorities[0] (gpu nvidia-l4 x1): names both gpu and tpu")),
        Arguments.of(
            named("gpu without type", computeClass("cc", gpuWithoutType())),
            List.of(),
            List.of(),
            List.of("spec.priorities[0] (gpu null x1): gpu.type is required")),
        Arguments.of(
            named("gpu without count means one", computeClass("cc", gpuWithoutCount())),
            List.of("nvidia-l4-x1:nvidia-l4.computeclass.kdra.io:1"),
            List.of(),
            List.of()),
        Arguments.of(
            named(
                "count beyond what a claim can hold",
                computeClass("cc", Priority.gpu("nvidia-l4", 33), Priority.gpu("nvidia-l4", 0))),
            List.of(),
            List.of(),
            List.of(
                "spec.priorities[0] (gpu nvidia-l4 x33): gpu.count must be between 1 and 32, is 33",
                "spec.priorities[1] (gpu nvidia-l4 x0): gpu.count must be between 1 and 32, is 0")),
        Arguments.of(
            named(
                "the same devices twice (e.g. spot, then on-demand) are tried once",
                computeClass(
                    "cc",
                    Priority.gpu("nvidia-l4", 2),
                    Priority.gpu("nvidia-l4", 2),
                    Priority.gpu("nvidia-l4", 1))),
            List.of(
                "nvidia-l4-x2:nvidia-l4.computeclass.kdra.io:2",
                "nvidia-l4-x1:nvidia-l4.computeclass.kdra.io:1"),
            List.of(
                "spec.priorities[1] (gpu nvidia-l4 x2): asks for the same devices as spec.priorities[0]"),
            List.of()),
        Arguments.of(
            named(
                "TPU with topology",
                computeClass("cc", Priority.tpu("tpu-v5-lite-podslice", 4, "2x2"))),
            List.of("tpu-v5-lite-podslice-x4-2x2:tpu-v5-lite-podslice.computeclass.kdra.io:4"),
            List.of(),
            List.of()),
        Arguments.of(
            named(
                "TPU with a malformed topology",
                computeClass("cc", Priority.tpu("tpu-v5-lite-podslice", 4, "two by two"))),
            List.of(),
            List.of(),
            List.of(
                "spec.priorities[0] (tpu tpu-v5-lite-podslice x4 two by two): "
                    + "tpu.topology must look like 2x4 or 2x2x1, got two by two")),
        Arguments.of(
            named(
                "nine alternatives: the ninth is left out",
                computeClass(
                    "cc",
                    IntStream.rangeClosed(1, 9)
                        .mapToObj(n -> Priority.gpu("nvidia-l4", n))
                        .toArray(Priority[]::new))),
            IntStream.rangeClosed(1, 8)
                .mapToObj(n -> "nvidia-l4-x" + n + ":nvidia-l4.computeclass.kdra.io:" + n)
                .toList(),
            List.of(),
            List.of(
                "spec.priorities[8] (gpu nvidia-l4 x9): left out, a request takes at most 8 "
                    + "alternatives (firstAvailable)")));
  }

  @ParameterizedTest(name = "{0}")
  @MethodSource("cases")
  void mapsPrioritiesToSubrequestsInOrder(
      ComputeClass cc,
      List<String> expectedSubrequests,
      List<String> expectedSkipped,
      List<String> expectedProblems) {
    Mapping m = map(cc);
    assertThat(m.skipped())
        .extracting(PriorityNote::message)
        .containsExactlyElementsOf(expectedSkipped);
    assertThat(m.problems())
        .extracting(PriorityNote::message)
        .containsExactlyElementsOf(expectedProblems);
    if (expectedSubrequests.isEmpty()) {
      assertThat(m.templates()).isEmpty();
      assertThat(m.deviceClasses()).isEmpty();
      return;
    }
    assertThat(subrequests(m)).containsExactlyElementsOf(expectedSubrequests);
    assertThat(m.deviceClasses())
        .extracting(d -> d.getMetadata().getName())
        .containsExactlyElementsOf(
            m.alternatives().stream()
                .map(Alternative::deviceClassName)
                .distinct()
                .sorted()
                .toList());
    for (DeviceClass dc : m.deviceClasses()) {
      assertThat(Validator.validate(dc)).as(dc.getMetadata().getName()).isEmpty();
    }
    for (ResourceClaimTemplate t : m.templates()) {
      assertThat(Validator.validate(t)).isEmpty();
    }
  }

  @Test
  void oneTemplatePerNamespaceNamedAfterTheComputeClassAndLabelled() {
    ComputeClass cc = a100OrTwoL4("a100-or-l4");
    Mapping m = MAPPER.map(cc, defaultCatalog(), List.of("team-b", "team-a", "team-b"));
    assertThat(m.templates())
        .extracting(t -> t.getMetadata().getNamespace())
        .containsExactly("team-a", "team-b");
    ResourceClaimTemplate t = m.templates().get(0);
    assertThat(t.getMetadata().getName()).isEqualTo("a100-or-l4");
    assertThat(t.getMetadata().getLabels())
        .containsEntry(Labels.MANAGED_BY, Labels.MANAGER)
        .containsEntry(Labels.COMPUTE_CLASS, "a100-or-l4");
    assertThat(t.getSpec().getMetadata().getLabels())
        .containsEntry(Labels.COMPUTE_CLASS, "a100-or-l4");
    assertThat(t.getMetadata().getOwnerReferences())
        .singleElement()
        .satisfies(
            o -> {
              assertThat(o.getKind()).isEqualTo("ComputeClass");
              assertThat(o.getApiVersion()).isEqualTo("cloud.google.com/v1");
              assertThat(o.getUid()).isEqualTo("uid-a100-or-l4");
              assertThat(o.getController()).isNull();
            });
    assertThat(t.getSpec().getSpec().getDevices().getRequests())
        .singleElement()
        .satisfies(
            r -> {
              assertThat(r.getName()).isEqualTo("accelerator");
              assertThat(r.getExactly()).isNull();
              assertThat(r.getFirstAvailable())
                  .extracting(DeviceSubRequest::getAllocationMode)
                  .containsOnly("ExactCount");
            });
  }

  @Test
  void deviceClassesSayWhichAcceleratorAndWhichComputeClass() {
    DeviceClass l4 = map(a100OrTwoL4("a100-or-l4")).deviceClasses().get(0);
    assertThat(l4.getMetadata().getName()).isEqualTo("nvidia-l4.computeclass.kdra.io");
    assertThat(l4.getMetadata().getLabels())
        .containsEntry(Labels.MANAGED_BY, Labels.MANAGER)
        .containsEntry(Labels.ACCELERATOR, "nvidia-l4")
        .containsEntry("used-by.computeclass.kdra.io/a100-or-l4", "");
    assertThat(l4.getSpec().getSelectors())
        .singleElement()
        .satisfies(
            s ->
                assertThat(s.getCel().getExpression())
                    .startsWith("device.driver == \"gpu.kdra.io\" && (")
                    .contains("\"NVIDIA L4\""));
  }

  @Test
  void tpuTopologyBecomesASubrequestSelector() {
    Mapping m = map(computeClass("cc", Priority.tpu("tpu-v5-lite-podslice", 4, "2x2")));
    DeviceSubRequest s =
        m.templates()
            .get(0)
            .getSpec()
            .getSpec()
            .getDevices()
            .getRequests()
            .get(0)
            .getFirstAvailable()
            .get(0);
    assertThat(s.getSelectors())
        .singleElement()
        .satisfies(sel -> assertThat(sel.getCel().getExpression()).contains("== \"2x2\""));
  }

  @Test
  void noNamespacesMeansDeviceClassesButNoTemplates() {
    Mapping m = MAPPER.map(a100OrTwoL4("cc"), defaultCatalog(), List.of());
    assertThat(m.templates()).isEmpty();
    assertThat(m.deviceClasses()).hasSize(2);
  }

  @Test
  void pure_equalInputsGiveEqualOutputs() {
    assertThat(map(a100OrTwoL4("cc"))).isEqualTo(map(a100OrTwoL4("cc")));
  }

  @Test
  void longNamesAreShortenedForLabelsButStayDistinct() {
    String longName = "a".repeat(70);
    String other = "a".repeat(69) + "b";
    assertThat(Labels.value(longName)).hasSize(63).isNotEqualTo(Labels.value(other));
    assertThat(Labels.value("short")).isEqualTo("short");
  }
}
