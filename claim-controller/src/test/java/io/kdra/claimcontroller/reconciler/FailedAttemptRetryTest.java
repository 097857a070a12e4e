package io.kdra.claimcontroller.reconciler;

import static io.kdra.claimcontroller.domain.K.NS;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.fabric8.kubernetes.api.model.Pod;
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
 * An attempt whose API write fails (the API server answers 500, a timeout, a conflict) is retried
 * through the pod's own UID-keyed retry, as an unschedulable pod is: not through the operator SDK's
 * error retry, which is keyed by namespace/name and shared with a deleted pod of the same name
 * whose reconcile may still run. The failed pod here is one re-created while its predecessor's
 * reconcile runs (ClaimDeletionIT's churn): its template claim is made and recorded all the same.
 */
@QuarkusTest
@TestProfile(RecreatedPodTest.GatedClaims.class)
@WithKubernetesTestServer(crud = true)
class FailedAttemptRetryTest {

  @KubernetesTestServer KubernetesServer server;
  @Inject KubernetesClient client;
  @Inject GatedClaimWriter claims;
  @Inject PodReconciler reconciler;

  @Test
  void aFailedClaimCreationIsRetriedByThePodsOwnRetry() throws Exception {
    MockCluster.readyNode(client, "node-a");
    MockCluster.templateOfMissingClass(client, "failing", "missing");

    GatedClaimWriter.Hold old = claims.holdNext();
    try {
      Pod gone = client.resource(K.podWithTemplate("lazarus", "gpu", "failing")).create();
      assertThat(old.holding.await(2, TimeUnit.MINUTES)).isTrue();
      MockCluster.deleteAndAwaitGone(client, gone);

      // the new pod's first attempt fails to create its claim
      claims.next(GatedClaimWriter.Next.FAIL);
      Pod pod = client.resource(K.podWithTemplate("lazarus", "gpu", "failing")).create();
      String uid = pod.getMetadata().getUid();
      assertThat(claims.failed.await(2, TimeUnit.MINUTES)).isTrue();
      // its own retry is pending before any second attempt (the backoff starts at 5 s here)
      await()
          .atMost(Duration.ofMinutes(1))
          .until(() -> reconciler.retryPendingFor(uid) && claims.creationsFor(uid) == 1);

      // the old pod's reconcile ends meanwhile; its write of the old pod's status is refused
      MockCluster.refuseNextStatusWrite(server, "lazarus");
      old.release.countDown();

      await()
          .atMost(Duration.ofMinutes(1))
          .until(() -> claimRecorded(client.pods().inNamespace(NS).withName("lazarus").get()));
      assertThat(claims.creationsFor(uid)).isEqualTo(2);
    } finally {
      old.release.countDown();
    }
  }

  private static boolean claimRecorded(Pod pod) {
    return pod != null
        && pod.getStatus() != null
        && pod.getStatus().getResourceClaimStatuses() != null
        && pod.getStatus().getResourceClaimStatuses().stream()
            .anyMatch(s -> s.getResourceClaimName() != null);
  }
}
