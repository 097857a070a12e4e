package io.kdra.claimcontroller.reconciler;

import static io.kdra.claimcontroller.domain.K.NS;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.PodCondition;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.javaoperatorsdk.operator.Operator;
import io.javaoperatorsdk.operator.processing.Controller;
import io.javaoperatorsdk.operator.processing.event.EventProcessor;
import io.javaoperatorsdk.operator.processing.event.ResourceID;
import io.kdra.claimcontroller.domain.K;
import io.kdra.claimcontroller.domain.Upstream;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Timer;
import io.quarkus.test.junit.QuarkusTest;
import io.quarkus.test.junit.QuarkusTestProfile;
import io.quarkus.test.junit.TestProfile;
import io.quarkus.test.kubernetes.client.KubernetesServer;
import io.quarkus.test.kubernetes.client.KubernetesTestServer;
import io.quarkus.test.kubernetes.client.WithKubernetesTestServer;
import jakarta.inject.Inject;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/**
 * A pod deleted while its reconcile runs and re-created under the same name (a StatefulSet's pod):
 * the late end of the old pod's reconcile must not take the new pod's retry with it. The operator
 * SDK keys its retry timer by namespace/name and cancels it when any reconcile of that name ends.
 */
@QuarkusTest
@TestProfile(RecreatedPodTest.GatedClaims.class)
@WithKubernetesTestServer(crud = true)
class RecreatedPodTest {

  /**
   * Claims are created through {@link GatedClaimWriter}; backoff starts long enough for the old
   * reconcile to end surely while the new pod's retry is pending.
   */
  public static class GatedClaims implements QuarkusTestProfile {
    @Override
    public Set<Class<?>> getEnabledAlternatives() {
      return Set.of(GatedClaimWriter.class);
    }

    @Override
    public Map<String, String> getConfigOverrides() {
      return Map.of("kdra.claim-controller.retry.initial-backoff", "5s");
    }
  }

  @KubernetesTestServer KubernetesServer server;
  @Inject KubernetesClient client;
  @Inject GatedClaimWriter claims;
  @Inject Operator operator;
  @Inject MeterRegistry meters;

  @Test
  void aPodRecreatedWhileTheOldOnesReconcileRunsKeepsItsRetry() throws Exception {
    MockCluster.readyNode(client, "node-a");
    MockCluster.templateOfMissingClass(client, "no-class", "missing");

    GatedClaimWriter.Hold hold = claims.holdNext();
    Pod old = client.resource(K.podWithTemplate("twin", "gpu", "no-class")).create();
    assertThat(hold.holding.await(2, TimeUnit.MINUTES)).isTrue();
    MockCluster.deleteAndAwaitGone(client, old);

    client.resource(K.podWithTemplate("twin", "gpu", "no-class")).create();
    // its attempts have ended unschedulable: only its retry is pending
    await()
        .atMost(Duration.ofMinutes(1))
        .ignoreExceptions()
        .until(() -> unschedulable(client.pods().inNamespace(NS).withName("twin").get()) && idle());
    long attempts = attempts();

    // the old pod's reconcile ends now, after its pod is gone; its write of the old pod's status is
    // refused, as an API server refuses it
    MockCluster.refuseNextStatusWrite(server, "twin");
    hold.release.countDown();

    // that attempt, then the new pod's retry
    await().atMost(Duration.ofMinutes(1)).until(() -> attempts() >= attempts + 2);
  }

  private static boolean unschedulable(Pod pod) {
    List<PodCondition> conditions = pod.getStatus().getConditions();
    return conditions.stream()
        .anyMatch(
            c ->
                Upstream.POD_SCHEDULED.equals(c.getType())
                    && Upstream.REASON_UNSCHEDULABLE.equals(c.getReason()));
  }

  /** Whether no reconcile of the pod named twin runs or is due at once. */
  @SuppressWarnings("unchecked")
  private boolean idle() {
    EventProcessor<Pod> processor =
        ((Controller<Pod>) operator.getRegisteredController("pod-scheduler").orElseThrow())
            .getEventProcessor();
    ResourceID twin = new ResourceID("twin", NS);
    return !processor.isUnderProcessing(twin) && !processor.isNextReconciliationImminent(twin);
  }

  /** Scheduling attempts so far, of every pod. */
  private long attempts() {
    Timer t = meters.find("kdra.claim.controller.scheduling").timer();
    return t == null ? 0 : t.count();
  }
}
