package io.kdra.claimcontroller;

import static io.restassured.RestAssured.given;
import static org.assertj.core.api.Assertions.assertThat;
import static org.hamcrest.Matchers.equalTo;
import static org.hamcrest.Matchers.hasItem;

import io.quarkus.test.junit.QuarkusTest;
import io.quarkus.test.kubernetes.client.WithKubernetesTestServer;
import org.junit.jupiter.api.Test;

@QuarkusTest
@WithKubernetesTestServer(crud = true)
class ClaimControllerHealthTest {

  @Test
  void livenessReportsTheServiceCheckUp() {
    given()
        .when()
        .get("/q/health/live")
        .then()
        .statusCode(200)
        .body("status", equalTo("UP"))
        .body("checks.name", hasItem("claim-controller"));
  }

  @Test
  void metricsAreServedInPrometheusFormat() {
    given()
        .when()
        .get("/q/metrics")
        .then()
        .statusCode(200)
        .body(org.hamcrest.Matchers.containsString("kdra_claim_controller_scheduling_seconds"))
        .body(org.hamcrest.Matchers.containsString("kdra_claim_controller_pending_pods"))
        // tests run one replica without an election: it leads, and was never elected
        .body(
            org.hamcrest.Matchers.containsString(
                "kdra_leadership_leader{component=\"claim-controller\"} 1.0"))
        .body(
            org.hamcrest.Matchers.containsString(
                "kdra_leadership_acquired_total{component=\"claim-controller\"} 0.0"));
  }

  @Test
  void thePendingPodsGaugeSurvivesGarbageCollection() {
    for (int i = 0; i < 3; i++) {
      System.gc();
    }
    String scrape = given().when().get("/q/metrics").then().statusCode(200).extract().asString();
    assertThat(scrape)
        .containsPattern(
            "(?m)^kdra_claim_controller_pending_pods(\\{[^}]*\\})? " + "[0-9]+(\\.[0-9]+)?$");
  }

  @Test
  void readinessIsUp() {
    given().when().get("/q/health/ready").then().statusCode(200).body("status", equalTo("UP"));
  }
}
