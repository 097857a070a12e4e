package io.kdra.it;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.catchThrowableOfType;
import static org.awaitility.Awaitility.await;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.fabric8.kubeapitest.cert.CertManager;
import io.fabric8.kubernetes.api.model.HasMetadata;
import io.fabric8.kubernetes.api.model.NamespaceBuilder;
import io.fabric8.kubernetes.api.model.admissionregistration.v1.ValidatingWebhookConfiguration;
import io.fabric8.kubernetes.api.model.resource.v1.DeviceClaimConfiguration;
import io.fabric8.kubernetes.api.model.resource.v1.DeviceClaimConfigurationBuilder;
import io.fabric8.kubernetes.api.model.resource.v1.DeviceClass;
import io.fabric8.kubernetes.api.model.resource.v1.DeviceClassConfigurationBuilder;
import io.fabric8.kubernetes.api.model.resource.v1.ResourceClaim;
import io.fabric8.kubernetes.api.model.resource.v1.ResourceClaimTemplate;
import io.fabric8.kubernetes.client.Config;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientException;
import io.fabric8.kubernetes.client.dsl.base.PatchContext;
import io.fabric8.kubernetes.client.dsl.base.PatchType;
import io.fabric8.kubernetes.client.utils.Serialization;
import io.kdra.core.config.OpaqueConfigDecoder;
import io.kdra.core.config.OpaqueConfigException;
import io.kdra.it.chart.KdraChart;
import io.kdra.it.controlplane.ControlPlane;
import io.kdra.it.services.Dra;
import io.kdra.it.services.Stack;
import io.kdra.it.support.OwnerOnly;
import io.kdra.it.support.ServiceProcess;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Base64;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.TimeUnit;
import org.bouncycastle.asn1.x509.GeneralName;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.MethodOrderer;
import org.junit.jupiter.api.Order;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestMethodOrder;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * Issue #18: the chart's ValidatingWebhookConfiguration on the real kube-apiserver, calling the
 * slice-publisher (its packaged application, with the chart's ServiceAccount and RBAC) over TLS on
 * loopback, refuses at create the opaque configs of our drivers that the driver's decoder refuses,
 * in claims, templates and classes, with the decoder's own message and field path, and admits the
 * rest. With the publisher gone, failurePolicy Fail refuses only writes that carry our drivers'
 * configs (the webhook's matchConditions); every other write goes on.
 *
 * <p>The configuration is the chart's, rendered as the harness renders every chart object, with one
 * change: the API server reaches the publisher at {@code https://127.0.0.1:<port>} instead of the
 * Service, which needs a pod network, with a certificate for that address. Only this class
 * registers the webhook, and it removes it when done (RealNodeIT creates claims with invalid
 * configs on purpose). The chart's ValidatingAdmissionPolicy is not installed here
 * (OpaqueConfigAdmissionIT tests it), so every refusal is the webhook's.
 */
@ExtendWith(ControlPlane.class)
@TestMethodOrder(MethodOrderer.OrderAnnotation.class)
class OpaqueConfigWebhookIT {

  private static final String NS = "opaque-webhook";
  private static final String WEBHOOK = "opaque-config.kdra.io";
  private static final ObjectMapper JSON = new ObjectMapper();
  private static final Path DIR = Path.of("target", "it-webhook").toAbsolutePath();

  private static KubernetesClient client;
  private static ServiceProcess publisher;
  private static ValidatingWebhookConfiguration configuration;
  private static int created;

  @BeforeAll
  static void startThePublisherAndRegisterTheChartsWebhook(ControlPlane.Running cp)
      throws Exception {
    client = cp.client();
    KdraChart.install(client);
    client
        .namespaces()
        .resource(new NamespaceBuilder().withNewMetadata().withName(NS).endMetadata().build())
        .serverSideApply();
    // a claim the driver would refuse, written while nothing checked configs at admission
    ResourceClaim before = Dra.claim(NS, "from-before", KdraChart.GPU_CLASS, 1);
    before.getSpec().getDevices().setConfig(List.of(ours(parse(bad()))));
    client.resource(before).create();

    publisher = startPublisher(cp);
    configuration = chartsWebhookAt(publisher.properties.get("quarkus.http.ssl-port"));
    client.resource(configuration).forceConflicts().serverSideApply();
    // the API server calls a new webhook once its informer has it: wait for that state
    await().atMost(Duration.ofSeconds(60)).until(OpaqueConfigWebhookIT::probeRefused);
  }

  @AfterAll
  static void removeTheWebhook() {
    if (client == null) {
      return;
    }
    if (configuration != null) {
      client.resource(configuration).delete();
      // the next test class on this API server must not meet it
      await().atMost(Duration.ofSeconds(60)).until(() -> probe(ours(parse(bad()))) == null);
    }
    client.resources(ResourceClaim.class).inNamespace(NS).delete();
    client.resources(ResourceClaimTemplate.class).inNamespace(NS).delete();
    client.resources(DeviceClass.class).withLabel("test", "opaque-webhook").delete();
    if (publisher != null) {
      publisher.close();
    }
  }

  /**
   * Every case of OpaqueConfigAdmissionIT, in a claim after another driver's config (nonsense to
   * us): created when the driver would take it, else refused with 422 and exactly the decoder's
   * message, path included.
   */
  @Order(1)
  @ParameterizedTest(name = "{0}")
  @MethodSource("io.kdra.it.OpaqueConfigAdmissionIT#cases")
  void aClaimIsAdmittedExactlyWhenTheDriverWouldPrepareIt(OpaqueConfigAdmissionIT.Case c)
      throws Exception {
    JsonNode parameters = parse(c.json());
    Optional<OpaqueConfigException> driver =
        decode(parameters, "spec.devices.config[1].opaque.parameters");
    assertThat(driver.isEmpty())
        .as("the driver's verdict on %s: %s", c.json(), driver)
        .isEqualTo(c.valid());
    ResourceClaim claim = Dra.claim(NS, "claim-" + ++created, KdraChart.GPU_CLASS, 1);
    claim.getSpec().getDevices().setConfig(List.of(otherDriversConfig(), ours(parameters)));
    assertAdmittedAsTheDriverDecides(claim, driver);
  }

  @Order(1)
  @Test
  void theIssuesClaimIsRefusedNamingTheField() throws Exception {
    ResourceClaim claim = Dra.claim(NS, "issue-18", KdraChart.GPU_CLASS, 1);
    claim.getSpec().getDevices().setConfig(List.of(ours(parse(bad()))));
    KubernetesClientException refused = refused(claim);
    assertThat(refused.getStatus().getMessage())
        .isEqualTo(
            "admission webhook \""
                + WEBHOOK
                + "\" denied the request: spec.devices.config[0].opaque.parameters.sharing.mps: "
                + "not allowed with strategy Exclusive");
    assertThat(refused.getStatus().getDetails().getCauses())
        .singleElement()
        .satisfies(
            cause ->
                assertThat(cause.getField())
                    .isEqualTo("spec.devices.config[0].opaque.parameters.sharing.mps"));
    // the publisher logs who wrote it and why
    await()
        .atMost(Duration.ofSeconds(60))
        .until(
            () ->
                Files.readAllLines(publisher.log).stream()
                    .anyMatch(
                        l ->
                            l.contains("refusing ResourceClaim " + NS + "/issue-18 written by ")
                                && l.contains("sharing.mps: not allowed with strategy Exclusive")));
  }

  @Order(1)
  @Test
  void aTemplateIsCheckedAtItsOwnPath() throws Exception {
    ResourceClaimTemplate bad = Dra.template(NS, "bad-template", KdraChart.GPU_CLASS, 1);
    bad.getSpec().getSpec().getDevices().setConfig(List.of(ours(parse(bad()))));
    assertThat(refused(bad).getStatus().getMessage())
        .endsWith(
            "spec.spec.devices.config[0].opaque.parameters.sharing.mps: "
                + "not allowed with strategy Exclusive");

    ResourceClaimTemplate fine = Dra.template(NS, "good-template", KdraChart.GPU_CLASS, 1);
    fine.getSpec().getSpec().getDevices().setConfig(List.of(ours(parse(good()))));
    assertThat(client.resource(fine).create().getMetadata().getUid()).isNotBlank();
  }

  @Order(1)
  @Test
  void aDeviceClassIsCheckedAtCreateAndWhenItsConfigChanges() throws Exception {
    assertThat(refused(deviceClass("bad-class", parse(bad()))).getStatus().getMessage())
        .endsWith(
            "spec.config[0].opaque.parameters.sharing.mps: "
                + "not allowed with strategy Exclusive");
    JsonNode slicing =
        parse(
            ok(
                "'sharing': {'strategy': 'TimeSlicing', "
                    + "'timeSlicing': {'interval': 'Short'}}"));
    assertThat(client.resource(deviceClass("good-class", slicing)).create().getMetadata().getUid())
        .isNotBlank();

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
    assertThat(refused.getStatus().getMessage())
        .endsWith(
            "spec.config[0].opaque.parameters.sharing.timeSlicing.interval: "
                + "\"Forever\" is not one of Default, Short, Medium, Long");
  }

  /**
   * A claim written before the webhook, with a config it refuses, still takes the updates that
   * leave its spec alone (a controller's finalizer on and off) and can be deleted.
   */
  @Order(1)
  @Test
  void aClaimFromBeforeTheWebhookCanStillBeFinishedAndDeleted() {
    var claim = client.resources(ResourceClaim.class).inNamespace(NS).withName("from-before");
    claim.edit(
        c -> {
          c.getMetadata().getFinalizers().add("kdra.io/test");
          return c;
        });
    claim.edit(
        c -> {
          c.getMetadata().getFinalizers().remove("kdra.io/test");
          return c;
        });
    claim.delete();
    claim.waitUntilCondition(c -> c == null, 30, TimeUnit.SECONDS);
  }

  /**
   * failurePolicy Fail with the publisher gone: a write with our drivers' config is refused (never
   * let through unchecked), one without is admitted at once, since the API server does not even
   * call the webhook for it.
   */
  @Order(2)
  @Test
  void withThePublisherGoneOnlyWritesConfiguringOurDriversAreRefused() throws Exception {
    JsonNode slicing =
        parse(
            ok(
                "'sharing': {'strategy': 'TimeSlicing', "
                    + "'timeSlicing': {'interval': 'Short'}}"));
    client.resource(deviceClass("kept-class", slicing)).create();
    publisher.close();
    KubernetesClientException refused =
        catchThrowableOfType(
            KubernetesClientException.class,
            () -> {
              ResourceClaim claim = Dra.claim(NS, "while-down", KdraChart.GPU_CLASS, 1);
              claim.getSpec().getDevices().setConfig(List.of(ours(parse(good()))));
              client.resource(claim).create();
            });
    assertThat(refused).as("a good config is refused while nothing can check it").isNotNull();
    assertThat(refused.getStatus().getMessage())
        .contains("failed calling webhook \"" + WEBHOOK + "\"");

    ResourceClaim plain = Dra.claim(NS, "plain-while-down", KdraChart.GPU_CLASS, 1);
    assertThat(client.resource(plain).create().getMetadata().getUid()).isNotBlank();
    ResourceClaim others = Dra.claim(NS, "others-while-down", KdraChart.GPU_CLASS, 1);
    others.getSpec().getDevices().setConfig(List.of(otherDriversConfig()));
    assertThat(client.resource(others).create().getMetadata().getUid()).isNotBlank();

    // DeviceClasses alike: one configuring our driver waits for the publisher, others do not
    assertThat(refusedWhileDown(() -> client.resource(deviceClass("new-class", slicing)).create()))
        .as("a new class configuring our driver")
        .contains("failed calling webhook \"" + WEBHOOK + "\"");
    DeviceClass plainClass = Dra.gpuClass("plain-class-while-down", null);
    plainClass.getMetadata().setLabels(new HashMap<>(Map.of("test", "opaque-webhook")));
    assertThat(client.resource(plainClass).create().getMetadata().getUid()).isNotBlank();
    DeviceClass othersClass = Dra.gpuClass("others-class-while-down", null);
    othersClass.getMetadata().setLabels(new HashMap<>(Map.of("test", "opaque-webhook")));
    othersClass
        .getSpec()
        .setConfig(
            List.of(
                new DeviceClassConfigurationBuilder()
                    .withNewOpaque()
                    .withDriver("other.example.com")
                    .withParameters(parse("{'anything': 'goes'}"))
                    .endOpaque()
                    .build()));
    assertThat(client.resource(othersClass).create().getMetadata().getUid()).isNotBlank();
    // an existing class of ours: a label is no spec change and goes on; a config change waits
    DeviceClass labelled =
        client
            .resources(DeviceClass.class)
            .withName("kept-class")
            .edit(
                c -> {
                  c.getMetadata().getLabels().put("edited", "while-down");
                  return c;
                });
    assertThat(labelled.getMetadata().getLabels()).containsEntry("edited", "while-down");
    assertThat(
            refusedWhileDown(
                () ->
                    client
                        .resources(DeviceClass.class)
                        .withName("kept-class")
                        .patch(
                            PatchContext.of(PatchType.JSON),
                            "[{\"op\": \"replace\", \"path\": "
                                + "\"/spec/config/0/opaque/parameters/sharing/timeSlicing/interval\","
                                + " \"value\": \"Long\"}]")))
        .as("a config change of a class configuring our driver")
        .contains("failed calling webhook \"" + WEBHOOK + "\"");
  }

  /** The message of the API server's refusal of {@code write}. */
  private static String refusedWhileDown(Runnable write) {
    KubernetesClientException refused =
        catchThrowableOfType(KubernetesClientException.class, write::run);
    assertThat(refused).as("refused while nothing can check it").isNotNull();
    return refused.getStatus().getMessage();
  }

  /** The slice-publisher with the chart's HTTPS settings, on a certificate for 127.0.0.1. */
  private static ServiceProcess startPublisher(ControlPlane.Running cp) throws Exception {
    Files.createDirectories(DIR);
    Path key = DIR.resolve("webhook.key");
    Path cert = DIR.resolve("webhook.crt");
    CertManager.generateKeyAndCertificate(
        "CN=kdra-slice-publisher-webhook",
        key.toFile(),
        cert.toFile(),
        new GeneralName(GeneralName.iPAddress, "127.0.0.1"));
    Map<String, String> p = new LinkedHashMap<>();
    p.put("quarkus.otel.sdk.disabled", "true");
    p.put("kdra.slice-publisher.drivers", Stack.DRIVER);
    p.put("kdra.slice-publisher.auth.enabled", "true");
    p.put("kdra.slice-publisher.auth.service-accounts", KdraChart.driverAccount());
    p.put("kdra.slice-publisher.leader-election.enabled", "true");
    p.put("kdra.slice-publisher.leader-election.lease-name", KdraChart.PUBLISHER_LEASE);
    p.put("kdra.slice-publisher.leader-election.lease-namespace", KdraChart.NAMESPACE);
    p.put("kdra.slice-publisher.leader-election.identity", "slice-publisher");
    p.put("quarkus.grpc.server.port", String.valueOf(ServiceProcess.freePort()));
    // what the chart's ConfigMap sets (AdmissionWebhookTest in helm-tests)
    p.put("quarkus.http.ssl-port", String.valueOf(ServiceProcess.freePort()));
    p.put("quarkus.http.ssl.certificate.files", cert.toString());
    p.put("quarkus.http.ssl.certificate.key-files", key.toString());
    Path kubeconfig = DIR.resolve("slice-publisher.kubeconfig");
    OwnerOnly.write(
        kubeconfig,
        KdraChart.kubeconfig(
            Config.fromKubeconfig(cp.server().getKubeConfigYaml()),
            cp.dir().resolve(CertManager.API_SERVER_CERT_NAME),
            KdraChart.serviceAccount(KdraChart.PUBLISHER),
            KdraChart.token(client, KdraChart.PUBLISHER)));
    ServiceProcess process =
        ServiceProcess.start(
            "slice-publisher",
            "slice-publisher",
            p,
            Map.of("KUBECONFIG", kubeconfig.toString()),
            Path.of("target", "it-logs", OpaqueConfigWebhookIT.class.getSimpleName())
                .toAbsolutePath());
    process.awaitReady(Duration.ofSeconds(120));
    return process;
  }

  /** The chart's webhook configuration, calling {@code https://127.0.0.1:<port>}. */
  private static ValidatingWebhookConfiguration chartsWebhookAt(String port) throws Exception {
    List<HasMetadata> rendered =
        KdraChart.render().stream()
            .filter(o -> o instanceof ValidatingWebhookConfiguration)
            .toList();
    assertThat(rendered).as("the chart's webhook configurations").hasSize(1);
    ValidatingWebhookConfiguration copy =
        Serialization.unmarshal(
            Serialization.asJson(rendered.get(0)), ValidatingWebhookConfiguration.class);
    var webhook = copy.getWebhooks().get(0);
    assertThat(webhook.getName()).isEqualTo(WEBHOOK);
    assertThat(webhook.getFailurePolicy()).isEqualTo("Fail");
    String path = webhook.getClientConfig().getService().getPath();
    webhook.getClientConfig().setService(null);
    webhook.getClientConfig().setUrl("https://127.0.0.1:" + port + path);
    webhook
        .getClientConfig()
        .setCaBundle(
            Base64.getEncoder()
                .encodeToString(
                    Files.readString(DIR.resolve("webhook.crt")).getBytes(StandardCharsets.UTF_8)));
    return copy;
  }

  private static KubernetesClientException refused(HasMetadata object) {
    KubernetesClientException refused =
        catchThrowableOfType(
            KubernetesClientException.class, () -> client.resource(object).create());
    assertThat(refused).as("refused: %s", object.getMetadata().getName()).isNotNull();
    assertThat(refused.getCode()).isEqualTo(422);
    assertThat(refused.getStatus().getMessage())
        .startsWith("admission webhook \"" + WEBHOOK + "\" denied the request: ");
    return refused;
  }

  private static void assertAdmittedAsTheDriverDecides(
      HasMetadata object, Optional<OpaqueConfigException> driver) {
    if (driver.isEmpty()) {
      assertThat(client.resource(object).create().getMetadata().getUid()).isNotBlank();
      return;
    }
    assertThat(refused(object).getStatus().getMessage())
        .isEqualTo(
            "admission webhook \""
                + WEBHOOK
                + "\" denied the request: "
                + driver.get().getMessage());
  }

  /** Whether the webhook refuses a claim with a known-bad config now (a dry run). */
  private static boolean probeRefused() {
    KubernetesClientException e = probe(ours(parse(bad())));
    return e != null
        && e.getCode() == 422
        && e.getStatus().getMessage().contains("admission webhook \"" + WEBHOOK + "\"");
  }

  /** A dry-run create of a claim with this config: the API server's refusal, or null. */
  private static KubernetesClientException probe(DeviceClaimConfiguration config) {
    ResourceClaim probe = Dra.claim(NS, "probe", KdraChart.GPU_CLASS, 1);
    probe.getSpec().getDevices().setConfig(List.of(config));
    try {
      client.resource(probe).dryRun().create();
      return null;
    } catch (KubernetesClientException e) {
      return e;
    }
  }

  private static Optional<OpaqueConfigException> decode(JsonNode parameters, String at) {
    try {
      OpaqueConfigDecoder.decode(parameters, at);
      return Optional.empty();
    } catch (OpaqueConfigException e) {
      return Optional.of(e);
    }
  }

  private static String ok(String fields) {
    return "{'apiVersion': '"
        + OpaqueConfigDecoder.API_VERSION
        + "', 'kind': 'GpuConfig', "
        + fields
        + "}";
  }

  /** The issue's example: MPS settings under the default strategy. */
  private static String bad() {
    return ok("'sharing': {'mps': {'threads': 4}}");
  }

  private static String good() {
    return ok("'sharing': {'strategy': 'MPS', 'mps': {'activeThreadPercentage': 50}}");
  }

  private static JsonNode parse(String json) {
    try {
      return JSON.readTree(json.replace('\'', '"'));
    } catch (Exception e) {
      throw new IllegalArgumentException(json, e);
    }
  }

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
    return new DeviceClaimConfigurationBuilder()
        .withNewOpaque()
        .withDriver("nic.example.com")
        .withParameters(parse("{'sharing': {'mps': 4}}"))
        .endOpaque()
        .build();
  }

  private static DeviceClass deviceClass(String name, JsonNode parameters) {
    DeviceClass c = Dra.gpuClass(name, null);
    c.getMetadata().setLabels(new HashMap<>(Map.of("test", "opaque-webhook")));
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
}
