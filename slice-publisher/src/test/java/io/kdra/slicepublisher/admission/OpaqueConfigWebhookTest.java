package io.kdra.slicepublisher.admission;

import static io.restassured.RestAssured.given;
import static org.awaitility.Awaitility.await;
import static org.hamcrest.Matchers.equalTo;
import static org.hamcrest.Matchers.startsWith;

import io.quarkus.test.common.http.TestHTTPResource;
import io.quarkus.test.junit.QuarkusTest;
import io.quarkus.test.kubernetes.client.WithKubernetesTestServer;
import io.restassured.specification.RequestSpecification;
import java.net.Socket;
import java.net.URL;
import java.nio.charset.StandardCharsets;
import java.security.cert.X509Certificate;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import javax.net.ssl.SSLContext;
import javax.net.ssl.TrustManager;
import javax.net.ssl.X509TrustManager;
import org.junit.jupiter.api.Test;

/**
 * The webhook's route on the running service: the API server's request in, its answer out, over
 * HTTPS only (the test certificate of inventory-tls/).
 */
@QuarkusTest
@WithKubernetesTestServer(crud = true)
class OpaqueConfigWebhookTest {

  @TestHTTPResource(value = OpaqueConfigWebhook.PATH, tls = true)
  URL https;

  @TestHTTPResource(OpaqueConfigWebhook.PATH)
  URL plain;

  private static RequestSpecification overTls() {
    return given().relaxedHTTPSValidation();
  }

  private static final String REVIEW =
      "{'apiVersion': 'admission.k8s.io/v1', "
          + "'kind': 'AdmissionReview', 'request': {'uid': 'u-7', "
          + "'kind': {'group': 'resource.k8s.io', 'version': 'v1', 'kind': 'ResourceClaim'}, "
          + "'operation': 'CREATE', 'namespace': 'ns', 'name': 'train', "
          + "'userInfo': {'username': 'alice'}, 'object': {'spec': {'devices': {'config': [{"
          + "'opaque': {'driver': 'gpu.kdra.io', 'parameters': {'apiVersion': "
          + "'resource.kdra.io/v1alpha1', 'kind': 'GpuConfig', 'sharing': %s}}}]}}}}}";

  @Test
  void refusesABadConfigNamingTheField() {
    overTls()
        .contentType("application/json")
        .body(String.format(REVIEW, "{'mps': {'threads': 4}}").replace('\'', '"'))
        .when()
        .post(https)
        .then()
        .statusCode(200)
        .body("apiVersion", equalTo("admission.k8s.io/v1"))
        .body("kind", equalTo("AdmissionReview"))
        .body("response.uid", equalTo("u-7"))
        .body("response.allowed", equalTo(false))
        .body("response.status.code", equalTo(422))
        .body(
            "response.status.message",
            equalTo(
                "spec.devices.config[0].opaque.parameters.sharing.mps: "
                    + "not allowed with strategy Exclusive"))
        .body(
            "response.status.details.causes[0].field",
            equalTo("spec.devices.config[0].opaque.parameters.sharing.mps"));
  }

  @Test
  void allowsAGoodConfig() {
    overTls()
        .contentType("application/json")
        .body(String.format(REVIEW, "{'strategy': 'TimeSlicing'}").replace('\'', '"'))
        .when()
        .post(https)
        .then()
        .statusCode(200)
        .body("response.uid", equalTo("u-7"))
        .body("response.allowed", equalTo(true));
  }

  @Test
  void aBodyThatIsNoReviewIsABadRequest() {
    overTls()
        .contentType("application/json")
        .body("[1]")
        .when()
        .post(https)
        .then()
        .statusCode(400)
        .body(startsWith("not an AdmissionReview"));
  }

  @Test
  void noBodyIsABadRequest() {
    overTls()
        .contentType("application/json")
        .when()
        .post(https)
        .then()
        .statusCode(400)
        .body(startsWith("not an AdmissionReview"));
  }

  /** Plain HTTP is for probes and metrics: every pod may reach it. */
  @Test
  void isNotServedOnThePlainPort() {
    given()
        .contentType("application/json")
        .body(String.format(REVIEW, "{'strategy': 'TimeSlicing'}").replace('\'', '"'))
        .when()
        .post(plain)
        .then()
        .statusCode(404);
  }

  /** Not parsed (it would be a 400): refused from its Content-Length. */
  @Test
  void aBodyOverTheLimitIsRefusedUnread() {
    overTls()
        .contentType("application/json")
        .body(new byte[(int) OpaqueConfigWebhook.MAX_BODY + 1])
        .when()
        .post(https)
        .then()
        .statusCode(413);
  }

  /**
   * Requests whose body never comes hold the places; a request past them is refused before its body
   * is read, and once they are gone (closed, or ended at the deadline) reviews go on.
   */
  @Test
  void requestsPastTheInFlightBoundAreRefusedUntilTheHeldOnesEnd() throws Exception {
    List<Socket> held = new ArrayList<>();
    try {
      for (int i = 0; i < OpaqueConfigWebhook.MAX_IN_FLIGHT; i++) {
        held.add(headersOnly());
      }
      await().atMost(Duration.ofSeconds(30)).until(() -> allowGoodConfig() == 429);
    } finally {
      for (Socket s : held) {
        s.close();
      }
    }
    await().atMost(Duration.ofSeconds(30)).until(() -> allowGoodConfig() == 200);
  }

  private int allowGoodConfig() {
    return overTls()
        .contentType("application/json")
        .body(String.format(REVIEW, "{'strategy': 'TimeSlicing'}").replace('\'', '"'))
        .when()
        .post(https)
        .statusCode();
  }

  /** A POST over TLS that announces a body and sends none. */
  private Socket headersOnly() throws Exception {
    SSLContext tls = SSLContext.getInstance("TLS");
    tls.init(null, new TrustManager[] {new TrustAll()}, null);
    Socket s = tls.getSocketFactory().createSocket(https.getHost(), https.getPort());
    s.getOutputStream()
        .write(
            ("POST "
                    + OpaqueConfigWebhook.PATH
                    + " HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/json\r\n"
                    + "Content-Length: 100\r\n\r\n")
                .getBytes(StandardCharsets.US_ASCII));
    s.getOutputStream().flush();
    return s;
  }

  /** The test's own certificate; what is tested is not the handshake. */
  private static final class TrustAll implements X509TrustManager {
    @Override
    public void checkClientTrusted(X509Certificate[] chain, String authType) {}

    @Override
    public void checkServerTrusted(X509Certificate[] chain, String authType) {}

    @Override
    public X509Certificate[] getAcceptedIssuers() {
      return new X509Certificate[0];
    }
  }
}
