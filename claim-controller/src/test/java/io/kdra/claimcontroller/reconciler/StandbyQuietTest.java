package io.kdra.claimcontroller.reconciler;

import static io.kdra.claimcontroller.domain.K.NS;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.coordination.v1.LeaseBuilder;
import io.fabric8.kubernetes.api.model.resource.v1.ResourceClaim;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.javaoperatorsdk.operator.api.reconciler.UpdateControl;
import io.kdra.claimcontroller.domain.K;
import io.kdra.claimcontroller.domain.Kdra;
import io.kdra.leadership.Leadership;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Timer;
import io.quarkus.test.junit.QuarkusTest;
import io.quarkus.test.junit.QuarkusTestProfile;
import io.quarkus.test.junit.TestProfile;
import io.quarkus.test.kubernetes.client.KubernetesServer;
import io.quarkus.test.kubernetes.client.WithKubernetesTestServer;
import jakarta.inject.Inject;
import java.time.Duration;
import java.time.ZoneOffset;
import java.time.ZonedDateTime;
import java.util.Map;
import java.util.function.Consumer;
import org.junit.jupiter.api.Test;

/**
 * A standby (another replica holds a fresh Lease) tries a pending pod once, is fenced, and leaves
 * it alone: no retry is scheduled, which used to cost every standby one attempt per pending pod and
 * second for as long as it stood by; likewise the claim cleanup leaves our claims alone instead of
 * looking at each once a second. Once the Lease is free and this replica leads, the pod is tried
 * again without any event of its own, and its claim is made.
 */
@QuarkusTest
@TestProfile(StandbyQuietTest.Elected.class)
@WithKubernetesTestServer(crud = true, setup = StandbyQuietTest.AnotherReplicaLeads.class)
class StandbyQuietTest {

  static final String LEASE_NS = "kdra-system";
  static final String LEASE = "kdra-claim-controller";

  /** Elected as in production, with quick retries. */
  public static class Elected implements QuarkusTestProfile {
    @Override
    public Map<String, String> getConfigOverrides() {
      return Map.of(
          "kdra.claim-controller.leader-election.enabled", "true",
          "kdra.claim-controller.leader-election.lease-namespace", LEASE_NS,
          "kdra.claim-controller.leader-election.identity", "claim-controller-a",
          "kdra.claim-controller.leader-election.retry-period", "200ms");
    }
  }

  /** A Lease that another replica holds and renewed just now, for an hour. */
  public static class AnotherReplicaLeads implements Consumer<KubernetesServer> {
    @Override
    public void accept(KubernetesServer server) {
      ZonedDateTime now = ZonedDateTime.now(ZoneOffset.UTC);
      server
          .getClient()
          .resource(
              new LeaseBuilder()
                  .withNewMetadata()
                  .withName(LEASE)
                  .withNamespace(LEASE_NS)
                  .endMetadata()
                  .withNewSpec()
                  .withHolderIdentity("claim-controller-b")
                  .withLeaseDurationSeconds(3600)
                  .withAcquireTime(now)
                  .withRenewTime(now)
                  .endSpec()
                  .build())
          .create();
    }
  }

  @Inject KubernetesClient client;
  @Inject PodReconciler reconciler;
  @Inject ClaimReconciler cleanup;
  @Inject Leadership leadership;
  @Inject MeterRegistry registry;

  @Test
  void aStandbyLeavesAPendingPodAloneUntilItLeads() {
    MockCluster.templateOfMissingClass(client, "standby", "missing");
    long before = attempts();
    Pod pod = client.resource(K.podWithTemplate("quiet", "gpu", "standby")).create();
    String uid = pod.getMetadata().getUid();

    // the standby's attempt has ended (fenced)
    await()
        .atMost(Duration.ofMinutes(1))
        .until(() -> attempts() > before && !reconciler.attemptRunningFor(uid));
    assertThat(leadership.leading()).isFalse();
    assertThat(reconciler.retryPendingFor(uid)).isFalse();
    assertThat(claimRecorded(uid)).isFalse();
    var ours =
        K.claim("ours").editMetadata().addToAnnotations(Kdra.SCHEDULER_ANNOTATION, K.SCHEDULER);
    UpdateControl<ResourceClaim> cleaned = cleanup.reconcile(ours.endMetadata().build(), null);
    assertThat(cleaned.isNoUpdate()).isTrue();
    assertThat(cleaned.getScheduleDelay()).isEmpty();

    // the other replica is gone and its Lease with it: this one leads and tries the pod
    client.leases().inNamespace(LEASE_NS).withName(LEASE).delete();
    await().atMost(Duration.ofMinutes(1)).until(leadership::leading);
    await().atMost(Duration.ofMinutes(1)).until(() -> claimRecorded(uid));
  }

  private long attempts() {
    Timer t = registry.find("kdra.claim.controller.scheduling").timer();
    return t == null ? 0 : t.count();
  }

  private boolean claimRecorded(String uid) {
    Pod pod = client.pods().inNamespace(NS).withName("quiet").get();
    return pod != null
        && uid.equals(pod.getMetadata().getUid())
        && pod.getStatus() != null
        && pod.getStatus().getResourceClaimStatuses() != null
        && pod.getStatus().getResourceClaimStatuses().stream()
            .anyMatch(s -> s.getResourceClaimName() != null);
  }
}
