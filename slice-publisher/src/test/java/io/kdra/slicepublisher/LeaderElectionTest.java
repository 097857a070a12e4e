package io.kdra.slicepublisher;

import static io.restassured.RestAssured.given;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;
import static org.hamcrest.Matchers.equalTo;

import io.fabric8.kubernetes.api.model.coordination.v1.Lease;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.kdra.slicepublisher.domain.PlannerSettings;
import io.kdra.slicepublisher.domain.PlannerSettings.NetworkPoolSpec;
import io.quarkus.test.junit.QuarkusTest;
import io.quarkus.test.junit.QuarkusTestProfile;
import io.quarkus.test.junit.TestProfile;
import io.quarkus.test.kubernetes.client.WithKubernetesTestServer;
import jakarta.inject.Inject;
import java.time.Duration;
import java.util.Map;
import org.junit.jupiter.api.Test;

/**
 * With leader election on, the replica takes the Lease and then becomes the writer. The same boot
 * checks that the typed configuration maps network pools and label keys.
 */
@QuarkusTest
@TestProfile(LeaderElectionTest.Enabled.class)
@WithKubernetesTestServer(crud = true)
class LeaderElectionTest {

  /**
   * Leader election on. A free Lease is taken at once whatever its duration, so the durations are
   * long enough for a loaded machine (a 2 s renew deadline was lost to load once, and then the
   * replica stopped writing).
   */
  public static class Enabled implements QuarkusTestProfile {
    @Override
    public Map<String, String> getConfigOverrides() {
      return Map.ofEntries(
          Map.entry("kdra.slice-publisher.leader-election.enabled", "true"),
          Map.entry("kdra.slice-publisher.leader-election.lease-namespace", "kdra-test"),
          Map.entry("kdra.slice-publisher.leader-election.identity", "replica-a"),
          Map.entry("kdra.slice-publisher.leader-election.lease-duration", "30s"),
          Map.entry("kdra.slice-publisher.leader-election.renew-deadline", "20s"),
          Map.entry("kdra.slice-publisher.leader-election.retry-period", "1s"),
          Map.entry(
              "kdra.slice-publisher.node-label-attributes",
              "topology.kubernetes.io/zone,cloud.google.com/compute-class"),
          Map.entry("kdra.slice-publisher.network-pools.fabric-a.driver", "gpu.kdra.io"),
          Map.entry("kdra.slice-publisher.network-pools.fabric-a.source-node", "gw-1"),
          Map.entry("kdra.slice-publisher.network-pools.fabric-b.driver", "gpu.kdra.io"),
          Map.entry("kdra.slice-publisher.network-pools.fabric-b.source-node", "gw-2"),
          Map.entry("kdra.slice-publisher.network-pools.fabric-b.node-selector.zone", "b"));
    }
  }

  @Inject KubernetesClient client;
  @Inject PlannerSettings settings;

  @Test
  void configurationMapsToPlannerSettings() {
    assertThat(settings.nodeLabelAttributes())
        .containsExactly("topology.kubernetes.io/zone", "cloud.google.com/compute-class");
    assertThat(settings.networkPools())
        .containsExactly(
            new NetworkPoolSpec("fabric-a", "gpu.kdra.io", "gw-1", Map.of()),
            new NetworkPoolSpec("fabric-b", "gpu.kdra.io", "gw-2", Map.of("zone", "b")));
    assertThat(settings.unhealthyTaintKey()).isEqualTo("kdra.io/unhealthy");
  }

  @Test
  void theReplicaTakesTheLeaseAndThenWrites() {
    await()
        .atMost(Duration.ofMinutes(2))
        .untilAsserted(
            () -> {
              Lease lease =
                  client.leases().inNamespace("kdra-test").withName("kdra-slice-publisher").get();
              assertThat(lease).isNotNull();
              assertThat(lease.getSpec().getHolderIdentity()).isEqualTo("replica-a");
            });
    await()
        .atMost(Duration.ofMinutes(2))
        .untilAsserted(
            () ->
                given()
                    .when()
                    .get("/q/health/ready")
                    .then()
                    .statusCode(200)
                    .body("status", equalTo("UP"))
                    .body(
                        "checks.find { it.name == 'slice-publisher-writer' }.data.writer",
                        equalTo(true)));
  }

  /**
   * An API-server outage past the renew deadline, or another holder, ends this replica's term: it
   * steps down in the process (no exit), stays ready, and writes again once the Lease is free.
   */
  @Test
  void aReplicaThatLosesTheLeaseStepsDownStaysReadyAndWritesAgainOnceItIsFree() {
    awaitWriter(true);
    editLease("intruder");
    awaitWriter(false);
    // the other holder goes away and frees the Lease, as a released one looks
    editLease(null);
    awaitWriter(true);
  }

  private void awaitWriter(boolean writer) {
    await()
        .atMost(Duration.ofMinutes(2))
        .untilAsserted(
            () ->
                given()
                    .when()
                    .get("/q/health/ready")
                    .then()
                    .statusCode(200)
                    .body("status", equalTo("UP"))
                    .body(
                        "checks.find { it.name == 'slice-publisher-writer' }.data.writer",
                        equalTo(writer)));
  }

  /** Sets the Lease's holder; the leader renews concurrently, so a conflict is retried. */
  private void editLease(String holder) {
    for (int attempt = 1; ; attempt++) {
      try {
        client
            .leases()
            .inNamespace("kdra-test")
            .withName("kdra-slice-publisher")
            .edit(
                l -> {
                  l.getSpec().setHolderIdentity(holder);
                  l.getSpec().setRenewTime(java.time.ZonedDateTime.now(java.time.ZoneOffset.UTC));
                  return l;
                });
        return;
      } catch (io.fabric8.kubernetes.client.KubernetesClientException e) {
        if (e.getCode() != 409 || attempt == 10) {
          throw e;
        }
      }
    }
  }
}
