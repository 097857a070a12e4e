package io.kdra.it;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.fabric8.kubernetes.api.model.HasMetadata;
import io.fabric8.kubernetes.api.model.admissionregistration.v1.ValidatingWebhookConfiguration;
import io.fabric8.kubernetes.api.model.resource.v1.DeviceClaimConfiguration;
import io.fabric8.kubernetes.api.model.resource.v1.DeviceClaimConfigurationBuilder;
import io.fabric8.kubernetes.api.model.resource.v1.ResourceClaim;
import io.fabric8.kubernetes.api.model.resource.v1.ResourceClaimTemplate;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientException;
import io.fabric8.kubernetes.client.utils.Serialization;
import io.kdra.core.config.OpaqueConfigDecoder;
import io.kdra.it.chart.KdraChart;
import io.kdra.it.services.Dra;
import io.kdra.it.services.PublisherWebhook;
import io.kdra.it.services.Stack;
import java.time.Duration;
import java.util.Base64;
import java.util.List;
import java.util.Map;
import java.util.Random;

/**
 * The soak's claim and template writes through the chart's admission webhook, served by the
 * slice-publishers ({@link PublisherWebhook}), and the fault of that webhook down (its link cut or
 * paused) while they go on. Each write carries no config, a valid config of our driver or an
 * invalid one, and must end as the chart's failurePolicy Fail says ({@link #expected}): admitted
 * exactly as written, or refused with the API server's message and not written at all. Once the
 * webhook is back, a write with a valid config is admitted again within {@link #BACK}.
 */
final class SoakWebhook {

  static final String WEBHOOK = "opaque-config.kdra.io";

  private static final com.fasterxml.jackson.databind.ObjectMapper JSON =
      new com.fasterxml.jackson.databind.ObjectMapper();

  /** How long a write with a valid config may keep being refused once the webhook is up. */
  static final Duration BACK = Duration.ofSeconds(30);

  /** What a write carries in its opaque configs. */
  enum Config {
    NONE,
    VALID,
    INVALID
  }

  /** How a write must end. */
  enum Outcome {
    ADMITTED,
    /** Refused by the webhook: the config is invalid. */
    DENIED,
    /** Refused because the API server could not call the webhook (failurePolicy Fail). */
    NOT_CHECKED
  }

  private final KubernetesClient client;
  private final PublisherWebhook webhook;
  private final Random random;
  private final Map<String, Integer> counts;
  private ValidatingWebhookConfiguration configuration;
  private boolean down;

  SoakWebhook(
      KubernetesClient client,
      PublisherWebhook webhook,
      Random random,
      Map<String, Integer> counts) {
    this.client = client;
    this.webhook = webhook;
    this.random = random;
    this.counts = counts;
  }

  /**
   * How a write carrying {@code config} must end with the webhook {@code down} or up: without a
   * config of our driver the API server never calls it (its matchConditions); with one it is never
   * admitted unchecked. Up, an invalid config may also be refused unchecked (a publisher replica
   * restarting or frozen), never admitted; a valid one is admitted, if need be on a retry.
   */
  static List<Outcome> expected(Config config, boolean down) {
    return switch (config) {
      case NONE -> List.of(Outcome.ADMITTED);
      case VALID -> down ? List.of(Outcome.NOT_CHECKED) : List.of(Outcome.ADMITTED);
      case INVALID ->
          down ? List.of(Outcome.NOT_CHECKED) : List.of(Outcome.DENIED, Outcome.NOT_CHECKED);
    };
  }

  /** Registers the chart's webhook configuration at the publishers' link; returns once called. */
  void register() {
    List<HasMetadata> rendered =
        KdraChart.render().stream()
            .filter(o -> o instanceof ValidatingWebhookConfiguration)
            .toList();
    assertThat(rendered).as("the chart's webhook configurations").hasSize(1);
    ValidatingWebhookConfiguration copy =
        Serialization.unmarshal(
            Serialization.asJson(rendered.get(0)), ValidatingWebhookConfiguration.class);
    var hook = copy.getWebhooks().get(0);
    assertThat(hook.getName()).isEqualTo(WEBHOOK);
    assertThat(hook.getFailurePolicy()).isEqualTo("Fail");
    String path = hook.getClientConfig().getService().getPath();
    hook.getClientConfig().setService(null);
    hook.getClientConfig().setUrl(webhook.url(path));
    hook.getClientConfig().setCaBundle(Base64.getEncoder().encodeToString(webhook.certificate()));
    configuration = client.resource(copy).forceConflicts().serverSideApply();
    // the API server calls a new webhook once its informer has it: wait for that state
    await("the webhook refuses an invalid config")
        .atMost(Duration.ofSeconds(60))
        .until(() -> dryRun(Config.INVALID) == Outcome.DENIED);
  }

  /** Removes the webhook configuration; returns once the API server no longer calls it. */
  void unregister() {
    if (configuration == null) {
      return;
    }
    client.resource(configuration).delete();
    await("the webhook no longer called")
        .atMost(Duration.ofSeconds(60))
        .until(() -> dryRun(Config.INVALID) == Outcome.ADMITTED);
    configuration = null;
  }

  /** Whether the webhook is down now (the fault). */
  boolean down() {
    return down;
  }

  /** Takes the webhook down: its link cut ({@code loud}) or paused. */
  void takeDown(boolean loud) {
    if (loud) {
      webhook.link().cut();
    } else {
      webhook.link().pause();
    }
    down = true;
  }

  /** Brings it back; returns once a write with a valid config is admitted again. */
  void bringBack() {
    webhook.link().heal();
    down = false;
    long since = System.nanoTime();
    await("a valid config admitted again after the webhook came back")
        .atMost(BACK)
        .pollInterval(Duration.ofMillis(250))
        .until(() -> dryRun(Config.VALID) == Outcome.ADMITTED);
    System.out.printf(
        "[soak] webhook back: a valid config admitted %d ms after the heal%n",
        (System.nanoTime() - since) / 1_000_000);
  }

  /** A config drawn at random: none mostly, a valid one often, an invalid one at times. */
  Config draw() {
    int roll = random.nextInt(10);
    return roll < 5 ? Config.NONE : roll < 9 ? Config.VALID : Config.INVALID;
  }

  /** Creates {@code claim} with {@code config}, and checks how it ends; returns the operation. */
  String create(ResourceClaim claim, Config config) {
    claim.getSpec().getDevices().setConfig(configs(config));
    return create(claim, config, ResourceClaim.class);
  }

  /**
   * Creates {@code template} with {@code config}, and checks how it ends; returns the operation.
   */
  String create(ResourceClaimTemplate template, Config config) {
    template.getSpec().getSpec().getDevices().setConfig(configs(config));
    return create(template, config, ResourceClaimTemplate.class);
  }

  private <T extends HasMetadata> String create(T object, Config config, Class<T> type) {
    boolean wasDown = down;
    List<Outcome> allowed = expected(config, wasDown);
    Outcome outcome = write(object);
    if (outcome == Outcome.NOT_CHECKED && !wasDown && config == Config.VALID) {
      // up, but the call failed (a publisher replica restarting or frozen): a client retries
      await("a valid config admitted on a retry while the webhook is up")
          .atMost(BACK)
          .pollInterval(Duration.ofMillis(250))
          .until(() -> write(object) != Outcome.NOT_CHECKED);
      outcome = Outcome.ADMITTED;
      counts.merge("webhook: admitted on a retry", 1, Integer::sum);
    }
    String kind = type.getSimpleName();
    String name = object.getMetadata().getName();
    assertThat(allowed)
        .as(
            "%s %s with %s config, webhook %s: ended %s",
            kind, name, config, wasDown ? "down" : "up", outcome)
        .contains(outcome);
    T stored =
        client
            .resources(type)
            .inNamespace(object.getMetadata().getNamespace())
            .withName(name)
            .get();
    if (outcome == Outcome.ADMITTED) {
      assertThat(stored).as("%s %s admitted", kind, name).isNotNull();
      assertThat(opaque(configsOf(stored)))
          .as("config of %s %s, as written", kind, name)
          .isEqualTo(opaque(configs(config)));
    } else {
      // a refused create leaves nothing: no half-written object
      assertThat(stored).as("%s %s refused (%s), yet stored", kind, name, outcome).isNull();
    }
    counts.merge(
        "webhook: " + config + " " + outcome + (wasDown ? " (down)" : ""), 1, Integer::sum);
    return (object instanceof ResourceClaim ? "create-claim" : "create-template")
        + (config == Config.NONE ? "" : " (" + config.name().toLowerCase() + " config)");
  }

  /** Each config's driver and parameters, as JSON (the order of an object's fields not counted). */
  private static List<Map.Entry<String, com.fasterxml.jackson.databind.JsonNode>> opaque(
      List<DeviceClaimConfiguration> configs) {
    return configs.stream()
        .map(
            c ->
                Map.entry(
                    c.getOpaque().getDriver(),
                    (com.fasterxml.jackson.databind.JsonNode)
                        JSON.valueToTree(c.getOpaque().getParameters())))
        .toList();
  }

  private static List<DeviceClaimConfiguration> configsOf(HasMetadata stored) {
    List<DeviceClaimConfiguration> c =
        stored instanceof ResourceClaim claim
            ? claim.getSpec().getDevices().getConfig()
            : ((ResourceClaimTemplate) stored).getSpec().getSpec().getDevices().getConfig();
    return c == null ? List.of() : c;
  }

  /**
   * Creates {@code object}: admitted, or refused by the webhook or for want of it. Any other
   * refusal (a race of the soak's own, 409) goes to the caller.
   */
  private Outcome write(HasMetadata object) {
    try {
      client.resource(object).create();
      return Outcome.ADMITTED;
    } catch (KubernetesClientException e) {
      return refusal(e);
    }
  }

  /** A dry-run create of a claim with {@code config} (a probe: nothing is stored). */
  private Outcome dryRun(Config config) {
    ResourceClaim probe = Dra.claim(namespaceOfProbes(), "webhook-probe", KdraChart.GPU_CLASS, 1);
    probe.getSpec().getDevices().setConfig(configs(config));
    try {
      client.resource(probe).dryRun().create();
      return Outcome.ADMITTED;
    } catch (KubernetesClientException e) {
      return refusal(e);
    }
  }

  private static Outcome refusal(KubernetesClientException e) {
    String message = e.getStatus() == null ? "" : String.valueOf(e.getStatus().getMessage());
    if (e.getCode() == 422 && message.startsWith("admission webhook \"" + WEBHOOK + "\" denied")) {
      assertThat(message).as("the webhook's refusal names the field").contains("sharing.mps");
      return Outcome.DENIED;
    }
    if (message.contains("failed calling webhook \"" + WEBHOOK + "\"")) {
      return Outcome.NOT_CHECKED;
    }
    throw e;
  }

  private String namespaceOfProbes() {
    return KdraChart.NAMESPACE;
  }

  private static List<DeviceClaimConfiguration> configs(Config config) {
    return switch (config) {
      case NONE -> List.of();
      case VALID -> List.of(ours("{'sharing': {'strategy': 'Exclusive'}}"));
      // the example: MPS settings under the default strategy
      case INVALID -> List.of(ours("{'sharing': {'mps': {'activeThreadPercentage': 50}}}"));
    };
  }

  private static DeviceClaimConfiguration ours(String sharing) {
    Map<String, Object> parameters = Serialization.unmarshal(sharing.replace('\'', '"'), Map.class);
    parameters.put("apiVersion", OpaqueConfigDecoder.API_VERSION);
    parameters.put("kind", OpaqueConfigDecoder.KIND);
    return new DeviceClaimConfigurationBuilder()
        .withNewOpaque()
        .withDriver(Stack.DRIVER)
        .withParameters(parameters)
        .endOpaque()
        .build();
  }
}
