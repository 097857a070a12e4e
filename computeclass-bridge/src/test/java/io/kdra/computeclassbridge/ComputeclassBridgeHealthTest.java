package io.kdra.computeclassbridge;

import static io.restassured.RestAssured.given;
import static org.hamcrest.Matchers.equalTo;
import static org.hamcrest.Matchers.hasItem;

import io.quarkus.test.junit.QuarkusTest;
import io.quarkus.test.kubernetes.client.WithKubernetesTestServer;
import org.junit.jupiter.api.Test;

@QuarkusTest
@WithKubernetesTestServer(crud = true)
class ComputeclassBridgeHealthTest {

  @Test
  void livenessReportsTheServiceCheckUp() {
    given().when().get("/q/health/live")
        .then().statusCode(200)
        .body("status", equalTo("UP"))
        .body("checks.name", hasItem("computeclass-bridge"));
  }

  @Test
  void readinessIsUp() {
    given().when().get("/q/health/ready")
        .then().statusCode(200)
        .body("status", equalTo("UP"));
  }

  /** The test profile runs one replica without election (as dev does): it always leads. */
  @Test
  void readinessReportsLeadershipAsData() {
    given().when().get("/q/health/ready")
        .then().statusCode(200)
        .body("checks.find { it.name == 'computeclass-bridge-leadership' }.status",
            equalTo("UP"))
        .body("checks.find { it.name == 'computeclass-bridge-leadership' }.data.leader",
            equalTo(true))
        .body("checks.find { it.name == 'computeclass-bridge-leadership' }.data.electing",
            equalTo(false));
  }
}
