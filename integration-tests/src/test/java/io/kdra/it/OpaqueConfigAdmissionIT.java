package io.kdra.it;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.catchThrowableOfType;
import static org.awaitility.Awaitility.await;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.fabric8.kubernetes.api.model.HasMetadata;
import io.fabric8.kubernetes.api.model.NamespaceBuilder;
import io.fabric8.kubernetes.api.model.resource.v1.DeviceClaimConfiguration;
import io.fabric8.kubernetes.api.model.resource.v1.DeviceClaimConfigurationBuilder;
import io.fabric8.kubernetes.api.model.resource.v1.DeviceClass;
import io.fabric8.kubernetes.api.model.resource.v1.DeviceClassConfigurationBuilder;
import io.fabric8.kubernetes.api.model.resource.v1.ResourceClaim;
import io.fabric8.kubernetes.api.model.resource.v1.ResourceClaimTemplate;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientException;
import io.fabric8.kubernetes.client.dsl.base.PatchContext;
import io.fabric8.kubernetes.client.dsl.base.PatchType;
import io.kdra.core.config.OpaqueConfigDecoder;
import io.kdra.core.config.OpaqueConfigException;
import io.kdra.it.chart.KdraChart;
import io.kdra.it.controlplane.ControlPlane;
import io.kdra.it.services.Dra;
import io.kdra.it.services.Stack;
import java.time.Duration;
import java.util.List;
import java.util.Optional;
import java.util.stream.Stream;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Named;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * Issue #18: the chart's ValidatingAdmissionPolicy on the real kube-apiserver refuses at create
 * exactly the opaque configs of our drivers that the device-driver's decoder refuses at prepare,
 * naming the field the driver names; it admits the rest and leaves other drivers' configs alone.
 * The expectation of every case is the driver's own {@link OpaqueConfigDecoder} run on the same
 * parameters: the decoder is the source of truth, the policy its copy in CEL.
 *
 * <p>Only this class installs the policy, and it removes it when done: other test classes on the
 * shared API server create claims with invalid configs on purpose to test the driver's refusal at
 * prepare time (RealNodeIT).
 */
@ExtendWith(ControlPlane.class)
class OpaqueConfigAdmissionIT {

  private static final String NS = "opaque-admission";
  private static final String API_VERSION = OpaqueConfigDecoder.API_VERSION;
  private static final ObjectMapper JSON = new ObjectMapper();
  private static final List<String> POLICY_KINDS =
      List.of("ValidatingAdmissionPolicy", "ValidatingAdmissionPolicyBinding");

  private static final String FROM_BEFORE =
      "{'apiVersion': '"
          + API_VERSION
          + "', 'kind': 'GpuConfig', 'sharing': {'mps': {'threads': 4}}}";

  private static KubernetesClient client;
  private static int created;

  @BeforeAll
  static void aClaimFromBeforeThenThePolicy(KubernetesClient kubernetes) throws Exception {
    client = kubernetes;
    client
        .namespaces()
        .resource(new NamespaceBuilder().withNewMetadata().withName(NS).endMetadata().build())
        .serverSideApply();
    // a claim the driver would refuse, written while nothing checked configs at admission
    ResourceClaim before = Dra.claim(NS, "from-before", KdraChart.GPU_CLASS, 1);
    before.getSpec().getDevices().setConfig(List.of(ours(parse(FROM_BEFORE))));
    client.resource(before).create();
    List<HasMetadata> policy = policyObjects();
    assertThat(policy).extracting(HasMetadata::getKind).containsExactlyElementsOf(POLICY_KINDS);
    policy.forEach(o -> client.resource(o).forceConflicts().serverSideApply());
    // the API server enforces a new policy once its informer has it: wait for that state
    await().atMost(Duration.ofSeconds(60)).until(() -> probeRefused());
  }

  @AfterAll
  static void removeThePolicy() {
    if (client == null) {
      return;
    }
    client.resources(ResourceClaim.class).inNamespace(NS).delete();
    client.resources(ResourceClaimTemplate.class).inNamespace(NS).delete();
    client.resources(DeviceClass.class).withLabel("test", "opaque-admission").delete();
    policyObjects().forEach(o -> client.resource(o).delete());
    // the next test class on this API server must not meet it
    await().atMost(Duration.ofSeconds(60)).until(() -> !probeRefused());
  }

  /** One config's parameters; {@code json} with ' for ". */
  record Case(String json, boolean valid) {}

  /** Parameters with the right apiVersion and kind and these further fields. */
  private static String ok(String fields) {
    return "{'apiVersion': '"
        + API_VERSION
        + "', 'kind': 'GpuConfig'"
        + (fields.isEmpty() ? "" : ", " + fields)
        + "}";
  }

  static Stream<Named<Case>> cases() {
    return Stream.of(
        valid("no sharing", ok("")),
        valid("keys in any order", "{'kind': 'GpuConfig', 'apiVersion': '" + API_VERSION + "'}"),
        valid("sharing null", ok("'sharing': null")),
        valid("Exclusive", ok("'sharing': {'strategy': 'Exclusive'}")),
        valid("TimeSlicing without settings", ok("'sharing': {'strategy': 'TimeSlicing'}")),
        valid(
            "TimeSlicing, empty settings",
            ok("'sharing': {'strategy': 'TimeSlicing', 'timeSlicing': {}}")),
        valid(
            "TimeSlicing Long",
            ok("'sharing': {'strategy': 'TimeSlicing', 'timeSlicing': {'interval': 'Long'}}")),
        valid("MPS, settings null", ok("'sharing': {'strategy': 'MPS', 'mps': null}")),
        valid(
            "MPS, both settings",
            ok(
                "'sharing': {'strategy': 'MPS', 'mps': "
                    + "{'activeThreadPercentage': 1, 'pinnedMemoryLimit': '1.5Gi'}}")),
        valid(
            "MPS, 100 percent",
            ok("'sharing': {'strategy': 'MPS', 'mps': {'activeThreadPercentage': 100}}")),
        invalid(
            "the issue's example: MPS settings without the strategy",
            ok("'sharing': {'mps': {'threads': 4}}")),
        invalid(
            "an unknown MPS setting", ok("'sharing': {'strategy': 'MPS', 'mps': {'threads': 4}}")),
        invalid("another apiVersion", "{'apiVersion': 'resource.kdra.io/v2', 'kind': 'GpuConfig'}"),
        invalid("apiVersion a number", "{'apiVersion': 1, 'kind': 'GpuConfig'}"),
        invalid("apiVersion null", "{'apiVersion': null, 'kind': 'GpuConfig'}"),
        invalid("no kind", "{'apiVersion': '" + API_VERSION + "'}"),
        invalid("another kind", "{'apiVersion': '" + API_VERSION + "', 'kind': 'TpuConfig'}"),
        invalid("an unknown top-level field", ok("'extra': true")),
        invalid("sharing a string", ok("'sharing': 'TimeSlicing'")),
        invalid("an unknown strategy", ok("'sharing': {'strategy': 'Shared'}")),
        invalid("strategy a number", ok("'sharing': {'strategy': 5}")),
        invalid("strategy null", ok("'sharing': {'strategy': null}")),
        invalid("an unknown sharing field", ok("'sharing': {'strategy': 'MPS', 'mode': 'x'}")),
        invalid(
            "an unknown interval",
            ok("'sharing': {'strategy': 'TimeSlicing', 'timeSlicing': {'interval': 'Forever'}}")),
        invalid(
            "interval null",
            ok("'sharing': {'strategy': 'TimeSlicing', 'timeSlicing': {'interval': null}}")),
        invalid(
            "an unknown time-slicing field",
            ok("'sharing': {'strategy': 'TimeSlicing', 'timeSlicing': {'length': 1}}")),
        invalid(
            "time-slicing settings a list",
            ok("'sharing': {'strategy': 'TimeSlicing', 'timeSlicing': ['Long']}")),
        invalid(
            "MPS settings with TimeSlicing",
            ok("'sharing': {'strategy': 'TimeSlicing', 'mps': {}}")),
        invalid(
            "time-slicing settings, even null, with Exclusive",
            ok("'sharing': {'strategy': 'Exclusive', 'timeSlicing': null}")),
        invalid(
            "time-slicing settings with MPS",
            ok("'sharing': {'strategy': 'MPS', 'timeSlicing': {}}")),
        invalid(
            "0 percent",
            ok("'sharing': {'strategy': 'MPS', 'mps': {'activeThreadPercentage': 0}}")),
        invalid(
            "101 percent",
            ok("'sharing': {'strategy': 'MPS', 'mps': {'activeThreadPercentage': 101}}")),
        invalid(
            "a fractional percentage",
            ok("'sharing': {'strategy': 'MPS', 'mps': {'activeThreadPercentage': 50.5}}")),
        invalid(
            "a percentage as a string",
            ok("'sharing': {'strategy': 'MPS', 'mps': {'activeThreadPercentage': '50'}}")),
        invalid(
            "a pinned limit that is no quantity",
            ok("'sharing': {'strategy': 'MPS', 'mps': {'pinnedMemoryLimit': '10 GiB'}}")),
        invalid(
            "a pinned limit of zero",
            ok("'sharing': {'strategy': 'MPS', 'mps': {'pinnedMemoryLimit': '0'}}")),
        invalid(
            "a negative pinned limit",
            ok("'sharing': {'strategy': 'MPS', 'mps': {'pinnedMemoryLimit': '-1Gi'}}")),
        invalid(
            "a pinned limit as a number",
            ok("'sharing': {'strategy': 'MPS', 'mps': {'pinnedMemoryLimit': 10}}")));
  }

  private static Named<Case> valid(String name, String json) {
    return Named.of(name, new Case(json, true));
  }

  private static Named<Case> invalid(String name, String json) {
    return Named.of(name, new Case(json, false));
  }

  /**
   * A claim whose first config is another driver's (nonsense to us) and whose second is ours:
   * created when the driver would take it, else refused with 422 and the driver's message.
   */
  @ParameterizedTest(name = "{0}")
  @MethodSource("cases")
  void aClaimIsAdmittedExactlyWhenTheDriverWouldPrepareIt(Case c) throws Exception {
    JsonNode parameters = parse(c.json());
    String at = "spec.devices.config[1].opaque.parameters";
    Optional<OpaqueConfigException> driver = decode(parameters, at);
    assertThat(driver.isEmpty())
        .as("the driver's verdict on %s: %s", c.json(), driver)
        .isEqualTo(c.valid());

    ResourceClaim claim = Dra.claim(NS, "claim-" + ++created, KdraChart.GPU_CLASS, 1);
    claim.getSpec().getDevices().setConfig(List.of(otherDriversConfig(), ours(parameters)));
    assertAdmittedAsTheDriverDecides(claim, driver);
  }

  @Test
  void aTemplateIsCheckedAtItsOwnPath() throws Exception {
    JsonNode bad = parse(ok("'sharing': {'strategy': 'MPS', 'mps': {'threads': 4}}"));
    ResourceClaimTemplate template = Dra.template(NS, "bad-template", KdraChart.GPU_CLASS, 1);
    template.getSpec().getSpec().getDevices().setConfig(List.of(ours(bad)));
    Optional<OpaqueConfigException> driver =
        decode(bad, "spec.spec.devices.config[0].opaque.parameters");
    assertThat(driver)
        .hasValueSatisfying(
            e ->
                assertThat(e.getMessage())
                    .isEqualTo(
                        "spec.spec.devices.config[0].opaque.parameters.sharing.mps.threads: "
                            + "unknown field"));
    assertAdmittedAsTheDriverDecides(template, driver);

    JsonNode good =
        parse(ok("'sharing': {'strategy': 'MPS', 'mps': {'activeThreadPercentage': 50}}"));
    ResourceClaimTemplate fine = Dra.template(NS, "good-template", KdraChart.GPU_CLASS, 1);
    fine.getSpec().getSpec().getDevices().setConfig(List.of(ours(good)));
    assertAdmittedAsTheDriverDecides(fine, decode(good, "any"));
  }

  @Test
  void aDeviceClassIsCheckedAtCreateAndWhenItsConfigChanges() throws Exception {
    JsonNode bad =
        parse(
            ok(
                "'sharing': {'strategy': 'TimeSlicing', "
                    + "'timeSlicing': {'interval': 'Forever'}}"));
    Optional<OpaqueConfigException> driver = decode(bad, "spec.config[0].opaque.parameters");
    assertThat(driver).isPresent();
    assertAdmittedAsTheDriverDecides(deviceClass("bad-class", bad), driver);

    JsonNode good =
        parse(
            ok(
                "'sharing': {'strategy': 'TimeSlicing', "
                    + "'timeSlicing': {'interval': 'Short'}}"));
    DeviceClass fine = deviceClass("good-class", good);
    assertAdmittedAsTheDriverDecides(fine, decode(good, "any"));

    // a change of its config to a bad one is refused as a create is
    KubernetesClientException refused =
        catchThrowableOfType(
            KubernetesClientException.class,
            () ->
                client
                    .resources(DeviceClass.class)
                    .withName("good-class")
                    .patch(
                        PatchContext.of(PatchType.JSON),
                        "[{\"op\": \"replace\", \"path\": "
                            + "\"/spec/config/0/opaque/parameters/sharing/timeSlicing/interval\", "
                            + "\"value\": \"Forever\"}]"));
    assertThat(refused).as("the config change is refused").isNotNull();
    assertThat(refused.getCode()).isEqualTo(422);
    assertThat(refused.getStatus().getMessage()).contains(driver.get().getMessage());
  }

  /**
   * A claim written before the policy, with a config it refuses, still takes the updates that leave
   * its spec alone (a controller's finalizer on and off) and can be deleted.
   */
  @Test
  void aClaimFromBeforeThePolicyCanStillBeFinishedAndDeleted() throws Exception {
    assertThat(decode(parse(FROM_BEFORE), "p")).as("the driver refuses it").isPresent();
    var claim = client.resources(ResourceClaim.class).inNamespace(NS).withName("from-before");
    claim.edit(
        c -> {
          c.getMetadata().getFinalizers().add("kdra.io/test");
          return c;
        });
    assertThat(claim.get().getMetadata().getFinalizers()).contains("kdra.io/test");
    claim.edit(
        c -> {
          c.getMetadata().getFinalizers().remove("kdra.io/test");
          return c;
        });
    claim.delete();
    claim.waitUntilCondition(c -> c == null, 30, java.util.concurrent.TimeUnit.SECONDS);
  }

  /**
   * 32 configs (the API's maximum) of near 10 KiB (its maximum) full of unknown fields: refused,
   * with the message cut short rather than dropped for the policy's generic one, which the API
   * server does with a message over 5000 characters.
   */
  @Test
  void aClaimWithThousandsOfErrorsIsRefusedWithAShortMessage() {
    com.fasterxml.jackson.databind.node.ObjectNode parameters =
        JSON.createObjectNode().put("apiVersion", API_VERSION).put("kind", "GpuConfig");
    for (int i = 0; i < 200; i++) {
      parameters.put("unknown" + i, "x".repeat(30));
    }
    ResourceClaim claim = Dra.claim(NS, "many-errors", KdraChart.GPU_CLASS, 1);
    claim.getSpec().getDevices().setConfig(java.util.Collections.nCopies(32, ours(parameters)));
    KubernetesClientException refused =
        catchThrowableOfType(
            KubernetesClientException.class, () -> client.resource(claim).create());
    assertThat(refused).isNotNull();
    assertThat(refused.getCode()).isEqualTo(422);
    assertThat(refused.getStatus().getMessage())
        .contains("spec.devices.config[0].opaque.parameters.unknown")
        .endsWith("... (cut at 2000 characters)")
        .hasSizeLessThan(2300);
  }

  @Test
  void anotherDriversConfigIsNotLookedAt() {
    ResourceClaim claim = Dra.claim(NS, "other-driver", KdraChart.GPU_CLASS, 1);
    claim.getSpec().getDevices().setConfig(List.of(otherDriversConfig()));
    assertThat(client.resource(claim).create().getMetadata().getUid()).isNotBlank();
  }

  /**
   * Created when {@code driver} is empty; else refused, 422, with the driver's message in the API
   * server's (the policy joins every error; up to ", got ..." where the driver shows a JSON value
   * that CEL cannot print alike).
   */
  private static void assertAdmittedAsTheDriverDecides(
      HasMetadata object, Optional<OpaqueConfigException> driver) {
    if (driver.isEmpty()) {
      assertThat(client.resource(object).create().getMetadata().getUid()).isNotBlank();
      return;
    }
    KubernetesClientException refused =
        catchThrowableOfType(
            KubernetesClientException.class, () -> client.resource(object).create());
    assertThat(refused)
        .as("the API server refuses what the driver refuses: %s", driver.get().getMessage())
        .isNotNull();
    assertThat(refused.getCode()).isEqualTo(422);
    String message = driver.get().getMessage();
    int got = message.indexOf(", got ");
    String expected = got < 0 ? message : message.substring(0, got);
    System.out.printf("[opaque-admission] %s%n", refused.getStatus().getMessage());
    assertThat(refused.getStatus().getMessage())
        .contains("ValidatingAdmissionPolicy '" + policyName() + "'")
        .contains(expected);
  }

  private static Optional<OpaqueConfigException> decode(JsonNode parameters, String at) {
    try {
      OpaqueConfigDecoder.decode(parameters, at);
      return Optional.empty();
    } catch (OpaqueConfigException e) {
      return Optional.of(e);
    }
  }

  private static JsonNode parse(String json) throws Exception {
    return JSON.readTree(json.replace('\'', '"'));
  }

  /** A JsonNode as parameters: fabric8 writes it as it is, nulls included. */
  private static DeviceClaimConfiguration ours(JsonNode parameters) {
    return new DeviceClaimConfigurationBuilder()
        .withRequests("gpu")
        .withNewOpaque()
        .withDriver(Stack.DRIVER)
        .withParameters(parameters)
        .endOpaque()
        .build();
  }

  private static DeviceClaimConfiguration otherDriversConfig() {
    try {
      return new DeviceClaimConfigurationBuilder()
          .withNewOpaque()
          .withDriver("nic.example.com")
          .withParameters(parse("{'sharing': {'mps': 4}}"))
          .endOpaque()
          .build();
    } catch (Exception e) {
      throw new IllegalStateException(e);
    }
  }

  private static DeviceClass deviceClass(String name, JsonNode parameters) {
    DeviceClass c = Dra.gpuClass(name, null);
    c.getMetadata()
        .setLabels(new java.util.HashMap<>(java.util.Map.of("test", "opaque-admission")));
    c.getSpec()
        .setConfig(
            List.of(
                new DeviceClassConfigurationBuilder()
                    .withNewOpaque()
                    .withDriver(Stack.DRIVER)
                    .withParameters(parameters)
                    .endOpaque()
                    .build()));
    return c;
  }

  /**
   * The chart's opaque-config policy and binding (not its writers' policies), rendered as every
   * other chart object the harness uses.
   */
  private static List<HasMetadata> policyObjects() {
    return KdraChart.render().stream()
        .filter(o -> POLICY_KINDS.contains(o.getKind()))
        .filter(o -> o.getMetadata().getName().endsWith("-opaque-config"))
        .toList();
  }

  private static String policyName() {
    return policyObjects().get(0).getMetadata().getName();
  }

  /** Whether the policy refuses a claim with a known-bad config now (a dry run: nothing stays). */
  private static boolean probeRefused() {
    ResourceClaim probe = Dra.claim(NS, "probe", KdraChart.GPU_CLASS, 1);
    try {
      probe.getSpec().getDevices().setConfig(List.of(ours(parse(ok("'unknown': 1")))));
      client.resource(probe).dryRun().create();
      return false;
    } catch (KubernetesClientException e) {
      if (e.getCode() == 422 && e.getStatus().getMessage().contains("ValidatingAdmissionPolicy")) {
        return true;
      }
      throw e;
    } catch (Exception e) {
      throw new IllegalStateException(e);
    }
  }
}
