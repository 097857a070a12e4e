package io.kdra.helmtests;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.fabric8.kubernetes.api.model.HasMetadata;
import java.util.List;
import java.util.Map;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

/** templates/validation.yaml: combinations the schema cannot see fail with a clear message. */
class ValidationTest {

  static Stream<Arguments> badCombinations() {
    return Stream.of(
        Arguments.of(
            "two publishers without leader election",
            Chart.values(
                "slicePublisher.replicas",
                2,
                "slicePublisher.config.leader-election.enabled",
                false),
            "slicePublisher.replicas is 2 but slicePublisher.config.leader-election.enabled is false"),
        Arguments.of(
            "two controllers without leader election",
            Chart.values("claimController.config.leader-election.enabled", false),
            "claimController.replicas is 2 but claimController.config.leader-election.enabled is false"),
        Arguments.of(
            "the bridge outside GKE without the CRD",
            Chart.values("computeClassBridge.enabled", true),
            "computeClassBridge.enabled needs the ComputeClass CRD"),
        Arguments.of(
            "the chart's CRD on GKE",
            Chart.values("cluster.gke", true, "computeClassBridge.installComputeClassCRD", true),
            "GKE owns the ComputeClass CRD"),
        Arguments.of(
            "two bridges without leader election",
            Chart.values(
                "computeClassBridge.enabled",
                true,
                "computeClassBridge.installComputeClassCRD",
                true,
                "computeClassBridge.config.leader-election.enabled",
                false),
            "computeClassBridge.replicas is 2 but computeClassBridge.config.leader-election.enabled is false"),
        Arguments.of(
            "devices without node operations while the gate is off",
            Chart.values("deviceDriver.config.skip-node-operations", List.of("*")),
            "deviceDriver.config.skip-node-operations needs"
                + " featureGates.DRAOptionalNodeOperations=true"),
        Arguments.of(
            "one name for both drivers",
            Chart.values("driverNames.tpu", "gpu.kdra.io"),
            "driverNames.gpu and driverNames.tpu are both \"gpu.kdra.io\""),
        Arguments.of(
            "a driver with nobody to publish for it",
            Chart.values("slicePublisher.enabled", false),
            "deviceDriver.enabled without slicePublisher.enabled"),
        Arguments.of(
            "a publisher that does not serve the driver",
            Chart.values("slicePublisher.config.drivers", List.of("tpu.kdra.io")),
            "does not contain the device-driver's name \"gpu.kdra.io\""),
        Arguments.of(
            "the nvidia backend without the host's devices",
            Chart.values("deviceDriver.backend", "nvidia"),
            "deviceDriver.backend=nvidia reads the node's devices"),
        Arguments.of(
            "the nvidia backend without privilege",
            Chart.values(
                "deviceDriver.backend", "nvidia", "deviceDriver.hostDevices.enabled", true),
            "deviceDriver.backend=nvidia needs deviceDriver.securityContext.privileged=true"),
        Arguments.of(
            "the nvidia backend without the driver root",
            Chart.values(
                "deviceDriver.backend",
                "nvidia",
                "deviceDriver.hostDevices.enabled",
                true,
                "deviceDriver.securityContext.privileged",
                true),
            "deviceDriver.backend=nvidia runs nvidia-smi from the node's NVIDIA driver root"),
        Arguments.of(
            "the nvidia backend with nvidia-smi outside the driver root's mount",
            Chart.values(
                "deviceDriver.backend",
                "nvidia",
                "deviceDriver.hostDevices.enabled",
                true,
                "deviceDriver.securityContext.privileged",
                true,
                "deviceDriver.extraVolumes",
                List.of(Map.of("name", "driver-root", "hostPath", Map.of("path", "/"))),
                "deviceDriver.extraVolumeMounts",
                List.of(Map.of("name", "driver-root", "mountPath", "/driver-root")),
                "deviceDriver.config.nvidia.smi-path",
                "/usr/bin/nvidia-smi"),
            "deviceDriver.backend=nvidia runs nvidia-smi from the node's NVIDIA driver root"),
        Arguments.of(
            "an inventory for a real backend",
            Chart.values(
                "deviceDriver.backend",
                "tpu",
                "deviceDriver.hostDevices.enabled",
                true,
                "deviceDriver.inventory.configMap",
                "inv"),
            "deviceDriver.inventory is read by the simulated backend only"),
        Arguments.of(
            "a relative MPS root",
            Chart.values(
                "deviceDriver.config.sharing.strategy",
                "mps",
                "deviceDriver.config.sharing.mps-root",
                "run/mps"),
            "deviceDriver.config.sharing.mps-root is \"run/mps\": it is a host directory"),
        Arguments.of(
            "the host's network with every component on port 8080",
            Chart.values("hostNetwork", true),
            "hostNetwork: claimController.httpPort and deviceDriver.httpPort are both 8080"),
        Arguments.of(
            "the host's network with the publisher's gRPC on another's HTTP port",
            Chart.values(
                "hostNetwork",
                true,
                "deviceDriver.httpPort",
                9000,
                "claimController.httpPort",
                8081),
            "hostNetwork: deviceDriver.httpPort and slicePublisher.grpcPort are both 9000"),
        Arguments.of(
            "an API server host without a port",
            Chart.values("apiServer.host", "10.0.0.5"),
            "apiServer.host \"10.0.0.5\" and apiServer.port \"\": set both"),
        Arguments.of(
            "cert-manager without an issuer",
            Chart.values("slicePublisher.tls.source", "cert-manager"),
            "slicePublisher.tls.source=cert-manager needs slicePublisher.tls.certManager.issuerRef.name"),
        Arguments.of(
            "an admission policy that would both refuse and warn",
            Chart.values("admission.opaqueConfigPolicy.validationActions", List.of("Deny", "Warn")),
            "admission.opaqueConfigPolicy.validationActions has both Deny and Warn"),
        Arguments.of(
            "a writers policy that would both refuse and warn",
            Chart.values("admission.writersPolicy.validationActions", List.of("Deny", "Warn")),
            "admission.writersPolicy.validationActions has both Deny and Warn"),
        Arguments.of(
            "the admission webhook without TLS",
            Chart.values("slicePublisher.tls.enabled", false),
            "admission.opaqueConfigWebhook.enabled needs slicePublisher.tls.enabled"),
        Arguments.of(
            "the host's network with the webhook on another's HTTP port",
            Chart.values(
                "hostNetwork",
                true,
                "deviceDriver.httpPort",
                8443,
                "claimController.httpPort",
                8081),
            "hostNetwork: deviceDriver.httpPort and slicePublisher.webhookPort are both 8443"),
        Arguments.of(
            "tracing without an endpoint",
            Chart.values("opentelemetry.enabled", true),
            "opentelemetry.enabled needs opentelemetry.endpoint"));
  }

  @ParameterizedTest(name = "{0}")
  @MethodSource("badCombinations")
  void refused(String what, Map<String, Object> values, String message) {
    assertThatThrownBy(() -> Chart.template(values)).hasMessageContaining(message);
  }

  /**
   * helm lint renders in lint mode, where {@code fail} only logs: validation.yaml is proven by
   * rendering (above), the schema by lint too.
   */
  @Test
  void lintReportsSchemaErrorsButNotValidationFailures() {
    var schema = Chart.lint(Chart.values("logLevel", "LOUD"));
    assertThat(schema.isFailed()).as("%s", schema.getMessages()).isTrue();
    assertThat(schema.getMessages()).anyMatch(m -> m.contains("/logLevel"));
    assertThat(Chart.lint(Chart.values("slicePublisher.enabled", false)).isFailed()).isFalse();
  }

  @Test
  void oneReplicaWithoutLeaderElectionIsFineAndHasNoLeaseRole() {
    List<HasMetadata> objects =
        Chart.render(
            Chart.values(
                "slicePublisher.replicas",
                1,
                "slicePublisher.config.leader-election.enabled",
                false));
    assertThat(objects)
        .noneMatch(
            o ->
                o.getKind().equals("Role")
                    && o.getMetadata().getName().equals("kdra-slice-publisher-leader-election"));
  }

  /**
   * What the nvidia backend needs, given: root with privilege and nvidia-smi in the driver root.
   */
  @Test
  void theNvidiaBackendWithPrivilegeAndTheDriverRootRenders() {
    List<HasMetadata> objects =
        Chart.render(
            Chart.values(
                "deviceDriver.backend",
                "nvidia",
                "deviceDriver.hostDevices.enabled",
                true,
                "deviceDriver.securityContext.privileged",
                true,
                "deviceDriver.extraVolumes",
                List.of(Map.of("name", "driver-root", "hostPath", Map.of("path", "/"))),
                "deviceDriver.extraVolumeMounts",
                List.of(
                    Map.of("name", "driver-root", "mountPath", "/driver-root", "readOnly", true)),
                "deviceDriver.config.nvidia.smi-path",
                "/driver-root/usr/bin/nvidia-smi"));
    assertThat(objects).extracting(HasMetadata::getKind).contains("DaemonSet");
  }

  @Test
  void theBridgeOnGkeInstallsNoCrd() {
    List<HasMetadata> objects =
        Chart.render(Chart.values("cluster.gke", true, "computeClassBridge.enabled", true));
    assertThat(objects)
        .extracting(HasMetadata::getKind)
        .contains("Deployment")
        .doesNotContain("CustomResourceDefinition");
  }

  @Test
  void theBridgeElsewhereInstallsTheCompatibleCrd() {
    List<HasMetadata> objects =
        Chart.render(
            Chart.values(
                "computeClassBridge.enabled",
                true,
                "computeClassBridge.installComputeClassCRD",
                true));
    assertThat(objects)
        .filteredOn(o -> o.getKind().equals("CustomResourceDefinition"))
        .extracting(o -> o.getMetadata().getName())
        .containsExactly("computeclasses.cloud.google.com");
  }
}
