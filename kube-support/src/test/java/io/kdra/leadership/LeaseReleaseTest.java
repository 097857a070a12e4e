package io.kdra.leadership;

import static org.assertj.core.api.Assertions.assertThat;

import io.fabric8.kubernetes.api.model.coordination.v1.Lease;
import io.fabric8.kubernetes.api.model.coordination.v1.LeaseBuilder;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientBuilder;
import io.fabric8.kubernetes.client.server.mock.EnableKubernetesMockClient;
import java.time.ZoneOffset;
import java.time.ZonedDateTime;
import org.junit.jupiter.api.Test;

@EnableKubernetesMockClient(crud = true)
class LeaseReleaseTest {

  KubernetesClient client;

  private void lease(String holder) {
    ZonedDateTime now = ZonedDateTime.now(ZoneOffset.UTC);
    client
        .leases()
        .inNamespace("kdra")
        .resource(
            new LeaseBuilder()
                .withNewMetadata()
                .withName("kdra-computeclass-bridge")
                .endMetadata()
                .withNewSpec()
                .withHolderIdentity(holder)
                .withLeaseDurationSeconds(15)
                .withAcquireTime(now)
                .withRenewTime(now)
                .withLeaseTransitions(3)
                .endSpec()
                .build())
        .create();
  }

  private Lease current() {
    return client.leases().inNamespace("kdra").withName("kdra-computeclass-bridge").get();
  }

  private LeaseRelease as(String identity) {
    return new LeaseRelease(client, "kdra", "kdra-computeclass-bridge", identity);
  }

  @Test
  void theHolderReleasesItsLeaseForTheNextCandidate() {
    lease("bridge-a");
    assertThat(as("bridge-a").release()).isTrue();
    Lease released = current();
    assertThat(released.getSpec().getHolderIdentity()).isNull();
    assertThat(released.getSpec().getLeaseDurationSeconds()).isEqualTo(1);
    assertThat(released.getSpec().getLeaseTransitions()).isEqualTo(3);
  }

  @Test
  void aLeaseSomeoneElseHoldsIsLeftAlone() {
    lease("bridge-b");
    assertThat(as("bridge-a").release()).isFalse();
    assertThat(current().getSpec().getHolderIdentity()).isEqualTo("bridge-b");
    assertThat(current().getSpec().getLeaseDurationSeconds()).isEqualTo(15);
  }

  /**
   * A client closed already (the operator SDK closed the shared one when it stopped, before the
   * release ran): the release fails with a warning instead of throwing into the elector's
   * cancellation, where the error vanished without a word.
   */
  @Test
  void aClosedClientReleasesNothingAndDoesNotThrow() {
    lease("bridge-a");
    KubernetesClient closed =
        new KubernetesClientBuilder().withConfig(client.getConfiguration()).build();
    closed.close();
    assertThat(new LeaseRelease(closed, "kdra", "kdra-computeclass-bridge", "bridge-a").release())
        .isFalse();
    assertThat(current().getSpec().getHolderIdentity()).isEqualTo("bridge-a");
  }

  @Test
  void noLeaseNothingToRelease() {
    assertThat(as("bridge-a").release()).isFalse();
    assertThat(current()).isNull();
  }
}
