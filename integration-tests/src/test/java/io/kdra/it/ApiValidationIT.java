package io.kdra.it;

import static io.kdra.core.testing.Fixtures.claim;
import static io.kdra.core.testing.Fixtures.device;
import static io.kdra.core.testing.Fixtures.deviceClass;
import static io.kdra.core.testing.Fixtures.slice;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.catchThrowableOfType;

import io.fabric8.kubernetes.api.model.HasMetadata;
import io.fabric8.kubernetes.api.model.NamespaceBuilder;
import io.fabric8.kubernetes.api.model.StatusCause;
import io.fabric8.kubernetes.api.model.resource.v1.DeviceAttribute;
import io.fabric8.kubernetes.api.model.resource.v1.DeviceClass;
import io.fabric8.kubernetes.api.model.resource.v1.ResourceClaim;
import io.fabric8.kubernetes.api.model.resource.v1.ResourceSlice;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientException;
import io.kdra.core.validation.ValidationError;
import io.kdra.core.validation.Validator;
import io.kdra.it.controlplane.ControlPlane;
import java.util.List;
import java.util.function.Supplier;
import java.util.stream.IntStream;
import java.util.stream.Stream;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Named;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * dra-core's model and validation against the real kube-apiserver: objects we build round-trip
 * unchanged, and what dra-core rejects the API server rejects too, at the same field.
 */
@ExtendWith(ControlPlane.class)
class ApiValidationIT {

  private static KubernetesClient client;

  @BeforeAll
  static void setUp(KubernetesClient kubernetes) {
    client = kubernetes;
    client
        .namespaces()
        .resource(new NamespaceBuilder().withNewMetadata().withName("ns").endMetadata().build())
        .serverSideApply();
  }

  @Test
  void validObjectsRoundTripThroughTheApiServer() {
    DeviceClass deviceClass = deviceClass();
    deviceClass.getMetadata().setName("roundtrip-gpu");
    DeviceClass storedClass = client.resource(deviceClass).create();
    assertThat(storedClass.getSpec().getSelectors())
        .isEqualTo(deviceClass.getSpec().getSelectors());

    ResourceSlice slice = slice(device("gpu-0"), device("gpu-1"));
    slice.getMetadata().setName("roundtrip-slice");
    DeviceAttribute version = new DeviceAttribute();
    version.setVersion("550.54.15");
    slice.getSpec().getDevices().get(0).getAttributes().put("driverVersion", version);
    ResourceSlice storedSlice = client.resource(slice).create();
    assertThat(storedSlice.getSpec().getDevices()).isEqualTo(slice.getSpec().getDevices());
    assertThat(Validator.validate(storedSlice)).isEmpty();

    ResourceClaim claim = claim();
    claim.getMetadata().setName("roundtrip-claim");
    ResourceClaim storedClaim = client.resource(claim).create();
    // the API server defaults allocationMode and count; dra-core accepts the defaulted form
    assertThat(
            storedClaim
                .getSpec()
                .getDevices()
                .getRequests()
                .get(0)
                .getExactly()
                .getAllocationMode())
        .isEqualTo("ExactCount");
    assertThat(Validator.validate(storedClaim)).isEmpty();
  }

  @Test
  void aValueIsQuotedAsTheApiServerQuotesIt() {
    // Go's %q: named escapes, DEL and non-printing runes escaped, quotes escaped, letters kept
    String name = "gpu\u0007\u007f\u00a0\u200b\"é";
    ResourceClaim claim = claim();
    claim.getMetadata().setName("odd-request-name");
    claim.getSpec().getDevices().getRequests().get(0).setName(name);
    String field = "spec.devices.requests[0].name";
    String ours =
        Validator.validate(claim).stream()
            .filter(e -> e.field().equals(field))
            .findFirst()
            .orElseThrow()
            .message();

    KubernetesClientException rejection =
        catchThrowableOfType(
            KubernetesClientException.class, () -> client.resource(claim).create());
    assertThat(rejection).as("the API server rejects it").isNotNull();
    String theirs =
        rejection.getStatus().getDetails().getCauses().stream()
            .filter(c -> c.getField().equals(field))
            .findFirst()
            .orElseThrow()
            .getMessage();
    String quoted = "Invalid value: \"gpu\\a\\x7f\\u00a0\\u200b\\\"é\"";
    assertThat(theirs).startsWith(quoted);
    assertThat(ours).startsWith(quoted);
  }

  record Case(Supplier<HasMetadata> object) {}

  static Stream<Named<Case>> rejected() {
    return Stream.of(
        named(
            "slice: 129 devices",
            () -> {
              ResourceSlice s =
                  slice(
                      IntStream.range(0, 129)
                          .mapToObj(i -> device("gpu-" + i))
                          .toArray(io.fabric8.kubernetes.api.model.resource.v1.Device[]::new));
              s.getMetadata().setName("too-many-devices");
              return s;
            }),
        named(
            "slice: duplicate device names",
            () -> {
              ResourceSlice s = slice(device("gpu-0"), device("gpu-0"));
              s.getMetadata().setName("duplicate-devices");
              return s;
            }),
        named(
            "slice: version attribute not semver",
            () -> {
              ResourceSlice s = slice();
              s.getMetadata().setName("bad-version");
              DeviceAttribute v = new DeviceAttribute();
              v.setVersion("v1.2");
              s.getSpec().getDevices().get(0).getAttributes().put("driverVersion", v);
              return s;
            }),
        named(
            "slice: device name not a DNS label",
            () -> {
              ResourceSlice s = slice(device("GPU_0"));
              s.getMetadata().setName("bad-device-name");
              return s;
            }),
        named(
            "class: selector does not compile",
            () -> {
              DeviceClass c = deviceClass();
              c.getMetadata().setName("bad-cel");
              c.getSpec().getSelectors().get(0).getCel().setExpression("device.vendor == \"x\"");
              return c;
            }),
        named(
            "class: selector is not bool",
            () -> {
              DeviceClass c = deviceClass();
              c.getMetadata().setName("not-bool");
              c.getSpec().getSelectors().get(0).getCel().setExpression("device.driver");
              return c;
            }),
        named(
            "class: selector too expensive",
            () -> {
              DeviceClass c = deviceClass();
              c.getMetadata().setName("too-expensive");
              c.getSpec()
                  .getSelectors()
                  .get(0)
                  .getCel()
                  .setExpression(
                      "device.attributes[\"gpu.example.com\"].all(a, device.attributes[\"gpu.example.com\"]"
                          + ".all(b, device.attributes[\"gpu.example.com\"].all(c, device.attributes["
                          + "\"gpu.example.com\"].all(d, a.size() + b.size() + c.size() + d.size() > 0))))");
              return c;
            }),
        named(
            "claim: negative count",
            () -> {
              ResourceClaim c = claim();
              c.getMetadata().setName("negative-count");
              c.getSpec().getDevices().getRequests().get(0).getExactly().setCount(-1L);
              return c;
            }),
        named(
            "claim: request name not a DNS label",
            () -> {
              ResourceClaim c = claim();
              c.getMetadata().setName("bad-request-name");
              c.getSpec().getDevices().getRequests().get(0).setName("GPU");
              return c;
            }));
  }

  private static Named<Case> named(String name, Supplier<HasMetadata> object) {
    return Named.of(name, new Case(object));
  }

  @ParameterizedTest(name = "{0}")
  @MethodSource("rejected")
  void whatDraCoreRejectsTheApiServerRejectsAtTheSameField(Case c) {
    HasMetadata object = c.object().get();
    List<String> ours =
        Validator.validate(object).stream()
            .map(ValidationError::field)
            .map(ApiValidationIT::unquoteKeys)
            .toList();
    assertThat(ours).as("dra-core rejects it").isNotEmpty();

    KubernetesClientException rejection =
        catchThrowableOfType(
            KubernetesClientException.class, () -> client.resource(object).create());
    assertThat(rejection).as("the API server rejects it").isNotNull();
    assertThat(rejection.getCode()).isEqualTo(422);
    List<String> theirs =
        rejection.getStatus().getDetails().getCauses().stream().map(StatusCause::getField).toList();
    System.out.printf(
        "[%s] API server: %s%n",
        object.getMetadata().getName(), rejection.getStatus().getMessage());
    assertThat(ours)
        .as("field paths: dra-core %s, API server %s", ours, theirs)
        .anyMatch(path -> theirs.stream().anyMatch(t -> t.equals(path)));
  }

  /** dra-core quotes map keys in paths ({@code attributes["a"]}), upstream does not. */
  private static String unquoteKeys(String path) {
    return path.replaceAll("\\[\"([^\"]*)\"]", "[$1]");
  }
}
