package io.kdra.claimcontroller.reconciler;

import static io.kdra.claimcontroller.domain.K.NS;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.resource.v1.ResourceClaim;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.kdra.claimcontroller.domain.K;
import io.kdra.claimcontroller.domain.Upstream;
import io.kdra.core.testing.AllocFixtures;
import io.quarkus.test.junit.QuarkusTest;
import io.quarkus.test.kubernetes.client.WithKubernetesTestServer;
import jakarta.inject.Inject;
import java.time.Duration;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * The running operator (both reconcilers, their informers, dra-core's allocator and the wiring)
 * against the fabric8 mock API server; binding goes through {@link MockServerBinder}.
 */
@QuarkusTest
@WithKubernetesTestServer(crud = true)
class ClaimControllerOperatorTest {

  @Inject KubernetesClient client;

  List<ResourceClaim> claimsOf(String pod) {
    return client.resources(ResourceClaim.class).inNamespace(NS).list().getItems().stream()
        .filter(c -> c.getMetadata().getName().startsWith(pod + "-"))
        .toList();
  }

  @Test
  void schedulesAPodWithATemplateClaimOntoTheNodeWithTheDevice() {
    MockCluster.readyNode(client, "node-a");
    MockCluster.readyNode(client, "node-b");
    client.resource(K.template("tpl")).createOr(t -> t.update());
    client.resource(AllocFixtures.deviceClass("gpu")).createOr(c -> c.update());
    client
        .resource(
            AllocFixtures.slice("node-b-gpu", "node-b", AllocFixtures.device("gpu-0").build())
                .build())
        .createOr(c -> c.update());
    client.resource(K.podWithTemplate("ok", "gpu", "tpl")).create();

    await()
        .atMost(Duration.ofMinutes(2))
        .ignoreExceptions()
        .untilAsserted(
            () -> {
              assertThat(client.pods().inNamespace(NS).withName("ok").get().getSpec().getNodeName())
                  .isEqualTo("node-b");
              assertThat(claimsOf("ok"))
                  .singleElement()
                  .satisfies(
                      c -> {
                        assertThat(c.getMetadata().getFinalizers()).contains(Upstream.FINALIZER);
                        assertThat(c.getStatus().getReservedFor()).hasSize(1);
                        assertThat(
                                c.getStatus()
                                    .getAllocation()
                                    .getDevices()
                                    .getResults()
                                    .get(0)
                                    .getDevice())
                            .isEqualTo("gpu-0");
                      });
            });
  }

  @Inject PodReconciler podReconciler;

  @Test
  void aPodDeletedWhileUnschedulableLeavesNoBackoffState() {
    MockCluster.readyNode(client, "node-a");
    MockCluster.templateOfMissingClass(client, "tpl3", "missing-too");
    Pod pod = client.resource(K.podWithTemplate("doomed", "gpu", "tpl3")).create();
    String uid = pod.getMetadata().getUid();
    await()
        .atMost(Duration.ofMinutes(2))
        .untilAsserted(() -> assertThat(podReconciler.holdsBackoffFor(uid)).isTrue());

    client.resource(pod).delete();
    // the next pod that backs off drops the state of pods that are gone
    Pod next = client.resource(K.podWithTemplate("doomed-next", "gpu", "tpl3")).create();
    await()
        .atMost(Duration.ofMinutes(2))
        .untilAsserted(
            () -> {
              assertThat(podReconciler.holdsBackoffFor(next.getMetadata().getUid())).isTrue();
              assertThat(podReconciler.holdsBackoffFor(uid)).isFalse();
            });
    client.resource(next).delete();
  }

  @Test
  void anUnallocatedClaimWithUpstreamsFinalizerIsReleasedWhenDeleted() {
    ResourceClaim claim =
        client
            .resource(
                new io.fabric8.kubernetes.api.model.resource.v1.ResourceClaimBuilder(
                        K.claim("protected").build())
                    .editMetadata()
                    .addToFinalizers(Upstream.FINALIZER)
                    .endMetadata()
                    .build())
            .create();
    client.resource(claim).delete();
    await()
        .atMost(Duration.ofMinutes(2))
        .untilAsserted(() -> assertThat(client.resource(claim).get()).isNull());
  }

  @Test
  void createsTheTemplateClaimAndReportsWhyThePodWaits() {
    MockCluster.readyNode(client, "node-a");
    MockCluster.templateOfMissingClass(client, "tpl2", "missing");
    client.resource(K.podWithTemplate("web", "gpu", "tpl2")).create();

    await()
        .atMost(Duration.ofMinutes(2))
        .ignoreExceptions()
        .untilAsserted(
            () -> {
              Pod pod = client.pods().inNamespace(NS).withName("web").get();
              assertThat(claimsOf("web"))
                  .singleElement()
                  .satisfies(
                      c ->
                          assertThat(c.getMetadata().getAnnotations())
                              .containsEntry(Upstream.POD_CLAIM_NAME_ANNOTATION, "gpu"));
              assertThat(pod.getStatus().getResourceClaimStatuses()).hasSize(1);
              assertThat(pod.getStatus().getConditions())
                  .anySatisfy(
                      c -> {
                        assertThat(c.getType()).isEqualTo("PodScheduled");
                        assertThat(c.getReason()).isEqualTo("Unschedulable");
                        // The template's class "missing" does not exist: the allocator's
                        // explanation says so.
                        assertThat(c.getMessage()).contains("claim web-gpu-").contains("missing");
                      });
            });
  }

  @Test
  void deletingThePodDeletesItsGeneratedClaim() {
    client.resource(K.template("tpl")).createOr(t -> t.update());
    client.resource(K.podWithTemplate("gone", "gpu", "tpl")).create();
    await()
        .atMost(Duration.ofMinutes(2))
        .untilAsserted(() -> assertThat(claimsOf("gone")).hasSize(1));

    client.pods().inNamespace(NS).withName("gone").delete();

    await()
        .atMost(Duration.ofMinutes(2))
        .untilAsserted(() -> assertThat(claimsOf("gone")).isEmpty());
  }
}
