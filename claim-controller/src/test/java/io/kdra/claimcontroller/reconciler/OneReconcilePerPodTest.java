package io.kdra.claimcontroller.reconciler;

import static io.kdra.claimcontroller.domain.K.NS;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.PodBuilder;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.kdra.claimcontroller.domain.K;
import io.quarkus.test.junit.QuarkusTest;
import io.quarkus.test.junit.TestProfile;
import io.quarkus.test.kubernetes.client.KubernetesServer;
import io.quarkus.test.kubernetes.client.KubernetesTestServer;
import io.quarkus.test.kubernetes.client.WithKubernetesTestServer;
import jakarta.inject.Inject;
import java.time.Duration;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/**
 * The operator SDK serialises reconciles by namespace/name, and the late end of a deleted pod's
 * reconcile clears the flag of a pod re-created under its name: a second reconcile of the new pod
 * can then start while its first runs. Both would create a claim from the template for the same
 * entry; one pod's UID is reconciled once at a time.
 */
@QuarkusTest
@TestProfile(RecreatedPodTest.GatedClaims.class)
@WithKubernetesTestServer(crud = true)
class OneReconcilePerPodTest {

  @KubernetesTestServer KubernetesServer server;
  @Inject KubernetesClient client;
  @Inject GatedClaimWriter claims;
  @Inject PodReconciler reconciler;

  @Test
  void aSecondReconcileOfAPodWhileItsFirstRunsCreatesNoSecondClaim() throws Exception {
    MockCluster.readyNode(client, "node-a");
    MockCluster.templateOfMissingClass(client, "held-twice", "missing");

    GatedClaimWriter.Hold old = claims.holdNext();
    GatedClaimWriter.Hold first = null;
    try {
      Pod gone = client.resource(K.podWithTemplate("phoenix", "gpu", "held-twice")).create();
      assertThat(old.holding.await(2, TimeUnit.MINUTES)).isTrue();
      MockCluster.deleteAndAwaitGone(client, gone);

      // the new pod's first reconcile holds its claim's creation
      first = claims.holdNext();
      Pod pod = client.resource(K.podWithTemplate("phoenix", "gpu", "held-twice")).create();
      String uid = pod.getMetadata().getUid();
      assertThat(first.holding.await(2, TimeUnit.MINUTES)).isTrue();

      // the old pod's reconcile ends, which clears the new pod's under-processing flag in the SDK;
      // its write of the old pod's status is refused, as an API server refuses it
      MockCluster.refuseNextStatusWrite(server, "phoenix");
      old.release.countDown();
      // so the pod's next event starts a second reconcile while the first still runs
      client
          .pods()
          .inNamespace(NS)
          .withName("phoenix")
          .edit(
              p ->
                  new PodBuilder(p)
                      .editMetadata()
                      .addToLabels("touched", "1")
                      .endMetadata()
                      .build());

      // it either creates a second claim for the entry or asks for a retry instead
      await()
          .atMost(Duration.ofMinutes(1))
          .until(() -> claims.creationsFor(uid) >= 2 || reconciler.retryPendingFor(uid));
      assertThat(claims.creationsFor(uid)).isEqualTo(1);
    } finally {
      old.release.countDown();
      if (first != null) {
        first.release.countDown();
      }
    }
  }
}
