package io.kdra.leadership;

import static org.assertj.core.api.Assertions.assertThat;

import io.fabric8.kubernetes.api.model.StatusBuilder;
import io.fabric8.kubernetes.api.model.coordination.v1.Lease;
import io.fabric8.kubernetes.api.model.coordination.v1.LeaseBuilder;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.server.mock.EnableKubernetesMockClient;
import io.fabric8.kubernetes.client.server.mock.KubernetesMockServer;
import java.time.ZoneOffset;
import java.time.ZonedDateTime;
import org.junit.jupiter.api.Test;

/**
 * The release racing this replica's own last renewal (seen in ControllerBurstIT at load 15: the
 * elector's renew patch landed between the release's read and its update, the update got a 409, and
 * the standby waited a whole lease duration).
 */
@EnableKubernetesMockClient
class LeaseReleaseRaceTest {

  private static final String PATH =
      "/apis/coordination.k8s.io/v1/namespaces/kdra/leases/kdra-claim-controller";

  KubernetesMockServer server;
  KubernetesClient client;

  private static Lease lease(String holder, String resourceVersion) {
    ZonedDateTime now = ZonedDateTime.now(ZoneOffset.UTC);
    return new LeaseBuilder()
        .withNewMetadata()
        .withName("kdra-claim-controller")
        .withNamespace("kdra")
        .withResourceVersion(resourceVersion)
        .endMetadata()
        .withNewSpec()
        .withHolderIdentity(holder)
        .withLeaseDurationSeconds(15)
        .withRenewTime(now)
        .endSpec()
        .build();
  }

  private void conflictOnce() {
    server
        .expect()
        .put()
        .withPath(PATH)
        .andReturn(
            409,
            new StatusBuilder()
                .withCode(409)
                .withReason("Conflict")
                .withMessage("the object has been modified")
                .build())
        .once();
  }

  @Test
  void aConflictWithItsOwnRenewalIsRetriedOnTheLeaseReadAgain() throws InterruptedException {
    server.expect().get().withPath(PATH).andReturn(200, lease("cc-a", "1")).once();
    conflictOnce();
    server.expect().get().withPath(PATH).andReturn(200, lease("cc-a", "2")).once();
    server.expect().put().withPath(PATH).andReturn(200, lease(null, "3")).once();

    assertThat(new LeaseRelease(client, "kdra", "kdra-claim-controller", "cc-a").release())
        .isTrue();
    assertThat(server.getLastRequest().getMethod()).isEqualTo("PUT");
  }

  @Test
  void aConflictBecauseAnotherReplicaTookTheLeaseEndsTheRelease() throws InterruptedException {
    server.expect().get().withPath(PATH).andReturn(200, lease("cc-a", "1")).once();
    conflictOnce();
    server.expect().get().withPath(PATH).andReturn(200, lease("cc-b", "2")).once();

    assertThat(new LeaseRelease(client, "kdra", "kdra-claim-controller", "cc-a").release())
        .isFalse();
    assertThat(server.getLastRequest().getMethod()).isEqualTo("GET");
  }

  @Test
  void conflictsThatDoNotEndGiveUpAfterTheLastAttempt() {
    for (int i = 0; i < LeaseRelease.ATTEMPTS; i++) {
      server.expect().get().withPath(PATH).andReturn(200, lease("cc-a", "" + i)).once();
      conflictOnce();
    }
    assertThat(new LeaseRelease(client, "kdra", "kdra-claim-controller", "cc-a").release())
        .isFalse();
    assertThat(server.getRequestCount()).isEqualTo(2 * LeaseRelease.ATTEMPTS);
  }
}
