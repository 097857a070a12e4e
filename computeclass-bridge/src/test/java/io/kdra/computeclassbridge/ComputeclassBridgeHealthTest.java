package io.kdra.computeclassbridge;

import static io.restassured.RestAssured.given;
import static org.hamcrest.Matchers.containsString;
import static org.hamcrest.Matchers.equalTo;
import static org.hamcrest.Matchers.hasItem;
import static org.hamcrest.Matchers.matchesPattern;

import io.quarkus.test.junit.QuarkusTest;
import io.quarkus.test.kubernetes.client.WithKubernetesTestServer;
import org.junit.jupiter.api.Test;

@QuarkusTest
@WithKubernetesTestServer(crud = true)
class ComputeclassBridgeHealthTest {

  @Test
  void livenessReportsTheServiceCheckUp() {
    given()
        .when()
        .get("/q/health/live")
        .then()
        .statusCode(200)
        .body("status", equalTo("UP"))
        .body("checks.name", hasItem("computeclass-bridge"));
  }

  /** Every DRA meter of the bridge is scraped from start-up, before any ComputeClass exists. */
  @Test
  void metricsAreServedInPrometheusFormatFromStartUp() {
    for (int i = 0; i < 3; i++) {
      System.gc();
    }
    given()
        .when()
        .get("/q/metrics")
        .then()
        .statusCode(200)
        .body(containsString("# HELP kdra_bridge_reconciles Reconciles of a ComputeClass"))
        .body(containsString("kdra_bridge_reconciles_total{outcome=\"applied\"}"))
        .body(containsString("kdra_bridge_reconciles_total{outcome=\"unchanged\"}"))
        .body(containsString("kdra_bridge_reconciles_total{outcome=\"conflict\"}"))
        .body(containsString("kdra_bridge_reconciles_total{outcome=\"failed\"}"))
        .body(matchesPattern("(?s).*\nkdra_bridge_computeclasses [0-9.]+\n.*"))
        .body(matchesPattern("(?s).*\nkdra_bridge_degraded_computeclasses [0-9.]+\n.*"))
        .body(containsString("kdra_leadership_leader{component=\"computeclass-bridge\"}"))
        .body(containsString("kdra_leadership_acquired_total{component=\"computeclass-bridge\"}"));
  }

  @Test
  void readinessIsUp() {
    given().when().get("/q/health/ready").then().statusCode(200).body("status", equalTo("UP"));
  }

  /** The test profile runs one replica without election (as dev does): it always leads. */
  @Test
  void readinessReportsLeadershipAsData() {
    given()
        .when()
        .get("/q/health/ready")
        .then()
        .statusCode(200)
        .body("checks.find { it.name == 'computeclass-bridge-leadership' }.status", equalTo("UP"))
        .body(
            "checks.find { it.name == 'computeclass-bridge-leadership' }.data.leader",
            equalTo(true))
        .body(
            "checks.find { it.name == 'computeclass-bridge-leadership' }.data.electing",
            equalTo(false));
  }
}
