package io.kdra.slicepublisher;

import static io.restassured.RestAssured.given;
import static org.assertj.core.api.Assertions.assertThat;
import static org.hamcrest.Matchers.equalTo;
import static org.hamcrest.Matchers.hasItem;

import io.quarkus.test.junit.QuarkusTest;
import io.quarkus.test.kubernetes.client.WithKubernetesTestServer;
import org.junit.jupiter.api.Test;

@QuarkusTest
@WithKubernetesTestServer(crud = true)
class SlicePublisherHealthTest {

  @Test
  void livenessReportsTheServiceCheckUp() {
    given()
        .when()
        .get("/q/health/live")
        .then()
        .statusCode(200)
        .body("status", equalTo("UP"))
        .body("checks.name", hasItem("slice-publisher"));
  }

  @Test
  void readinessIsUpOnceCachesSyncedAndThisReplicaWrites() {
    org.awaitility.Awaitility.await()
        .atMost(java.time.Duration.ofSeconds(20))
        .untilAsserted(
            () ->
                given()
                    .when()
                    .get("/q/health/ready")
                    .then()
                    .statusCode(200)
                    .body("status", equalTo("UP"))
                    .body("checks.name", hasItem("slice-publisher-writer")));
  }

  /** Every meter from start-up, at zero where it counts (an alert then sees the first rise). */
  @Test
  void metricsAreExported() {
    String scrape = given().when().get("/q/metrics").then().statusCode(200).extract().asString();
    assertThat(scrape)
        .contains(
            "kdra_publisher_slices_total",
            "kdra_publisher_reconcile_seconds",
            "kdra_publisher_inventories_total{driver=\"other\",outcome=\"refused\"} 0.0",
            "kdra_publisher_inventories_total{driver=\"gpu.kdra.io\",outcome=\"invalid\"} 0.0",
            "# HELP kdra_publisher_inventories Driver snapshots received",
            "kdra_publisher_refused_streams_total{code=\"PERMISSION_DENIED\"} 0.0",
            "kdra_publisher_stale_pools{reason=\"disconnected\"} 0.0",
            "kdra_publisher_stale_pools{reason=\"silent\"} 0.0",
            "kdra_publisher_stale_pools{reason=\"discovery-stale\"} 0.0",
            "kdra_leadership_acquired_total{component=\"slice-publisher\"}",
            "kdra_leadership_leader{component=\"slice-publisher\"}");
  }
}
