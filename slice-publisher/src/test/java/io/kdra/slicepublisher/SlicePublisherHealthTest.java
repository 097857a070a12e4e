package io.kdra.slicepublisher;

import static io.restassured.RestAssured.given;
import static org.hamcrest.Matchers.equalTo;
import static org.hamcrest.Matchers.hasItem;

import io.quarkus.test.junit.QuarkusTest;
import org.junit.jupiter.api.Test;

@QuarkusTest
class SlicePublisherHealthTest {

  @Test
  void livenessReportsTheServiceCheckUp() {
    given().when().get("/q/health/live")
        .then().statusCode(200)
        .body("status", equalTo("UP"))
        .body("checks.name", hasItem("slice-publisher"));
  }

  @Test
  void readinessIsUp() {
    given().when().get("/q/health/ready")
        .then().statusCode(200)
        .body("status", equalTo("UP"));
  }
}
