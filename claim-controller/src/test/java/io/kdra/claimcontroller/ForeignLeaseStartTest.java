package io.kdra.claimcontroller;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.fabric8.kubernetes.api.model.coordination.v1.LeaseBuilder;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.kdra.leadership.Leadership;
import io.quarkus.test.junit.QuarkusTest;
import io.quarkus.test.junit.QuarkusTestProfile;
import io.quarkus.test.junit.TestProfile;
import io.quarkus.test.kubernetes.client.KubernetesServer;
import io.quarkus.test.kubernetes.client.WithKubernetesTestServer;
import jakarta.inject.Inject;
import java.time.Duration;
import java.util.Map;
import java.util.function.Consumer;
import org.junit.jupiter.api.Test;

/**
 * A replica that starts while its Lease was written by hand ({@code kubectl}, a GitOps tool, a
 * chart: a holder and a duration, no times) campaigns and leads, as client-go would (a missing time
 * is the zero time, so the Lease has long expired). The first election used to be the operator
 * SDK's, on fabric8's own Lease lock, which throws on such a Lease and ends that election for good:
 * the replica stayed Ready and never led. Now every election is {@code ElectionWiring}'s.
 */
@QuarkusTest
@TestProfile(ForeignLeaseStartTest.Elected.class)
@WithKubernetesTestServer(crud = true, setup = ForeignLeaseStartTest.HandWrittenLease.class)
class ForeignLeaseStartTest {

  static final String NS = "kdra-system";
  static final String LEASE = "kdra-claim-controller";
  static final String IDENTITY = "claim-controller-a";

  /**
   * Elected as in production, where quarkus-operator-sdk would run an election of its own if it
   * were given one (only in the profiles this property names); quick retries.
   */
  public static class Elected implements QuarkusTestProfile {
    @Override
    public Map<String, String> getConfigOverrides() {
      return Map.of(
          "quarkus.operator-sdk.activate-leader-election-for-profiles", "prod,test",
          "kdra.claim-controller.leader-election.enabled", "true",
          "kdra.claim-controller.leader-election.lease-namespace", NS,
          "kdra.claim-controller.leader-election.identity", IDENTITY,
          "kdra.claim-controller.leader-election.retry-period", "200ms");
    }
  }

  /** The Lease as {@code kubectl create} leaves it from a manifest that names a holder. */
  public static class HandWrittenLease implements Consumer<KubernetesServer> {
    @Override
    public void accept(KubernetesServer server) {
      server
          .getClient()
          .resource(
              new LeaseBuilder()
                  .withNewMetadata()
                  .withName(LEASE)
                  .withNamespace(NS)
                  .endMetadata()
                  .withNewSpec()
                  .withHolderIdentity("gitops")
                  .withLeaseDurationSeconds(15)
                  .endSpec()
                  .build())
          .create();
    }
  }

  @Inject Leadership leadership;
  @Inject KubernetesClient client;

  @Test
  void theReplicaTakesTheLeaseAndLeads() {
    await().atMost(Duration.ofSeconds(60)).until(leadership::leading);
    assertThat(client.leases().inNamespace(NS).withName(LEASE).get().getSpec().getHolderIdentity())
        .isEqualTo(IDENTITY);
  }
}
