package io.kdra.helmtests;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.fabric8.kubernetes.api.model.ConfigMap;
import io.fabric8.kubernetes.api.model.GenericKubernetesResource;
import io.fabric8.kubernetes.api.model.HasMetadata;
import io.fabric8.kubernetes.api.model.PodSpec;
import io.fabric8.kubernetes.api.model.ResourceQuota;
import io.fabric8.kubernetes.api.model.Secret;
import io.fabric8.kubernetes.api.model.Volume;
import io.fabric8.kubernetes.api.model.apps.DaemonSet;
import io.fabric8.kubernetes.api.model.networking.v1.NetworkPolicy;
import io.fabric8.kubernetes.api.model.networking.v1.NetworkPolicyPeer;
import io.fabric8.kubernetes.api.model.rbac.ClusterRoleBinding;
import java.io.ByteArrayInputStream;
import java.nio.charset.StandardCharsets;
import java.security.cert.CertificateFactory;
import java.security.cert.X509Certificate;
import java.util.Base64;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/**
 * deviceDriver.namespace: the privileged driver in a namespace of its own, the controllers in the
 * release's (docs/user/install.md, "Running the driver in its own namespace").
 */
class DriverNamespaceRenderTest {

  static final String DRIVER_NS = "kdra-driver";
  static final String CA_CONFIG_MAP = "kdra-device-driver-publisher-ca";

  static Map<String, Object> inDriverNamespace(Object... more) {
    Object[] pairs = new Object[more.length + 2];
    pairs[0] = "deviceDriver.namespace";
    pairs[1] = DRIVER_NS;
    System.arraycopy(more, 0, pairs, 2, more.length);
    return Chart.values(pairs);
  }

  @Test
  void everyDriverObjectLandsInTheDriversNamespaceAndEveryOtherInTheReleases() {
    List<HasMetadata> objects =
        Chart.render(
            inDriverNamespace(
                "computeClassBridge.enabled",
                true,
                "computeClassBridge.installComputeClassCRD",
                true,
                "monitoring.grafanaDashboard.enabled",
                true));
    assertThat(objects)
        .filteredOn(DriverNamespaceRenderTest::isDrivers)
        .filteredOn(o -> o.getMetadata().getNamespace() != null)
        .extracting(o -> o.getKind() + " " + o.getMetadata().getName())
        .containsExactlyInAnyOrder(
            "DaemonSet kdra-device-driver",
            "ServiceAccount kdra-device-driver",
            "ConfigMap kdra-device-driver",
            "ConfigMap " + CA_CONFIG_MAP,
            "ResourceQuota kdra-device-driver-critical-pods");
    for (HasMetadata o : objects) {
      String ns = o.getMetadata().getNamespace();
      if (ns == null) {
        continue; // cluster-scoped
      }
      assertThat(ns)
          .as("%s %s", o.getKind(), o.getMetadata().getName())
          .isEqualTo(isDrivers(o) ? DRIVER_NS : Chart.NAMESPACE);
    }
    assertThat(Rendered.one(objects, ClusterRoleBinding.class, "kdra-device-driver").getSubjects())
        .singleElement()
        .satisfies(
            s -> {
              assertThat(s.getName()).isEqualTo("kdra-device-driver");
              assertThat(s.getNamespace()).isEqualTo(DRIVER_NS);
            });
  }

  @Test
  void theDriverTrustsThePublishersCaFromAConfigMapInItsNamespace() throws Exception {
    List<HasMetadata> objects = Chart.render(inDriverNamespace());
    PodSpec driver = driverPod(objects);
    Volume ca = volume(driver, "publisher-ca");
    assertThat(ca.getSecret()).as("a Secret volume only reads the pod's namespace").isNull();
    assertThat(ca.getConfigMap().getName()).isEqualTo(CA_CONFIG_MAP);
    assertThat(ca.getConfigMap().getItems())
        .extracting(i -> i.getKey() + "->" + i.getPath())
        .containsExactly("ca.crt->ca.crt");
    assertThat(driver.getVolumes()).noneMatch(v -> v.getSecret() != null);

    // the same CA as the publisher's Secret, in PEM, and the publisher's certificate chains to it
    ConfigMap bundle = Rendered.one(objects, ConfigMap.class, CA_CONFIG_MAP);
    assertThat(bundle.getMetadata().getNamespace()).isEqualTo(DRIVER_NS);
    assertThat(bundle.getData()).containsOnlyKeys("ca.crt");
    Secret tls = Rendered.one(objects, Secret.class, "kdra-slice-publisher-tls");
    String caPem = bundle.getData().get("ca.crt");
    assertThat(caPem)
        .isEqualTo(
            new String(
                Base64.getDecoder().decode(tls.getData().get("ca.crt")), StandardCharsets.UTF_8));
    CertificateFactory x509 = CertificateFactory.getInstance("X.509");
    X509Certificate caCert =
        (X509Certificate)
            x509.generateCertificate(
                new ByteArrayInputStream(caPem.getBytes(StandardCharsets.UTF_8)));
    X509Certificate served =
        (X509Certificate)
            x509.generateCertificate(
                new ByteArrayInputStream(Base64.getDecoder().decode(tls.getData().get("tls.crt"))));
    served.verify(caCert.getPublicKey());

    // the publisher stays where it is: the driver dials and checks its Service in the release's
    assertThat(Rendered.properties(objects, "kdra-device-driver"))
        .containsEntry(
            "kdra.device-driver.publisher.address", "kdra-slice-publisher.kdra-system.svc:9000")
        .containsEntry(
            "kdra.device-driver.publisher.tls.ca-file",
            "/var/run/secrets/kdra.io/publisher-ca/ca.crt")
        .containsEntry(
            "kdra.device-driver.publisher.tls.server-name", "kdra-slice-publisher.kdra-system.svc");
  }

  @Test
  void thePublisherAcceptsTheDriversServiceAccountFromItsNamespace() {
    assertThat(Rendered.properties(Chart.render(inDriverNamespace()), "kdra-slice-publisher"))
        .containsEntry(
            "kdra.slice-publisher.auth.service-accounts", DRIVER_NS + ":kdra-device-driver");
    assertThat(
            Rendered.properties(
                Chart.render(inDriverNamespace("deviceDriver.serviceAccount.name", "gpu-driver")),
                "kdra-slice-publisher"))
        .containsEntry("kdra.slice-publisher.auth.service-accounts", DRIVER_NS + ":gpu-driver");
  }

  @Test
  void thePublishersNetworkPolicyAdmitsTheDriversNamespace() {
    assertThat(grpcPeers(Chart.render(inDriverNamespace())))
        .filteredOn(p -> p.getNamespaceSelector() != null)
        .singleElement()
        .satisfies(
            p -> {
              assertThat(p.getNamespaceSelector().getMatchLabels())
                  .containsExactly(Map.entry("kubernetes.io/metadata.name", DRIVER_NS));
              assertThat(p.getPodSelector().getMatchLabels())
                  .containsEntry("app.kubernetes.io/component", "device-driver");
            });
    // next to the namespaces of other releases' drivers, not instead of them
    Map<String, Object> tpu = Map.of("matchLabels", Map.of("kubernetes.io/metadata.name", "tpu"));
    assertThat(
            grpcPeers(
                Chart.render(
                    inDriverNamespace(
                        "slicePublisher.networkPolicy.driverNamespaceSelector", tpu))))
        .extracting(p -> p.getNamespaceSelector().getMatchLabels())
        .containsExactlyInAnyOrder(
            Map.of("kubernetes.io/metadata.name", "tpu"),
            Map.of("kubernetes.io/metadata.name", DRIVER_NS));
  }

  @Test
  void thePodMonitorScrapesTheDriversNamespaceToo() {
    GenericKubernetesResource monitor =
        Chart.render(inDriverNamespace("monitoring.podMonitor.enabled", true)).stream()
            .filter(o -> o.getKind().equals("PodMonitor"))
            .map(GenericKubernetesResource.class::cast)
            .findFirst()
            .orElseThrow();
    Map<String, Object> spec = monitor.get("spec");
    assertThat(spec.get("namespaceSelector"))
        .isEqualTo(Map.of("matchNames", List.of(Chart.NAMESPACE, DRIVER_NS)));
  }

  @Test
  void inKubeSystemTheDriverNeedsNoQuota() {
    List<HasMetadata> objects = Chart.render(Chart.values("deviceDriver.namespace", "kube-system"));
    assertThat(objects).noneMatch(o -> o instanceof ResourceQuota);
    assertThat(
            Rendered.one(objects, DaemonSet.class, "kdra-device-driver")
                .getMetadata()
                .getNamespace())
        .isEqualTo("kube-system");
  }

  /**
   * Without the value, or with the release's own namespace, nothing changes: the driver keeps the
   * Secret's CA, no ConfigMap is added. (The TLS material differs between any two renders.)
   */
  @Test
  void theReleasesOwnNamespaceRendersAsWithoutTheValue() {
    String without = withoutTlsMaterial(Chart.template(Map.of()));
    assertThat(withoutTlsMaterial(Chart.template(Chart.values("deviceDriver.namespace", ""))))
        .isEqualTo(without);
    assertThat(
            withoutTlsMaterial(
                Chart.template(Chart.values("deviceDriver.namespace", Chart.NAMESPACE))))
        .isEqualTo(without);
    List<HasMetadata> objects = Chart.render(Map.of());
    assertThat(volume(driverPod(objects), "publisher-ca").getSecret().getSecretName())
        .isEqualTo("kdra-slice-publisher-tls");
    assertThat(objects).noneMatch(o -> o.getMetadata().getName().equals(CA_CONFIG_MAP));
  }

  /**
   * cert-manager writes the CA into the publisher's Secret only, in the release's namespace: the
   * driver elsewhere needs a ConfigMap there that trust-manager (or the operator) fills.
   */
  @Test
  void withCertManagerTheDriverElsewhereNeedsTheCaConfigMapNamed() {
    Map<String, Object> certManager =
        inDriverNamespace(
            "slicePublisher.tls.source",
            "cert-manager",
            "slicePublisher.tls.certManager.issuerRef.name",
            "cluster-ca");
    assertThatThrownBy(() -> Chart.template(certManager))
        .hasMessageContaining("deviceDriver.publisherCA.configMap");

    List<HasMetadata> objects =
        Chart.render(
            Chart.merge(
                certManager,
                Chart.values("deviceDriver.publisherCA.configMap", "kdra-publisher-ca")));
    Volume ca = volume(driverPod(objects), "publisher-ca");
    assertThat(ca.getConfigMap().getName()).isEqualTo("kdra-publisher-ca");
    assertThat(ca.getConfigMap().getItems())
        .extracting(i -> i.getKey() + "->" + i.getPath())
        .containsExactly("ca.crt->ca.crt");
    assertThat(objects).noneMatch(o -> o.getMetadata().getName().equals(CA_CONFIG_MAP));
  }

  @Test
  void aCaConfigMapGivenByValueWinsWithItsKey() {
    List<HasMetadata> objects =
        Chart.render(
            inDriverNamespace(
                "deviceDriver.publisherCA.configMap",
                "cluster-trust",
                "deviceDriver.publisherCA.key",
                "bundle.pem"));
    Volume ca = volume(driverPod(objects), "publisher-ca");
    assertThat(ca.getConfigMap().getName()).isEqualTo("cluster-trust");
    assertThat(ca.getConfigMap().getItems())
        .extracting(i -> i.getKey() + "->" + i.getPath())
        .containsExactly("bundle.pem->ca.crt");
    assertThat(objects).noneMatch(o -> o.getMetadata().getName().equals(CA_CONFIG_MAP));
  }

  private static boolean isDrivers(HasMetadata o) {
    return "device-driver".equals(o.getMetadata().getLabels().get("app.kubernetes.io/component"));
  }

  private static PodSpec driverPod(List<HasMetadata> objects) {
    return Rendered.one(objects, DaemonSet.class, "kdra-device-driver")
        .getSpec()
        .getTemplate()
        .getSpec();
  }

  private static Volume volume(PodSpec pod, String name) {
    return pod.getVolumes().stream()
        .filter(v -> v.getName().equals(name))
        .findFirst()
        .orElseThrow(() -> new AssertionError("no volume " + name));
  }

  private static List<NetworkPolicyPeer> grpcPeers(List<HasMetadata> objects) {
    return Rendered.one(objects, NetworkPolicy.class, "kdra-slice-publisher")
        .getSpec()
        .getIngress()
        .get(0)
        .getFrom();
  }

  /** The chart draws a new CA and certificate per render; the rest must be equal. */
  static String withoutTlsMaterial(String rendered) {
    return rendered.replaceAll(
        "(?m)^(\\s*(?:ca\\.crt|tls\\.crt|tls\\.key|caBundle|checksum/inventory-tls):).*$",
        "$1 <drawn per render>");
  }
}
