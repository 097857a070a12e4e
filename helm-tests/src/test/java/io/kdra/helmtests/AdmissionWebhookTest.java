package io.kdra.helmtests;

import static org.assertj.core.api.Assertions.assertThat;

import io.fabric8.kubernetes.api.model.HasMetadata;
import io.fabric8.kubernetes.api.model.Secret;
import io.fabric8.kubernetes.api.model.Service;
import io.fabric8.kubernetes.api.model.admissionregistration.v1.MatchCondition;
import io.fabric8.kubernetes.api.model.admissionregistration.v1.RuleWithOperations;
import io.fabric8.kubernetes.api.model.admissionregistration.v1.ValidatingWebhook;
import io.fabric8.kubernetes.api.model.admissionregistration.v1.ValidatingWebhookConfiguration;
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
 * templates/admission/opaque-config-webhook.yaml and what it needs of the slice-publisher: the
 * HTTPS port in the pod, the Service and the NetworkPolicy, the certificate. What it refuses is
 * proven on a real API server (OpaqueConfigWebhookIT).
 */
class AdmissionWebhookTest {

  private static final String NAME = "kdra-opaque-config";

  @Test
  void onByDefaultCallingThePublishersServiceForOurDriversConfigsOnly() {
    ValidatingWebhook webhook = webhook(Chart.render(Map.of()), NAME);
    assertThat(webhook.getName()).isEqualTo("opaque-config.kdra.io");
    assertThat(webhook.getFailurePolicy()).isEqualTo("Fail");
    assertThat(webhook.getTimeoutSeconds()).isEqualTo(5);
    assertThat(webhook.getSideEffects()).isEqualTo("None");
    assertThat(webhook.getAdmissionReviewVersions()).containsExactly("v1");
    assertThat(webhook.getMatchPolicy()).isEqualTo("Equivalent");
    assertThat(webhook.getRules())
        .singleElement()
        .satisfies(
            (RuleWithOperations r) -> {
              assertThat(r.getApiGroups()).containsExactly("resource.k8s.io");
              assertThat(r.getApiVersions()).containsExactly("v1");
              assertThat(r.getOperations()).containsExactly("CREATE", "UPDATE");
              assertThat(r.getResources())
                  .containsExactlyInAnyOrder(
                      "resourceclaims", "resourceclaimtemplates", "deviceclasses");
            });
    assertThat(webhook.getMatchConditions())
        .extracting(MatchCondition::getName)
        .containsExactly("spec-written", "configures-our-drivers");
    assertThat(webhook.getMatchConditions().get(1).getExpression())
        .contains("[\"gpu.kdra.io\",\"tpu.kdra.io\"]");
    var service = webhook.getClientConfig().getService();
    assertThat(service.getNamespace()).isEqualTo(Chart.NAMESPACE);
    assertThat(service.getName()).isEqualTo("kdra-slice-publisher");
    assertThat(service.getPort()).isEqualTo(443);
    assertThat(service.getPath()).isEqualTo("/admission/opaque-config");
    assertThat(webhook.getClientConfig().getUrl()).isNull();
  }

  /**
   * The API server verifies the publisher's certificate with the caBundle for the Service's name
   * {@code <service>.<namespace>.svc}: the CA in the bundle is the Secret's, and it signed a
   * certificate for that name.
   */
  @Test
  void theCaBundleIsTheCaOfThePublishersCertificateForTheServiceName() throws Exception {
    List<HasMetadata> objects = Chart.render(Map.of());
    Secret secret = Rendered.one(objects, Secret.class, "kdra-slice-publisher-tls");
    String bundle = webhook(objects, NAME).getClientConfig().getCaBundle();
    assertThat(bundle).isEqualTo(secret.getData().get("ca.crt"));
    CertificateFactory x509 = CertificateFactory.getInstance("X.509");
    X509Certificate ca =
        (X509Certificate)
            x509.generateCertificate(new ByteArrayInputStream(Base64.getDecoder().decode(bundle)));
    X509Certificate cert =
        (X509Certificate)
            x509.generateCertificate(
                new ByteArrayInputStream(
                    Base64.getDecoder().decode(secret.getData().get("tls.crt"))));
    cert.verify(ca.getPublicKey());
    assertThat(cert.getSubjectAlternativeNames().stream().map(n -> String.valueOf(n.get(1))))
        .contains("kdra-slice-publisher.kdra-system.svc");
  }

  @Test
  void thePublisherServesHttpsWithItsCertificateOnThePortTheServiceTargets() {
    List<HasMetadata> objects = Chart.render(Map.of());
    assertThat(Rendered.properties(objects, "kdra-slice-publisher"))
        .containsEntry("quarkus.http.ssl-port", "8443")
        .containsEntry(
            "quarkus.http.ssl.certificate.files", "/var/run/secrets/kdra.io/inventory-tls/tls.crt")
        .containsEntry(
            "quarkus.http.ssl.certificate.key-files",
            "/var/run/secrets/kdra.io/inventory-tls/tls.key")
        // a renewed certificate (cert-manager) is served without a restart
        .containsEntry("quarkus.http.ssl.certificate.reload-period", "30s")
        // the probes stay on plain HTTP
        .containsEntry("quarkus.http.port", "8080");
    assertThat(
            Rendered.one(objects, Deployment.class, "kdra-slice-publisher")
                .getSpec()
                .getTemplate()
                .getSpec()
                .getContainers()
                .get(0)
                .getPorts())
        .anySatisfy(
            p -> {
              assertThat(p.getName()).isEqualTo("webhook");
              assertThat(p.getContainerPort()).isEqualTo(8443);
            });
    Service service = Rendered.one(objects, Service.class, "kdra-slice-publisher");
    assertThat(service.getSpec().getPorts())
        .anySatisfy(
            p -> {
              assertThat(p.getName()).isEqualTo("webhook");
              assertThat(p.getPort()).isEqualTo(443);
              assertThat(p.getTargetPort().getStrVal()).isEqualTo("webhook");
            });
  }

  /** The API server is no pod: the webhook's port is open to all, as the HTTP port is. */
  @Test
  void theNetworkPolicyLetsTheApiServerReachTheWebhook() {
    NetworkPolicy policy =
        Rendered.one(Chart.render(Map.of()), NetworkPolicy.class, "kdra-slice-publisher");
    assertThat(policy.getSpec().getIngress())
        .anySatisfy(
            rule -> {
              assertThat(rule.getFrom()).isEmpty();
              assertThat(rule.getPorts())
                  .extracting(p -> p.getPort().getStrVal())
                  .containsExactly("webhook");
            });
  }

  @Test
  void thePolicyTheTimeoutThePortsAndTheDriversComeFromTheValues() {
    List<HasMetadata> objects = Chart.render(Chart.fullValues());
    ValidatingWebhook webhook = webhook(objects, "kdra-full-opaque-config");
    assertThat(webhook.getFailurePolicy()).isEqualTo("Ignore");
    assertThat(webhook.getTimeoutSeconds()).isEqualTo(10);
    assertThat(webhook.getClientConfig().getService().getPort()).isEqualTo(8443);
    assertThat(webhook.getMatchConditions().get(1).getExpression())
        .contains("[\"gpu.example.org\",\"tpu.example.org\"]");
  }

  @Test
  void withCertManagerItsCaInjectorFillsTheCaBundle() {
    List<HasMetadata> objects =
        Chart.render(
            Chart.values(
                "slicePublisher.tls.source",
                "cert-manager",
                "slicePublisher.tls.certManager.issuerRef.name",
                "cluster-ca"));
    ValidatingWebhookConfiguration config =
        Rendered.one(objects, ValidatingWebhookConfiguration.class, NAME);
    assertThat(config.getMetadata().getAnnotations())
        .containsEntry("cert-manager.io/inject-ca-from", "kdra-system/kdra-slice-publisher-tls");
    assertThat(config.getWebhooks().get(0).getClientConfig().getCaBundle()).isNull();
  }

  @Test
  void turnedOffRendersNoWebhookAndNoHttps() {
    List<HasMetadata> objects =
        Chart.render(Chart.values("admission.opaqueConfigWebhook.enabled", false));
    assertThat(objects).noneMatch(o -> o instanceof ValidatingWebhookConfiguration);
    assertThat(Rendered.properties(objects, "kdra-slice-publisher").stringPropertyNames())
        .noneMatch(k -> k.startsWith("quarkus.http.ssl"));
    assertThat(Rendered.one(objects, Service.class, "kdra-slice-publisher").getSpec().getPorts())
        .noneMatch(p -> p.getName().equals("webhook"));
    // the policy stays: each can be used without the other
    assertThat(objects).extracting(HasMetadata::getKind).contains("ValidatingAdmissionPolicy");
  }

  @Test
  void aReleaseWithoutThePublisherRendersNoWebhook() {
    assertThat(
            Chart.render(
                Chart.values(
                    "slicePublisher.enabled",
                    false,
                    "deviceDriver.config.publisher.address",
                    "kdra-slice-publisher.kdra-system.svc:9000",
                    "deviceDriver.publisherCA.secret",
                    "kdra-slice-publisher-tls")))
        .noneMatch(o -> o instanceof ValidatingWebhookConfiguration);
  }

  private static ValidatingWebhook webhook(List<HasMetadata> objects, String name) {
    ValidatingWebhookConfiguration config =
        Rendered.one(objects, ValidatingWebhookConfiguration.class, name);
    assertThat(config.getWebhooks()).hasSize(1);
    return config.getWebhooks().get(0);
  }
}
