package io.kdra.helmtests;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.fabric8.kubernetes.api.model.ConfigMap;
import io.fabric8.kubernetes.api.model.HasMetadata;
import io.fabric8.kubernetes.api.model.Secret;
import io.fabric8.kubernetes.api.model.admissionregistration.v1.ValidatingWebhookConfiguration;
import io.fabric8.kubernetes.api.model.apps.Deployment;
import java.io.ByteArrayInputStream;
import java.nio.charset.StandardCharsets;
import java.security.KeyStore;
import java.security.cert.CertificateException;
import java.security.cert.CertificateFactory;
import java.security.cert.X509Certificate;
import java.util.ArrayList;
import java.util.Base64;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import javax.net.ssl.TrustManagerFactory;
import javax.net.ssl.X509TrustManager;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/**
 * slicePublisher.tls.caRotation: the chart's own CA (tls.source helm) replaced in three upgrades
 * without a moment where a driver distrusts the publisher. The kubelets hand each driver the new
 * Secret (or ConfigMap) at their own moment and the publisher's pods roll one by one, so across
 * every step a driver may hold the bundle of either side while the publisher serves the certificate
 * of either side: all four must verify. Upgrades are rendered against a Secret the previous render
 * wrote ({@link Chart#renderUpgrade}).
 */
class PublisherCaRotationRenderTest {

  private static final String SECRET = "kdra-slice-publisher-tls";
  private static final String CHECKSUM = "checksum/inventory-tls";

  @Test
  void aRotationInThreeUpgradesNeverLeavesADriverDistrustingThePublisher() throws Exception {
    Map<String, String> installed = secretData(Chart.render(Map.of()));
    Map<String, String> trusting = secretData(upgrade("trustNew", installed));
    Map<String, String> serving = secretData(upgrade("serveNew", waitedForTheKubelets(trusting)));
    Map<String, String> done = secretData(upgrade("dropOld", serving));

    List<Map<String, String>> steps = List.of(installed, trusting, serving, done);
    for (int i = 1; i < steps.size(); i++) {
      for (Map<String, String> driverHas : List.of(steps.get(i - 1), steps.get(i))) {
        for (Map<String, String> publisherServes : List.of(steps.get(i - 1), steps.get(i))) {
          assertThat(trusts(driverHas.get("ca.crt"), publisherServes.get("tls.crt")))
              .as("step %d: a driver's bundle of either side trusts either side's certificate", i)
              .isTrue();
        }
      }
    }
    // and it is a rotation: the old CA is gone, the old certificate no longer trusted
    assertThat(certificates(done.get("ca.crt"))).hasSize(1);
    assertThat(trusts(done.get("ca.crt"), installed.get("tls.crt"))).isFalse();
    assertThat(trusts(installed.get("ca.crt"), done.get("tls.crt"))).isFalse();
    assertThat(done).containsOnlyKeys("ca.crt", "tls.crt", "tls.key");
  }

  @Test
  void trustNewAddsACaOfItsOwnNameToTheBundleAndKeepsServingTheOldCertificate() throws Exception {
    Map<String, String> installed = secretData(Chart.render(Map.of()));
    List<HasMetadata> objects = upgrade("trustNew", installed);
    Map<String, String> trusting = secretData(objects);

    assertThat(trusting.get("tls.crt")).isEqualTo(installed.get("tls.crt"));
    assertThat(trusting.get("tls.key")).isEqualTo(installed.get("tls.key"));
    List<X509Certificate> bundle = certificates(trusting.get("ca.crt"));
    assertThat(bundle).hasSize(2);
    assertThat(bundle.get(0)).isEqualTo(certificates(installed.get("ca.crt")).get(0));
    // a name of its own, so that a refusal's explanation tells the two apart
    assertThat(bundle.get(1).getSubjectX500Principal())
        .isNotEqualTo(bundle.get(0).getSubjectX500Principal());
    assertThat(bundle.get(1).getSubjectX500Principal().getName())
        .startsWith("CN=kdra-slice-publisher-ca-");
    X509Certificate next = certificates(trusting.get("new-tls.crt")).get(0);
    next.verify(bundle.get(1).getPublicKey());
    assertThat(next.getSubjectAlternativeNames().stream().map(n -> String.valueOf(n.get(1))))
        .contains("kdra-slice-publisher.kdra-system.svc");

    // the publisher's pods stay (they serve what they served); the API server gets both CAs
    assertThat(checksum(objects)).isEqualTo(checksum(upgrade(null, installed)));
    assertThat(
            Rendered.one(objects, ValidatingWebhookConfiguration.class, "kdra-opaque-config")
                .getWebhooks()
                .get(0)
                .getClientConfig()
                .getCaBundle())
        .isEqualTo(trusting.get("ca.crt"));
  }

  @Test
  void aDriverInItsOwnNamespaceGetsTheSameBundleThroughItsConfigMap() {
    Map<String, String> installed = secretData(Chart.render(Map.of()));
    List<HasMetadata> objects =
        Chart.renderUpgrade(
            DriverNamespaceRenderTest.inDriverNamespace(
                "slicePublisher.tls.caRotation", "trustNew"),
            installed);
    String bundle = decode(secretData(objects).get("ca.crt")).trim();
    assertThat(
            Rendered.one(objects, ConfigMap.class, DriverNamespaceRenderTest.CA_CONFIG_MAP)
                .getData()
                .get("ca.crt")
                .trim())
        .isEqualTo(bundle);
  }

  @Test
  void onlyServingTheNewCertificateRestartsThePublisher() {
    Map<String, String> installed = secretData(Chart.render(Map.of()));
    List<HasMetadata> trustingRender = upgrade("trustNew", installed);
    List<HasMetadata> servingRender =
        upgrade("serveNew", waitedForTheKubelets(secretData(trustingRender)));
    List<HasMetadata> doneRender = upgrade("dropOld", secretData(servingRender));

    assertThat(checksum(servingRender)).isNotEqualTo(checksum(trustingRender));
    assertThat(checksum(doneRender)).isEqualTo(checksum(servingRender));
  }

  @Test
  void eachStepRepeatedAndAnUpgradeWithoutTheValueChangeNothing() {
    Map<String, String> installed = secretData(Chart.render(Map.of()));
    Map<String, String> trusting = secretData(upgrade("trustNew", installed));
    Map<String, String> serving = secretData(upgrade("serveNew", waitedForTheKubelets(trusting)));
    Map<String, String> done = secretData(upgrade("dropOld", serving));

    assertThat(secretData(upgrade("trustNew", trusting))).isEqualTo(trusting);
    assertThat(secretData(upgrade("serveNew", serving))).isEqualTo(serving);
    assertThat(secretData(upgrade("dropOld", done))).isEqualTo(done);
    for (Map<String, String> state : List.of(installed, trusting, serving, done)) {
      assertThat(secretData(upgrade(null, state))).isEqualTo(state);
    }
  }

  /** A step out of order would open the window the procedure exists to close. */
  @ParameterizedTest
  @CsvSource({
    "installed, serveNew, run caRotation=trustNew first",
    "trustingJustNow, serveNew, the kubelets take up to",
    "trusting, dropOld, the publisher still serves the old CA's certificate",
    "serving, trustNew, finish it with caRotation=dropOld first",
  })
  void aStepOutOfOrderIsRefused(String state, String rotation, String message) {
    Map<String, String> installed = secretData(Chart.render(Map.of()));
    Map<String, String> trustingJustNow = secretData(upgrade("trustNew", installed));
    Map<String, String> trusting = waitedForTheKubelets(trustingJustNow);
    Map<String, String> existing =
        switch (state) {
          case "installed" -> installed;
          case "trustingJustNow" -> trustingJustNow;
          case "trusting" -> trusting;
          case "serving" -> secretData(upgrade("serveNew", trusting));
          default -> throw new IllegalArgumentException(state);
        };
    assertThatThrownBy(() -> upgrade(rotation, existing))
        .hasMessageContaining("slicePublisher.tls.caRotation")
        .hasMessageContaining(message);
  }

  @Test
  void caRotationIsForTheChartsOwnCaOnly() {
    assertThatThrownBy(
            () ->
                Chart.template(
                    Chart.values(
                        "slicePublisher.tls.source",
                        "cert-manager",
                        "slicePublisher.tls.certManager.issuerRef.name",
                        "ca",
                        "slicePublisher.tls.caRotation",
                        "trustNew")))
        .hasMessageContaining("slicePublisher.tls.caRotation")
        .hasMessageContaining("tls.source helm");
  }

  private static List<HasMetadata> upgrade(String rotation, Map<String, String> existing) {
    Map<String, Object> values =
        rotation == null ? Map.of() : Chart.values("slicePublisher.tls.caRotation", rotation);
    return Chart.renderUpgrade(values, existing);
  }

  /** The Secret as it is once the kubelets had their time (trustNew wrote when it did). */
  private static Map<String, String> waitedForTheKubelets(Map<String, String> trusting) {
    Map<String, String> aged = new LinkedHashMap<>(trusting);
    long hourAgo = System.currentTimeMillis() / 1000 - 3600;
    aged.put("new-ca-since", encode(Long.toString(hourAgo)));
    return aged;
  }

  private static Map<String, String> secretData(List<HasMetadata> objects) {
    return Rendered.one(objects, Secret.class, SECRET).getData();
  }

  private static String checksum(List<HasMetadata> objects) {
    return Rendered.one(objects, Deployment.class, "kdra-slice-publisher")
        .getSpec()
        .getTemplate()
        .getMetadata()
        .getAnnotations()
        .get(CHECKSUM);
  }

  /** Whether the JDK's PKIX trust manager, as the driver uses it, trusts the certificate. */
  private static boolean trusts(String bundle, String served) throws Exception {
    KeyStore store = KeyStore.getInstance(KeyStore.getDefaultType());
    store.load(null, null);
    int i = 0;
    for (X509Certificate ca : certificates(bundle)) {
      store.setCertificateEntry("ca-" + i++, ca);
    }
    TrustManagerFactory factory =
        TrustManagerFactory.getInstance(TrustManagerFactory.getDefaultAlgorithm());
    factory.init(store);
    X509TrustManager trust = (X509TrustManager) factory.getTrustManagers()[0];
    try {
      trust.checkServerTrusted(certificates(served).toArray(new X509Certificate[0]), "ECDHE_RSA");
      return true;
    } catch (CertificateException e) {
      return false;
    }
  }

  private static List<X509Certificate> certificates(String base64Pem) throws Exception {
    List<X509Certificate> out = new ArrayList<>();
    for (var c :
        CertificateFactory.getInstance("X.509")
            .generateCertificates(
                new ByteArrayInputStream(Base64.getDecoder().decode(base64Pem)))) {
      out.add((X509Certificate) c);
    }
    return out;
  }

  private static String decode(String base64) {
    return new String(Base64.getDecoder().decode(base64), StandardCharsets.UTF_8);
  }

  private static String encode(String text) {
    return Base64.getEncoder().encodeToString(text.getBytes(StandardCharsets.UTF_8));
  }
}
