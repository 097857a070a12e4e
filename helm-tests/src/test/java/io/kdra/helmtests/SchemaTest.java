package io.kdra.helmtests;

import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.List;
import java.util.Map;
import java.util.stream.Stream;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

/** values.schema.json refuses bad values before anything renders, naming the value. */
class SchemaTest {

  static Stream<Arguments> badValues() {
    return Stream.of(
        Arguments.of("an unknown top-level key", Chart.values("replicaCount", 3), "replicaCount"),
        Arguments.of("a typo in a component", Chart.values("slicePublisher.replica", 2), "replica"),
        Arguments.of(
            "a typo in a service property",
            Chart.values("slicePublisher.config.stale.taint-afer", "2m"),
            "taint-afer"),
        Arguments.of("an unknown backend", Chart.values("deviceDriver.backend", "cuda"), "backend"),
        Arguments.of("negative replicas", Chart.values("claimController.replicas", -1), "replicas"),
        Arguments.of(
            "replicas as a string", Chart.values("slicePublisher.replicas", "two"), "replicas"),
        Arguments.of(
            "a duration Quarkus cannot read",
            Chart.values("slicePublisher.config.stale.taint-after", "2 minutes"),
            "taint-after"),
        Arguments.of(
            "an unknown template mode",
            Chart.values("claimController.config.template-mode", "steal"),
            "template-mode"),
        Arguments.of("an unknown log level", Chart.values("logLevel", "LOUD"), "logLevel"),
        Arguments.of(
            "a log level below the services' build-time minimum",
            Chart.values("claimController.logLevel", "TRACE"),
            "logLevel"),
        Arguments.of(
            "an unknown catalog profile",
            Chart.values("computeClassBridge.config.catalog.profiles", List.of("nvidia")),
            "profiles"),
        Arguments.of(
            "an OTLP protocol that does not exist",
            Chart.values("opentelemetry.protocol", "udp"),
            "protocol"),
        Arguments.of(
            "an image pull policy that does not exist",
            Chart.values("deviceDriver.image.pullPolicy", "Sometimes"),
            "pullPolicy"),
        Arguments.of(
            "a driver name that is no DNS subdomain",
            Chart.values("driverNames.gpu", "GPU_Driver"),
            "gpu"),
        Arguments.of(
            "a sampler, which Quarkus fixes at build time",
            Chart.values("opentelemetry.sampler", "always_off"),
            "sampler"),
        Arguments.of(
            "a network pool without its source node",
            Chart.values(
                "slicePublisher.config.network-pools",
                Map.of("fabric", Map.of("driver", "nic.example.org"))),
            "source-node"),
        Arguments.of(
            "a taint effect that does not exist",
            Chart.values("slicePublisher.config.unhealthy-taint.effect", "Evict"),
            "effect"),
        Arguments.of(
            "a digest that is no sha256",
            Chart.values("claimController.image.digest", "latest"),
            "digest"),
        Arguments.of(
            "a scrape interval Prometheus cannot read",
            Chart.values("monitoring.podMonitor.interval", "30 seconds"),
            "interval"),
        Arguments.of(
            "a feature gate the allocator does not know",
            Chart.values("featureGates.DRAFancyDevices", true),
            "DRAFancyDevices"),
        Arguments.of(
            "a feature gate that is no bool",
            Chart.values("featureGates.DRAPrioritizedList", "off"),
            "DRAPrioritizedList"),
        Arguments.of(
            "an admission action that does not exist",
            Chart.values("admission.opaqueConfigPolicy.validationActions", List.of("Reject")),
            "validationActions"),
        Arguments.of(
            "no admission action at all",
            Chart.values("admission.opaqueConfigPolicy.validationActions", List.of()),
            "validationActions"),
        Arguments.of(
            "an extended resource name without a domain",
            Chart.values("deviceClasses.gpu.extendedResourceName", "gpu"),
            "extendedResourceName"),
        Arguments.of(
            "a bare on for the MIG mode (YAML's true), which is no mode",
            Chart.values("deviceDriver.config.mig-mode", true),
            "mig-mode"),
        Arguments.of(
            "a driver namespace that is no DNS label",
            Chart.values("deviceDriver.namespace", "Kdra_Driver"),
            "namespace"),
        Arguments.of(
            "a typo in a monitoring switch",
            Chart.values("monitoring.prometheusRules.enabled", true),
            "prometheusRules"));
  }

  @ParameterizedTest(name = "{0}")
  @MethodSource("badValues")
  void schemaRefuses(String what, Map<String, Object> values, String named) {
    assertThatThrownBy(() -> Chart.template(values))
        .hasMessageContaining("values don't meet the specifications of the schema")
        .hasMessageContaining(named);
  }
}
