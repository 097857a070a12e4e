package io.kdra.devicedriver;

import static io.restassured.RestAssured.given;
import static org.assertj.core.api.Assertions.assertThat;
import static org.hamcrest.Matchers.containsString;
import static org.hamcrest.Matchers.equalTo;
import static org.hamcrest.Matchers.hasItem;

import io.fabric8.kubernetes.api.model.resource.v1.ResourceClaim;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.kdra.devicedriver.kubelet.dra.v1.Claim;
import io.kdra.devicedriver.kubelet.dra.v1.DRAPluginGrpc;
import io.kdra.devicedriver.kubelet.dra.v1.NodePrepareResourcesRequest;
import io.kdra.devicedriver.kubelet.dra.v1.NodeUnprepareResourcesRequest;
import io.kdra.devicedriver.kubelet.drahealth.v1alpha1.DeviceHealth;
import io.kdra.devicedriver.kubelet.drahealth.v1alpha1.HealthStatus;
import io.kdra.devicedriver.testing.ClaimFixture;
import io.kdra.devicedriver.testing.TestKubelet;
import io.quarkus.test.junit.QuarkusTest;
import io.quarkus.test.kubernetes.client.WithKubernetesTestServer;
import jakarta.inject.Inject;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.MethodOrderer;
import org.junit.jupiter.api.Order;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestMethodOrder;

/**
 * The whole app: health, registration with a test kubelet, a prepare/unprepare round trip over the
 * real sockets with the claim read from the (mock) API server, and the device-health stream.
 */
@QuarkusTest
@WithKubernetesTestServer(crud = true)
@TestMethodOrder(MethodOrderer.OrderAnnotation.class)
class DeviceDriverHealthTest {
  private static final Path REG = Path.of("target/kubelet/plugins_registry/gpu.kdra.io-reg.sock");
  private static final Path DRA = Path.of("target/kubelet/plugins/gpu.kdra.io/dra.sock");

  @Inject KubernetesClient client;

  @Test
  @Order(1)
  void livenessReportsTheServiceCheckUp() {
    given()
        .when()
        .get("/q/health/live")
        .then()
        .statusCode(200)
        .body("status", equalTo("UP"))
        .body("checks.name", hasItem("device-driver"));
  }

  /** Before any claim: every series at zero, so that a rise is visible from the first error. */
  @Test
  @Order(1)
  void claimMetricsExistFromStartUp() {
    given()
        .when()
        .get("/q/metrics")
        .then()
        .statusCode(200)
        .body(containsString("kdra_driver_claim_operation_errors_total{operation=\"prepare\"} 0.0"))
        .body(
            containsString("kdra_driver_claim_operation_errors_total{operation=\"unprepare\"} 0.0"))
        .body(
            containsString(
                "kdra_driver_claim_operation_seconds_count{operation=\"prepare\",outcome=\"error\"} 0"));
  }

  @Test
  @Order(2)
  void notReadyUntilTheKubeletAcceptsTheRegistration() {
    given()
        .when()
        .get("/q/health/ready")
        .then()
        .statusCode(503)
        .body("checks[0].data.registration", equalTo("waiting for the kubelet"))
        .body("checks[0].data.sockets", equalTo("served"))
        .body("checks[0].data.publisher", equalTo("not configured"));
    try (TestKubelet kubelet = new TestKubelet()) {
      assertThat(kubelet.register(REG, List.of("v1.DRAPlugin"))).isEqualTo("v1.DRAPlugin");
    }
    given().when().get("/q/health/ready").then().statusCode(200).body("status", equalTo("UP"));
  }

  @Test
  @Order(3)
  void preparesAClaimReadFromTheApiAndUnpreparesIt() {
    ClaimFixture c = ClaimFixture.claim("train").result("gpu", "gpu-3");
    ResourceClaim created = client.resource(c.build()).create();
    if (created.getStatus() == null) {
      created.setStatus(c.build().getStatus());
      created = client.resource(created).updateStatus();
    }
    String uid = created.getMetadata().getUid(); // the API server assigns it
    Path spec = Path.of("target/cdi/k8s.gpu.kdra.io-claim_" + uid + ".json");
    Claim claim = Claim.newBuilder().setNamespace("default").setName("train").setUid(uid).build();
    try (TestKubelet kubelet = new TestKubelet()) {
      var stub =
          DRAPluginGrpc.newBlockingStub(kubelet.dial(DRA)).withDeadlineAfter(10, TimeUnit.SECONDS);
      var r =
          stub.nodePrepareResources(
                  NodePrepareResourcesRequest.newBuilder().addClaims(claim).build())
              .getClaimsOrThrow(uid);
      assertThat(r.getError()).isEmpty();
      // the device, and (kdra.device-driver.device-metadata is on by default) the request's
      // metadata file
      assertThat(r.getDevices(0).getCdiDeviceIdsList())
          .containsExactly(
              "k8s.gpu.kdra.io/claim=" + uid + "-gpu-3",
              "k8s.gpu.kdra.io/claim=" + uid + "_metadata_gpu");
      assertThat(spec).exists();

      var u =
          stub.nodeUnprepareResources(
              NodeUnprepareResourcesRequest.newBuilder().addClaims(claim).build());
      assertThat(u.getClaimsOrThrow(uid).getError()).isEmpty();
      assertThat(spec).doesNotExist();
    }
    given()
        .when()
        .get("/q/metrics")
        .then()
        .statusCode(200)
        .body(
            containsString(
                "kdra_driver_claim_operation_seconds_count{operation=\"prepare\",outcome=\"success\""));
  }

  @Test
  @Order(4)
  void streamsTheHealthOfEveryDeviceAsTheKubeletAsks() {
    try (TestKubelet kubelet = new TestKubelet()) {
      var initial = kubelet.watchHealth(DRA).next();
      // the built-in inventory: eight healthy GPUs in this node's pool, 10s discovery -> 40s
      assertThat(initial.getDevicesList())
          .extracting(d -> d.getDevice().getDeviceName())
          .containsExactly("gpu-0", "gpu-1", "gpu-2", "gpu-3", "gpu-4", "gpu-5", "gpu-6", "gpu-7");
      assertThat(initial.getDevicesList())
          .allSatisfy(
              d -> {
                assertThat(d.getDevice().getPoolName()).isEqualTo("node-a");
                assertThat(d.getHealth()).isEqualTo(HealthStatus.HEALTHY);
                assertThat(d.getHealthCheckTimeoutSeconds()).isEqualTo(40);
              });
      assertThat(initial.getDevicesList())
          .extracting(DeviceHealth::getLastUpdatedTime)
          .allMatch(t -> t > 0);
      given().when().get("/q/health/ready").then().body("checks[0].data.healthStreams", equalTo(1));
    }
  }
}
