package io.kdra.slicepublisher.admission;

import static io.restassured.RestAssured.given;
import static org.hamcrest.Matchers.equalTo;
import static org.hamcrest.Matchers.startsWith;

import io.quarkus.test.common.http.TestHTTPResource;
import io.quarkus.test.junit.QuarkusTest;
import io.quarkus.test.kubernetes.client.WithKubernetesTestServer;
import io.restassured.specification.RequestSpecification;
import java.net.URL;
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
}
