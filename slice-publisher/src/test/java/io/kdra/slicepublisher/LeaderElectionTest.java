package io.kdra.slicepublisher;

import static io.restassured.RestAssured.given;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;
import static org.hamcrest.Matchers.equalTo;

import io.fabric8.kubernetes.api.model.coordination.v1.Lease;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.quarkus.test.junit.QuarkusTest;
import io.quarkus.test.junit.QuarkusTestProfile;
import io.quarkus.test.junit.TestProfile;
import io.quarkus.test.kubernetes.client.WithKubernetesTestServer;
import jakarta.inject.Inject;
import java.time.Duration;
import java.util.Map;
import org.junit.jupiter.api.Test;

/** With leader election on, the replica takes the Lease before it writes and reports ready. */
@QuarkusTest
@TestProfile(LeaderElectionTest.Enabled.class)
@WithKubernetesTestServer(crud = true)
class LeaderElectionTest {

  /** Leader election on, with a short lease so that the test is quick. */
  public static class Enabled implements QuarkusTestProfile {
    @Override
    public Map<String, String> getConfigOverrides() {
      return Map.of(
          "publisher.leader-election.enabled", "true",
          "publisher.leader-election.lease-namespace", "kdra-test",
          "publisher.leader-election.identity", "replica-a",
          "publisher.leader-election.lease-duration", "3s",
          "publisher.leader-election.renew-deadline", "2s",
          "publisher.leader-election.retry-period", "200ms");
    }
  }

  @Inject KubernetesClient client;

  @Test
  void theReplicaHoldsTheLeaseAndIsReady() {
    await().atMost(Duration.ofSeconds(30)).untilAsserted(() ->
        given().when().get("/q/health/ready").then().statusCode(200)
            .body("status", equalTo("UP")));
    Lease lease = client.leases().inNamespace("kdra-test").withName("kdra-slice-publisher").get();
    assertThat(lease).isNotNull();
    assertThat(lease.getSpec().getHolderIdentity()).isEqualTo("replica-a");
  }
}
