package io.kdra.helmtests;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.fabric8.kubernetes.api.model.HasMetadata;
import io.fabric8.kubernetes.api.model.PodSpec;
import io.fabric8.kubernetes.api.model.Volume;
import io.fabric8.kubernetes.api.model.apps.DaemonSet;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import org.junit.jupiter.api.Test;

/**
 * A second release with only the device-driver (docs/user/install.md: TPU nodes next to GPU nodes)
 * dials the first release's slice-publisher: it must send a token for that publisher's audience and
 * trust its CA, which this release does not generate. The CA comes from {@code
 * deviceDriver.publisherCA} (the first release's TLS Secret, or a ConfigMap holding the CA); the
 * chart refuses to render a TLS client without one.
 */
class DriverOnlyReleaseRenderTest {

  static final String RELEASE = "kdra";
  private static final String DS = RELEASE + "-device-driver";
  private static final String CA_FILE = "/var/run/secrets/kdra.io/publisher-ca/ca.crt";

  /** The second release of install.md, with these values more. */
  static Map<String, Object> driverOnly(Object... more) {
    List<Object> pairs =
        new ArrayList<>(
            List.of(
                "slicePublisher.enabled",
                false,
                "claimController.enabled",
                false,
                "deviceClasses.gpu.enabled",
                false,
                "deviceClasses.tpu.enabled",
                false,
                "admission.opaqueConfigPolicy.enabled",
                false,
                "deviceDriver.config.publisher.address",
                "kdra-slice-publisher.kdra-system.svc:9000"));
    pairs.addAll(Arrays.asList(more));
    return Chart.values(pairs.toArray());
  }

  @Test
  void withoutTheFirstReleasesCaTheChartRefusesToRender() {
    assertThatThrownBy(() -> Chart.template(driverOnly()))
        .hasMessageContaining("deviceDriver.publisherCA.secret")
        .hasMessageContaining("deviceDriver.publisherCA.configMap")
        .hasMessageContaining("slicePublisher.tls.enabled=false");
  }

  @Test
  void bothASecretAndAConfigMapAreRefused() {
    assertThatThrownBy(
            () ->
                Chart.template(
                    driverOnly(
                        "deviceDriver.publisherCA.secret", "kdra-slice-publisher-tls",
                        "deviceDriver.publisherCA.configMap", "publisher-ca")))
        .hasMessageContaining("either");
  }

  @Test
  void theFirstReleasesTlsSecretGivesTheCa() {
    List<HasMetadata> objects =
        Chart.render(driverOnly("deviceDriver.publisherCA.secret", "kdra-slice-publisher-tls"));
    PodSpec pod = pod(objects);
    Volume ca = volume(pod, "publisher-ca");
    assertThat(ca.getSecret().getSecretName()).isEqualTo("kdra-slice-publisher-tls");
    assertThat(ca.getSecret().getItems())
        .extracting(i -> i.getKey() + "->" + i.getPath())
        .containsExactly("ca.crt->ca.crt");
    assertMounted(pod, "publisher-ca", "/var/run/secrets/kdra.io/publisher-ca");
    assertThat(properties(objects))
        .containsEntry("kdra.device-driver.publisher.tls.ca-file", CA_FILE)
        .containsEntry(
            "kdra.device-driver.publisher.address", "kdra-slice-publisher.kdra-system.svc:9000");
    assertSendsAToken(objects);
  }

  @Test
  void aConfigMapKeyGivesTheCa() {
    List<HasMetadata> objects =
        Chart.render(
            driverOnly(
                "deviceDriver.publisherCA.configMap", "first-release-ca",
                "deviceDriver.publisherCA.key", "ca.pem"));
    Volume ca = volume(pod(objects), "publisher-ca");
    assertThat(ca.getConfigMap().getName()).isEqualTo("first-release-ca");
    assertThat(ca.getConfigMap().getItems())
        .extracting(i -> i.getKey() + "->" + i.getPath())
        .containsExactly("ca.pem->ca.crt");
    assertThat(properties(objects))
        .containsEntry("kdra.device-driver.publisher.tls.ca-file", CA_FILE);
    assertSendsAToken(objects);
  }

  @Test
  void aPlainTextPublisherNeedsNoCa() {
    List<HasMetadata> objects = Chart.render(driverOnly("slicePublisher.tls.enabled", false));
    assertThat(pod(objects).getVolumes())
        .extracting(Volume::getName)
        .doesNotContain("publisher-ca");
    assertThat(properties(objects).stringPropertyNames())
        .noneMatch(p -> p.startsWith("kdra.device-driver.publisher.tls."));
    assertSendsAToken(objects);
  }

  @Test
  void theFirstReleasesPublisherAcceptsTheSecondReleasesDriver() {
    List<HasMetadata> objects =
        Chart.render(
            Chart.values(
                "slicePublisher.auth.extraServiceAccounts",
                List.of("kdra-system:kdra-tpu-device-driver")));
    assertThat(
            Rendered.properties(objects, RELEASE + "-slice-publisher")
                .getProperty("kdra.slice-publisher.auth.service-accounts"))
        .isEqualTo("kdra-system:kdra-device-driver,kdra-system:kdra-tpu-device-driver");
  }

  /** The publisher authenticates each stream: the driver sends a token for its audience. */
  private static void assertSendsAToken(List<HasMetadata> objects) {
    PodSpec pod = pod(objects);
    var token = volume(pod, "publisher-token").getProjected().getSources().get(0);
    assertThat(token.getServiceAccountToken().getAudience()).isEqualTo("kdra-slice-publisher");
    assertMounted(pod, "publisher-token", "/var/run/secrets/kdra.io/publisher");
    assertThat(properties(objects))
        .containsEntry(
            "kdra.device-driver.publisher.token-file", "/var/run/secrets/kdra.io/publisher/token");
  }

  private static void assertMounted(PodSpec pod, String volume, String path) {
    assertThat(pod.getContainers().get(0).getVolumeMounts())
        .filteredOn(m -> m.getName().equals(volume))
        .singleElement()
        .satisfies(m -> assertThat(m.getMountPath()).isEqualTo(path));
  }

  private static Properties properties(List<HasMetadata> objects) {
    return Rendered.properties(objects, DS);
  }

  private static PodSpec pod(List<HasMetadata> objects) {
    return Rendered.one(objects, DaemonSet.class, DS).getSpec().getTemplate().getSpec();
  }

  private static Volume volume(PodSpec pod, String name) {
    return pod.getVolumes().stream()
        .filter(v -> v.getName().equals(name))
        .findFirst()
        .orElseThrow(() -> new AssertionError("no volume " + name + " in " + pod.getVolumes()));
  }
}
