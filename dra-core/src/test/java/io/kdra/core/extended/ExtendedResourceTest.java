package io.kdra.core.extended;

import static org.assertj.core.api.Assertions.assertThat;

import io.fabric8.kubernetes.api.model.Container;
import io.fabric8.kubernetes.api.model.ContainerBuilder;
import io.fabric8.kubernetes.api.model.ContainerExtendedResourceRequest;
import io.fabric8.kubernetes.api.model.Node;
import io.fabric8.kubernetes.api.model.NodeBuilder;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.PodBuilder;
import io.fabric8.kubernetes.api.model.Quantity;
import io.fabric8.kubernetes.api.model.resource.v1.DeviceClass;
import io.fabric8.kubernetes.api.model.resource.v1.DeviceClassBuilder;
import io.fabric8.kubernetes.api.model.resource.v1.ResourceClaim;
import io.kdra.core.extended.ExtendedResourceFit.NodeFit;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

class ExtendedResourceTest {

  private static final String GPU = "gpu.kdra.io/gpu";

  static DeviceClass cls(String name, String extended, String created) {
    return new DeviceClassBuilder()
        .withNewMetadata()
        .withName(name)
        .withCreationTimestamp(created)
        .endMetadata()
        .withNewSpec()
        .withExtendedResourceName(extended)
        .endSpec()
        .build();
  }

  static Stream<Arguments> classCases() {
    String t1 = "2026-01-01T00:00:00Z";
    String t2 = "2026-01-02T00:00:00Z";
    return Stream.of(
        Arguments.of("explicit name", List.of(cls("gpu", GPU, t1)), GPU, "gpu"),
        Arguments.of(
            "implicit name",
            List.of(cls("gpu", null, t1)),
            "deviceclass.resource.kubernetes.io/gpu",
            "gpu"),
        Arguments.of(
            "implicit name kept beside an explicit one",
            List.of(cls("gpu", GPU, t1)),
            "deviceclass.resource.kubernetes.io/gpu",
            "gpu"),
        Arguments.of("unknown name", List.of(cls("gpu", GPU, t1)), "example.com/other", null),
        Arguments.of(
            "duplicate: newest wins",
            List.of(cls("a-old", GPU, t1), cls("z-new", GPU, t2)),
            GPU,
            "z-new"),
        Arguments.of(
            "duplicate: newest wins in any order",
            List.of(cls("z-new", GPU, t2), cls("a-old", GPU, t1)),
            GPU,
            "z-new"),
        Arguments.of(
            "duplicate, same time: lexicographically first",
            List.of(cls("b", GPU, t1), cls("a", GPU, t1), cls("c", GPU, t1)),
            GPU,
            "a"),
        Arguments.of(
            "loser keeps its implicit name",
            List.of(cls("a-old", GPU, t1), cls("z-new", GPU, t2)),
            "deviceclass.resource.kubernetes.io/a-old",
            "a-old"),
        Arguments.of(
            "no timestamp counts as oldest",
            List.of(cls("a", GPU, null), cls("b", GPU, t1)),
            GPU,
            "b"));
  }

  @ParameterizedTest(name = "{0}")
  @MethodSource("classCases")
  void classForName(String name, List<DeviceClass> classes, String resource, String expected) {
    assertThat(
            ExtendedResourceClasses.of(classes)
                .classFor(resource)
                .map(c -> c.getMetadata().getName())
                .orElse(null))
        .isEqualTo(expected);
  }

  static Container c(String name, Map<String, String> requests, Map<String, String> limits) {
    ContainerBuilder b = new ContainerBuilder().withName(name).withNewResources().endResources();
    requests.forEach((k, v) -> b.editResources().addToRequests(k, new Quantity(v)).endResources());
    limits.forEach((k, v) -> b.editResources().addToLimits(k, new Quantity(v)).endResources());
    return b.build();
  }

  static Container gpus(String name, String n) {
    return c(name, Map.of(), Map.of(GPU, n));
  }

  static Container sidecar(Container c) {
    return new ContainerBuilder(c).withRestartPolicy("Always").build();
  }

  static Pod pod(List<Container> init, List<Container> containers) {
    return new PodBuilder()
        .withNewMetadata()
        .withName("p")
        .withNamespace("ns")
        .withUid("u1")
        .endMetadata()
        .withNewSpec()
        .withInitContainers(init)
        .withContainers(containers)
        .endSpec()
        .build();
  }

  static Stream<Arguments> requestCases() {
    return Stream.of(
        Arguments.of(
            "limits only: defaulted to requests",
            pod(List.of(), List.of(gpus("a", "2"))),
            Map.of(GPU, 2L)),
        Arguments.of(
            "requests win over limits",
            pod(List.of(), List.of(c("a", Map.of(GPU, "1"), Map.of(GPU, "1")))),
            Map.of(GPU, 1L)),
        Arguments.of(
            "containers summed",
            pod(List.of(), List.of(gpus("a", "2"), gpus("b", "1"))),
            Map.of(GPU, 3L)),
        Arguments.of(
            "init container's peak when higher",
            pod(List.of(gpus("i", "4")), List.of(gpus("a", "1"))),
            Map.of(GPU, 4L)),
        Arguments.of(
            "init container below the containers",
            pod(List.of(gpus("i", "1")), List.of(gpus("a", "2"))),
            Map.of(GPU, 2L)),
        Arguments.of(
            "sidecar added to containers and later init containers",
            pod(List.of(sidecar(gpus("s", "1")), gpus("i", "2")), List.of(gpus("a", "1"))),
            Map.of(GPU, 3L)),
        Arguments.of(
            "native resources and zeros left out",
            pod(
                List.of(),
                List.of(
                    c(
                        "a",
                        Map.of("cpu", "1", "example.com/x", "0", "hugepages-2Mi", "1"),
                        Map.of()))),
            Map.of()));
  }

  @ParameterizedTest(name = "{0}")
  @MethodSource("requestCases")
  void podRequests(String name, Pod pod, Map<String, Long> expected) {
    assertThat(ExtendedResourceRequests.of(pod)).isEqualTo(expected);
  }

  @Test
  void extendedResourceNames() {
    assertThat(ExtendedResourceRequests.isExtendedResourceName(GPU)).isTrue();
    assertThat(
            ExtendedResourceRequests.isExtendedResourceName(
                "deviceclass.resource.kubernetes.io/gpu"))
        .isTrue();
    assertThat(ExtendedResourceRequests.isExtendedResourceName("cpu")).isFalse();
    assertThat(ExtendedResourceRequests.isExtendedResourceName("kubernetes.io/x")).isFalse();
    assertThat(ExtendedResourceRequests.isExtendedResourceName("a.kubernetes.io/x")).isFalse();
    assertThat(ExtendedResourceRequests.isExtendedResourceName("requests.example.com/x")).isFalse();
  }

  static Node node(Map<String, String> allocatable) {
    NodeBuilder b =
        new NodeBuilder().withNewMetadata().withName("n").endMetadata().withNewStatus().endStatus();
    allocatable.forEach((k, v) -> b.editStatus().addToAllocatable(k, new Quantity(v)).endStatus());
    return b.build();
  }

  static Stream<Arguments> fitCases() {
    ExtendedResourceClasses served = ExtendedResourceClasses.of(List.of(cls("gpu", GPU, null)));
    ExtendedResourceClasses none = ExtendedResourceClasses.of(List.of());
    return Stream.of(
        Arguments.of(
            "not advertised, served by a class: DRA",
            served,
            node(Map.of()),
            Map.of(),
            new NodeFit.Fits(new TreeMap<>(Map.of(GPU, 2L)))),
        Arguments.of(
            "advertised as zero, served by a class: DRA",
            served,
            node(Map.of(GPU, "0")),
            Map.of(),
            new NodeFit.Fits(new TreeMap<>(Map.of(GPU, 2L)))),
        Arguments.of(
            "advertised by a device plugin: the plugin's",
            served,
            node(Map.of(GPU, "4")),
            Map.of(GPU, 2L),
            new NodeFit.Fits(new TreeMap<>())),
        Arguments.of(
            "device plugin full",
            served,
            node(Map.of(GPU, "4")),
            Map.of(GPU, 3L),
            new NodeFit.Unfit("Insufficient " + GPU)),
        Arguments.of(
            "no class, not advertised",
            none,
            node(Map.of()),
            Map.of(),
            new NodeFit.Unfit("Insufficient " + GPU)),
        Arguments.of(
            "no class, advertised",
            none,
            node(Map.of(GPU, "2")),
            Map.of(),
            new NodeFit.Fits(new TreeMap<>())));
  }

  @ParameterizedTest(name = "{0}")
  @MethodSource("fitCases")
  void nodeFit(
      String name,
      ExtendedResourceClasses classes,
      Node node,
      Map<String, Long> used,
      NodeFit expected) {
    assertThat(ExtendedResourceFit.fit(Map.of(GPU, 2L), classes, node, used)).isEqualTo(expected);
  }

  record Req(String name, long count) {}

  record Map3(String container, String resource, String request) {}

  static Stream<Arguments> specCases() {
    return Stream.of(
        Arguments.of(
            "one container",
            pod(List.of(), List.of(gpus("a", "2"))),
            List.of(new Req("container-0-request-0", 2)),
            List.of(new Map3("a", GPU, "container-0-request-0"))),
        Arguments.of(
            "request index among the container's sorted request names",
            pod(List.of(), List.of(c("a", Map.of("cpu", "1", GPU, "1"), Map.of()))),
            List.of(new Req("container-0-request-1", 1)),
            List.of(new Map3("a", GPU, "container-0-request-1"))),
        Arguments.of(
            "container index counts init containers first",
            pod(
                List.of(c("i", Map.of("cpu", "1"), Map.of())),
                List.of(gpus("a", "1"), gpus("b", "3"))),
            List.of(new Req("container-1-request-0", 1), new Req("container-2-request-0", 3)),
            List.of(
                new Map3("a", GPU, "container-1-request-0"),
                new Map3("b", GPU, "container-2-request-0"))),
        Arguments.of(
            "init container reuses a later container's request",
            pod(List.of(gpus("i", "1")), List.of(gpus("a", "2"))),
            List.of(new Req("container-1-request-0", 2)),
            List.of(
                new Map3("a", GPU, "container-1-request-0"),
                new Map3("i", GPU, "container-1-request-0"))),
        Arguments.of(
            "init container asks for the rest beyond what it can reuse",
            pod(List.of(gpus("i", "3")), List.of(gpus("a", "1"))),
            List.of(new Req("container-0-request-0", 2), new Req("container-1-request-0", 1)),
            List.of(
                new Map3("a", GPU, "container-1-request-0"),
                new Map3("i", GPU, "container-1-request-0"),
                new Map3("i", GPU, "container-0-request-0"))),
        Arguments.of(
            "init containers share their largest request",
            pod(List.of(gpus("i", "1"), gpus("j", "3")), List.of()),
            List.of(new Req("container-1-request-0", 3)),
            List.of(
                new Map3("i", GPU, "container-1-request-0"),
                new Map3("j", GPU, "container-1-request-0"))),
        Arguments.of(
            "a sidecar is long-lived",
            pod(List.of(sidecar(gpus("s", "1"))), List.of(gpus("a", "1"))),
            List.of(new Req("container-0-request-0", 1), new Req("container-1-request-0", 1)),
            List.of(
                new Map3("s", GPU, "container-0-request-0"),
                new Map3("a", GPU, "container-1-request-0"))));
  }

  @ParameterizedTest(name = "{0}")
  @MethodSource("specCases")
  void spec(String name, Pod pod, List<Req> requests, List<Map3> mappings) {
    ExtendedResourceClasses classes = ExtendedResourceClasses.of(List.of(cls("gpu", GPU, null)));
    ExtendedResourceClaims.Spec spec =
        ExtendedResourceClaims.spec(pod, new TreeMap<>(ExtendedResourceRequests.of(pod)), classes);
    assertThat(spec.requests())
        .map(r -> new Req(r.getName(), r.getExactly().getCount()))
        .containsExactlyElementsOf(requests);
    assertThat(spec.requests())
        .allSatisfy(
            r -> {
              assertThat(r.getExactly().getDeviceClassName()).isEqualTo("gpu");
              assertThat(r.getExactly().getAllocationMode()).isEqualTo("ExactCount");
            });
    assertThat(spec.mappings())
        .map(m -> new Map3(m.getContainerName(), m.getResourceName(), m.getRequestName()))
        .containsExactlyElementsOf(mappings);
  }

  @Test
  void desiredClaimAndStatus() {
    Pod p = pod(List.of(), List.of(gpus("a", "2")));
    ExtendedResourceClasses classes = ExtendedResourceClasses.of(List.of(cls("gpu", GPU, null)));
    ExtendedResourceClaims.Spec spec =
        ExtendedResourceClaims.spec(p, new TreeMap<>(Map.of(GPU, 2L)), classes);
    ResourceClaim c = ExtendedResourceClaims.desired(p, spec, "tmp");
    assertThat(c.getMetadata().getGenerateName()).isEqualTo("p-extended-resources-");
    assertThat(c.getMetadata().getNamespace()).isEqualTo("ns");
    assertThat(c.getMetadata().getAnnotations())
        .containsEntry("resource.kubernetes.io/extended-resource-claim", "true");
    assertThat(c.getMetadata().getOwnerReferences())
        .singleElement()
        .satisfies(
            o -> {
              assertThat(o.getKind()).isEqualTo("Pod");
              assertThat(o.getUid()).isEqualTo("u1");
              assertThat(o.getController()).isTrue();
              assertThat(o.getBlockOwnerDeletion()).isNull();
            });
    assertThat(ExtendedResourceClaims.isInMemory(c)).isTrue();
    assertThat(ExtendedResourceClaims.find(p, List.of(c))).contains(c);
    Pod other = new PodBuilder(p).editMetadata().withUid("u2").endMetadata().build();
    assertThat(ExtendedResourceClaims.find(other, List.of(c))).isEmpty();
    assertThat(ExtendedResourceClaims.status(spec, "p-extended-resources-abcde"))
        .satisfies(
            s -> {
              assertThat(s.getResourceClaimName()).isEqualTo("p-extended-resources-abcde");
              assertThat(s.getRequestMappings())
                  .extracting(ContainerExtendedResourceRequest::getRequestName)
                  .containsExactly("container-0-request-0");
            });
  }
}
