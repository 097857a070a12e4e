package io.kdra.it;

import static io.kdra.it.nodes.SimulatedNode.oneA100;
import static io.kdra.it.nodes.SimulatedNode.twoL4s;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.fabric8.kubeapitest.cert.CertManager;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.PodBuilder;
import io.fabric8.kubernetes.api.model.ServiceAccountBuilder;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.kdra.it.chart.KdraChart;
import io.kdra.it.controlplane.ControlPlane;
import io.kdra.it.services.Dra;
import io.kdra.it.services.KdraStack;
import io.kdra.it.services.Stack;
import io.kdra.it.support.OwnerOnly;
import io.kdra.it.support.ServiceProcess;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.PrivateKey;
import java.security.Signature;
import java.time.Duration;
import java.time.Instant;
import java.util.Base64;
import org.bouncycastle.openssl.PEMKeyPair;
import org.bouncycastle.openssl.PEMParser;
import org.bouncycastle.openssl.jcajce.JcaPEMKeyConverter;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * Only the driver may speak for its node, on the real API server's TokenReview: the slice-publisher
 * refuses a stream whose token is another ServiceAccount's, for another audience, expired, or of
 * the driver pod of another node, and logs each refusal once with who and why. Each case puts a
 * token into node-a's driver's token file (which it reads on every connect) and restarts the
 * driver; the real token then brings it back.
 */
@ExtendWith(ControlPlane.class)
class DriverIdentityIT {

  private static final String NODE = "node-a";
  private static final String OTHER = "node-b";
  private static final String DRIVER = "device-driver-" + NODE;

  @RegisterExtension static final KdraStack STACK = KdraStack.nodes(twoL4s(NODE), oneA100(OTHER));

  private static Stack stack;
  private static KubernetesClient admin;

  /** The key the API server signs ServiceAccount tokens with (kube-api-test's). */
  private static Path signingKey;

  @BeforeAll
  static void slicesPublished(ControlPlane.Running cp) {
    signingKey = cp.dir().resolve(CertManager.API_SERVER_KEY_NAME);
    stack = STACK.get();
    admin = stack.client;
    await()
        .atMost(Duration.ofSeconds(90))
        .untilAsserted(
            () -> {
              assertThat(Dra.publishedDevices(admin, NODE)).isEqualTo(2);
              assertThat(Dra.publishedDevices(admin, OTHER)).isEqualTo(1);
            });
  }

  /** The driver's own token back: node-a is reported again. */
  @AfterEach
  void theRealTokenBringsTheDriverBack() throws IOException {
    useToken(
        KdraChart.publisherToken(
            admin,
            KdraChart.NAMESPACE,
            KdraChart.serviceAccount(KdraChart.DRIVER),
            driverPod(NODE)));
    stack.services.crash(DRIVER);
    stack.services.restart(DRIVER);
  }

  @Test
  void aPodOfAnotherServiceAccountOnTheNodeIsRefused() throws IOException {
    String ns = stack.namespace;
    admin
        .resource(
            new ServiceAccountBuilder()
                .withNewMetadata()
                .withName("intruder")
                .withNamespace(ns)
                .endMetadata()
                .build())
        .create();
    Pod intruder =
        admin
            .resource(
                new PodBuilder()
                    .withNewMetadata()
                    .withName("intruder")
                    .withNamespace(ns)
                    .endMetadata()
                    .withNewSpec()
                    .withNodeName(NODE)
                    .withServiceAccountName("intruder")
                    .addNewContainer()
                    .withName("app")
                    .withImage("app:1")
                    .endContainer()
                    .endSpec()
                    .build())
            .create();
    String token = KdraChart.publisherToken(admin, ns, "intruder", intruder);

    refusedAndLoggedOnce(
        token,
        "UNAUTHENTICATED",
        "token of system:serviceaccount:"
            + ns
            + ":intruder (pod intruder on node "
            + NODE
            + ") is not the device-driver's "
            + "ServiceAccount ["
            + KdraChart.driverAccount()
            + "]");
  }

  @Test
  void theDriverOfAnotherNodeMayNotReportThisOne() throws IOException {
    String token =
        KdraChart.publisherToken(
            admin,
            KdraChart.NAMESPACE,
            KdraChart.serviceAccount(KdraChart.DRIVER),
            driverPod(OTHER));
    refusedAndLoggedOnce(
        token,
        "PERMISSION_DENIED",
        "the driver pod runs on node \"" + OTHER + "\" and may not report node \"" + NODE + "\"");
  }

  @Test
  void theDriversTokenForTheApiServerIsRefused() throws IOException {
    // what the default ServiceAccount volume holds: valid, but not for the publisher's audience
    String token = KdraChart.token(admin, KdraChart.DRIVER, driverPod(NODE));
    refusedAndLoggedOnce(
        token,
        "UNAUTHENTICATED",
        "token not authenticated for audience \""
            + KdraChart.PUBLISHER_AUDIENCE
            + "\": [invalid bearer token, token audiences");
  }

  /**
   * The driver's own token for the publisher's audience, expired an hour ago: the driver's token
   * with its times moved back, signed again with the API server's key (the API server issues no
   * token shorter than 10 minutes), so that only its expiry is wrong.
   */
  @Test
  void anExpiredTokenOfTheDriverIsRefused() throws Exception {
    String valid =
        KdraChart.publisherToken(
            admin,
            KdraChart.NAMESPACE,
            KdraChart.serviceAccount(KdraChart.DRIVER),
            driverPod(NODE));
    refusedAndLoggedOnce(
        expired(valid),
        "UNAUTHENTICATED",
        "token not authenticated for audience \""
            + KdraChart.PUBLISHER_AUDIENCE
            + "\": [invalid bearer token, service account token has expired]");
  }

  /** {@code token} with iat, nbf and exp two and one hours ago, signed again (RS256). */
  private static String expired(String token) throws Exception {
    String[] parts = token.split("\\.");
    ObjectMapper json = new ObjectMapper();
    ObjectNode claims = (ObjectNode) json.readTree(Base64.getUrlDecoder().decode(parts[1]));
    long now = Instant.now().getEpochSecond();
    claims.put("iat", now - 7200);
    claims.put("nbf", now - 7200);
    claims.put("exp", now - 3600);
    String signed =
        parts[0]
            + "."
            + Base64.getUrlEncoder()
                .withoutPadding()
                .encodeToString(json.writeValueAsBytes(claims));
    PrivateKey key;
    try (PEMParser pem = new PEMParser(Files.newBufferedReader(signingKey))) {
      key = new JcaPEMKeyConverter().getKeyPair((PEMKeyPair) pem.readObject()).getPrivate();
    }
    Signature rsa = Signature.getInstance("SHA256withRSA");
    rsa.initSign(key);
    rsa.update(signed.getBytes(StandardCharsets.US_ASCII));
    return signed + "." + Base64.getUrlEncoder().withoutPadding().encodeToString(rsa.sign());
  }

  private static Pod driverPod(String node) {
    return admin
        .pods()
        .inNamespace(KdraChart.NAMESPACE)
        .withName(KdraChart.RELEASE + "-" + KdraChart.DRIVER + "-" + node)
        .get();
  }

  private static void useToken(String token) throws IOException {
    OwnerOnly.write(stack.nodes.publisherTokenFile(NODE), token);
  }

  /**
   * The driver, restarted with {@code token}, is refused with {@code reason} again and again (it
   * retries with backoff); the publisher logs that refusal once at WARN.
   */
  private static void refusedAndLoggedOnce(String token, String code, String reason)
      throws IOException {
    ServiceProcess publisher = stack.services.process("slice-publisher");
    String counter = "kdra_publisher_refused_streams_total{code=\"" + code + "\"}";
    double before = publisher.metric(counter);
    useToken(token);
    stack.services.crash(DRIVER);
    ServiceProcess driver = stack.services.restartWithoutWaiting(DRIVER);
    await()
        .atMost(Duration.ofSeconds(90))
        .untilAsserted(
            () ->
                assertThat(publisher.metric(counter))
                    .as("refused streams")
                    .isGreaterThanOrEqualTo(before + 3));
    assertThat(
            Files.readAllLines(publisher.log).stream()
                .filter(l -> l.contains("refusing inventory stream: " + code + " " + reason)))
        .as("the publisher's WARN lines for this refusal")
        .hasSize(1);
    await()
        .atMost(Duration.ofSeconds(30))
        .untilAsserted(
            () -> assertThat(Files.readString(driver.log)).as("the driver's log").contains(reason));
    assertThat(driver.readiness()).as("the refused driver's readiness").startsWith("503");
  }
}
