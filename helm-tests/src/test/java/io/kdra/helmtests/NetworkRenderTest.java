package io.kdra.helmtests;

import static org.assertj.core.api.Assertions.assertThat;

import io.fabric8.kubernetes.api.model.Container;
import io.fabric8.kubernetes.api.model.GenericKubernetesResource;
import io.fabric8.kubernetes.api.model.HasMetadata;
import io.fabric8.kubernetes.api.model.PodSpec;
import io.fabric8.kubernetes.api.model.Secret;
import io.fabric8.kubernetes.api.model.Service;
import io.fabric8.kubernetes.api.model.apps.DaemonSet;
import io.fabric8.kubernetes.api.model.apps.Deployment;
import io.fabric8.kubernetes.api.model.networking.v1.NetworkPolicy;
import java.io.ByteArrayInputStream;
import java.security.cert.CertificateFactory;
import java.security.cert.X509Certificate;
import java.util.Base64;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/**
 * Pod network or the node's, and the inventory gRPC between drivers and publisher: ports, TLS,
 * policy.
 */
class NetworkRenderTest {

  @Test
  void thePublisherPodServesTheGrpcPortTheServiceTargets() {
    Deployment d = Rendered.one(Chart.render(Map.of()), Deployment.class, "kdra-slice-publisher");
    assertThat(d.getSpec().getTemplate().getSpec().getContainers().get(0).getPorts())
        .extracting(p -> p.getName() + ":" + p.getContainerPort())
        .containsExactly("http:8080", "grpc:9000", "webhook:8443");
  }

  /** What a cluster without a pod network or kube-proxy needs, as HelmInstallIT installs it. */
  static Map<String, Object> withoutPodNetwork() {
    return Chart.values(
        "hostNetwork",
        true,
        "apiServer.host",
        "127.0.0.1",
        "apiServer.port",
        6443,
        "deviceDriver.httpPort",
        18081,
        "slicePublisher.httpPort",
        18082,
        "slicePublisher.grpcPort",
        19000,
        "claimController.httpPort",
        18083,
        "slicePublisher.strategy.type",
        "Recreate",
        // the API server cannot reach a Service's ClusterIP without kube-proxy
        "admission.opaqueConfigWebhook.enabled",
        false,
        "claimController.strategy.rollingUpdate.maxSurge",
        0,
        "claimController.strategy.rollingUpdate.maxUnavailable",
        1);
  }

  @Test
  void withoutAPodNetworkEveryPodUsesTheNodesNetworkItsOwnPortsAndTheGivenApiServer() {
    List<HasMetadata> objects = Chart.render(withoutPodNetwork());
    Map<String, Integer> ports =
        Map.of(
            "kdra-device-driver",
            18081,
            "kdra-slice-publisher",
            18082,
            "kdra-claim-controller",
            18083);
    for (HasMetadata o : objects) {
      PodSpec spec =
          o instanceof Deployment d
              ? d.getSpec().getTemplate().getSpec()
              : o instanceof DaemonSet ds ? ds.getSpec().getTemplate().getSpec() : null;
      if (spec == null) {
        continue;
      }
      String name = o.getMetadata().getName();
      assertThat(spec.getHostNetwork()).as(name).isTrue();
      assertThat(spec.getDnsPolicy()).as(name).isEqualTo("ClusterFirstWithHostNet");
      Container c = spec.getContainers().get(0);
      assertThat(c.getEnv())
          .as(name)
          .extracting(e -> e.getName() + "=" + e.getValue())
          .contains("KUBERNETES_SERVICE_HOST=127.0.0.1", "KUBERNETES_SERVICE_PORT=6443");
      assertThat(c.getPorts())
          .as(name)
          .filteredOn(p -> p.getName().equals("http"))
          .singleElement()
          .satisfies(p -> assertThat(p.getContainerPort()).isEqualTo(ports.get(name)));
      assertThat(Rendered.properties(objects, name))
          .containsEntry("quarkus.http.port", ports.get(name).toString());
    }
    assertThat(
            Rendered.one(objects, Deployment.class, "kdra-slice-publisher")
                .getSpec()
                .getTemplate()
                .getSpec()
                .getContainers()
                .get(0)
                .getPorts())
        .extracting(p -> p.getName() + ":" + p.getContainerPort())
        .containsExactly("http:18082", "grpc:19000");
    assertThat(Rendered.properties(objects, "kdra-slice-publisher"))
        .containsEntry("quarkus.grpc.server.port", "19000");
    assertThat(
            Rendered.one(objects, Deployment.class, "kdra-slice-publisher")
                .getSpec()
                .getStrategy()
                .getType())
        .isEqualTo("Recreate");
    assertThat(
            Rendered.one(objects, Deployment.class, "kdra-claim-controller")
                .getSpec()
                .getStrategy()
                .getRollingUpdate()
                .getMaxSurge()
                .getIntVal())
        .isZero();
  }

  @Test
  void byDefaultPodsUseThePodNetworkAndTheKubernetesService() {
    List<HasMetadata> objects = Chart.render(Map.of());
    for (PodSpec spec : Rendered.podSpecs(objects)) {
      assertThat(spec.getHostNetwork()).isNull();
      assertThat(spec.getContainers().get(0).getEnv())
          .extracting(e -> e.getName())
          .doesNotContain("KUBERNETES_SERVICE_HOST", "KUBERNETES_SERVICE_PORT");
    }
    assertThat(
            Rendered.one(objects, Deployment.class, "kdra-slice-publisher").getSpec().getStrategy())
        .isNull();
    assertThat(Rendered.properties(objects, "kdra-slice-publisher"))
        .containsEntry("quarkus.http.port", "8080")
        .containsEntry("quarkus.grpc.server.port", "9000");
  }

  @Test
  void theInventoryGrpcIsTlsWithTheChartsCertificateForTheServiceNameAndDriversTrustItsCa()
      throws Exception {
    List<HasMetadata> objects = Chart.render(Map.of());
    Secret secret = Rendered.one(objects, Secret.class, "kdra-slice-publisher-tls");
    assertThat(secret.getType()).isEqualTo("kubernetes.io/tls");
    assertThat(secret.getData()).containsOnlyKeys("ca.crt", "tls.crt", "tls.key");
    CertificateFactory x509 = CertificateFactory.getInstance("X.509");
    X509Certificate ca =
        (X509Certificate)
            x509.generateCertificate(
                new ByteArrayInputStream(
                    Base64.getDecoder().decode(secret.getData().get("ca.crt"))));
    X509Certificate cert =
        (X509Certificate)
            x509.generateCertificate(
                new ByteArrayInputStream(
                    Base64.getDecoder().decode(secret.getData().get("tls.crt"))));
    cert.verify(ca.getPublicKey());
    assertThat(cert.getSubjectAlternativeNames().stream().map(n -> String.valueOf(n.get(1))))
        .contains("kdra-slice-publisher.kdra-system.svc", "kdra-slice-publisher");

    assertThat(Rendered.properties(objects, "kdra-slice-publisher"))
        .containsEntry(
            "kdra.slice-publisher.inventory-tls.certificate",
            "/var/run/secrets/kdra.io/inventory-tls/tls.crt")
        .containsEntry(
            "kdra.slice-publisher.inventory-tls.key",
            "/var/run/secrets/kdra.io/inventory-tls/tls.key")
        .containsEntry("quarkus.grpc.server.plain-text", "false")
        .doesNotContainKey("quarkus.grpc.server.ssl.certificate");
    PodSpec publisher =
        Rendered.one(objects, Deployment.class, "kdra-slice-publisher")
            .getSpec()
            .getTemplate()
            .getSpec();
    assertThat(publisher.getVolumes())
        .filteredOn(v -> v.getSecret() != null)
        .singleElement()
        .satisfies(
            v ->
                assertThat(v.getSecret().getItems())
                    .extracting(i -> i.getKey())
                    .containsExactly("tls.crt", "tls.key"));
    assertThat(Rendered.properties(objects, "kdra-device-driver"))
        .containsEntry(
            "kdra.device-driver.publisher.address", "kdra-slice-publisher.kdra-system.svc:9000")
        .containsEntry(
            "kdra.device-driver.publisher.tls.ca-file",
            "/var/run/secrets/kdra.io/publisher-ca/ca.crt")
        .containsEntry(
            "kdra.device-driver.publisher.tls.server-name", "kdra-slice-publisher.kdra-system.svc");
    PodSpec driver =
        Rendered.one(objects, DaemonSet.class, "kdra-device-driver")
            .getSpec()
            .getTemplate()
            .getSpec();
    // the CA only, never the publisher's key
    assertThat(driver.getVolumes())
        .filteredOn(v -> v.getSecret() != null)
        .singleElement()
        .satisfies(
            v ->
                assertThat(v.getSecret().getItems())
                    .extracting(i -> i.getKey())
                    .containsExactly("ca.crt"));
  }

  @Test
  void withTlsOffThePublisherServesPlainTextAndTheDriversDialIt() {
    // the webhook needs TLS (ValidationTest)
    List<HasMetadata> objects =
        Chart.render(
            Chart.values(
                "slicePublisher.tls.enabled",
                false,
                "admission.opaqueConfigWebhook.enabled",
                false));
    assertThat(objects).noneMatch(o -> o instanceof Secret);
    assertThat(Rendered.properties(objects, "kdra-slice-publisher").stringPropertyNames())
        .noneMatch(
            k ->
                k.startsWith("quarkus.grpc.server.ssl")
                    || k.startsWith("kdra.slice-publisher.inventory-tls")
                    || k.contains("plain-text"));
    assertThat(Rendered.properties(objects, "kdra-device-driver").stringPropertyNames())
        .noneMatch(k -> k.startsWith("kdra.device-driver.publisher.tls"));
  }

  @Test
  void certManagerIssuesThePublishersCertificateIntoTheSameSecret() {
    List<HasMetadata> objects =
        Chart.render(
            Chart.values(
                "slicePublisher.tls.source",
                "cert-manager",
                "slicePublisher.tls.certManager.issuerRef.name",
                "cluster-ca",
                "slicePublisher.tls.certManager.issuerRef.kind",
                "ClusterIssuer"));
    assertThat(objects).noneMatch(o -> o instanceof Secret);
    GenericKubernetesResource certificate =
        objects.stream()
            .filter(o -> o.getKind().equals("Certificate"))
            .map(GenericKubernetesResource.class::cast)
            .findFirst()
            .orElseThrow();
    Map<String, Object> spec = certificate.get("spec");
    assertThat(spec).containsEntry("secretName", "kdra-slice-publisher-tls");
    assertThat(String.valueOf(spec.get("dnsNames")))
        .contains("kdra-slice-publisher.kdra-system.svc");
    assertThat(String.valueOf(spec.get("issuerRef")))
        .contains("name=cluster-ca")
        .contains("kind=ClusterIssuer");
  }

  @Test
  void onlyDevicedriversMayReachTheInventoryGrpc() {
    NetworkPolicy policy =
        Rendered.one(Chart.render(Map.of()), NetworkPolicy.class, "kdra-slice-publisher");
    assertThat(policy.getSpec().getPodSelector().getMatchLabels())
        .containsEntry("app.kubernetes.io/component", "slice-publisher");
    // the third rule is the admission webhook's (AdmissionWebhookTest)
    assertThat(policy.getSpec().getIngress()).hasSize(3);
    var grpc = policy.getSpec().getIngress().get(0);
    assertThat(grpc.getPorts()).extracting(p -> p.getPort().getStrVal()).containsExactly("grpc");
    assertThat(grpc.getFrom())
        .singleElement()
        .satisfies(
            f ->
                assertThat(f.getPodSelector().getMatchLabels())
                    .containsEntry("app.kubernetes.io/component", "device-driver"));
    var http = policy.getSpec().getIngress().get(1);
    assertThat(http.getPorts()).extracting(p -> p.getPort().getStrVal()).containsExactly("http");
    assertThat(http.getFrom())
        .singleElement()
        .satisfies(
            f -> {
              assertThat(f.getNamespaceSelector().getMatchLabels())
                  .containsExactly(Map.entry("kubernetes.io/metadata.name", "monitoring"));
              assertThat(f.getPodSelector()).isNull();
            });
  }

  /** The kubelet's probes come from the node, which NetworkPolicy always lets through. */
  @Test
  void withoutMetricsPeersNoPodReachesThePublishersHttpPort() {
    NetworkPolicy policy =
        Rendered.one(
            Chart.render(Chart.values("slicePublisher.networkPolicy.metricsFrom", List.of())),
            NetworkPolicy.class,
            "kdra-slice-publisher");
    assertThat(policy.getSpec().getIngress())
        .flatExtracting(r -> r.getPorts())
        .extracting(p -> p.getPort().getStrVal())
        .containsExactly("grpc", "webhook");
  }

  @Test
  void thePublisherServiceExposesTheGrpcPort() {
    Service s = Rendered.one(Chart.render(Map.of()), Service.class, "kdra-slice-publisher");
    // the second port is the admission webhook's (AdmissionWebhookTest)
    assertThat(s.getSpec().getPorts())
        .hasSize(2)
        .first()
        .satisfies(
            p -> {
              assertThat(p.getName()).isEqualTo("grpc");
              assertThat(p.getPort()).isEqualTo(9000);
              assertThat(p.getTargetPort().getStrVal()).isEqualTo("grpc");
              assertThat(p.getAppProtocol()).isEqualTo("grpc");
            });
    assertThat(s.getSpec().getSelector())
        .containsEntry("app.kubernetes.io/component", "slice-publisher");
  }
}
