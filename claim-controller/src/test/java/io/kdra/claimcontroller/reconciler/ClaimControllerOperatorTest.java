package io.kdra.claimcontroller.reconciler;

import static io.kdra.claimcontroller.domain.K.NS;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.resource.v1.ResourceClaim;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.kdra.claimcontroller.domain.K;
import io.kdra.claimcontroller.domain.Upstream;
import io.quarkus.test.junit.QuarkusTest;
import io.quarkus.test.kubernetes.client.WithKubernetesTestServer;
import jakarta.inject.Inject;
import java.time.Duration;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * The running operator (both reconcilers, their informers and the wiring) against the fabric8
 * mock API server. No allocator is wired in this build, so a pod with a claim ends up
 * unschedulable with that explanation; the allocation path itself is covered by
 * PodSchedulingTest.
 */
@QuarkusTest
@WithKubernetesTestServer(crud = true)
class ClaimControllerOperatorTest {

  @Inject KubernetesClient client;

  List<ResourceClaim> claimsOf(String pod) {
    return client.resources(ResourceClaim.class).inNamespace(NS).list().getItems().stream()
        .filter(c -> c.getMetadata().getName().startsWith(pod + "-")).toList();
  }

  @Test
  void createsTheTemplateClaimAndReportsWhyThePodWaits() {
    client.nodes().resource(K.readyNode("node-a")).createOr(n -> n.update());
    client.resource(K.template("tpl")).createOr(t -> t.update());
    client.resource(K.podWithTemplate("web", "gpu", "tpl")).create();

    await().atMost(Duration.ofSeconds(20)).ignoreExceptions().untilAsserted(() -> {
      Pod pod = client.pods().inNamespace(NS).withName("web").get();
      assertThat(claimsOf("web")).singleElement().satisfies(c -> assertThat(
          c.getMetadata().getAnnotations()).containsEntry(Upstream.POD_CLAIM_NAME_ANNOTATION,
              "gpu"));
      assertThat(pod.getStatus().getResourceClaimStatuses()).hasSize(1);
      assertThat(pod.getStatus().getConditions()).anySatisfy(c -> {
        assertThat(c.getType()).isEqualTo("PodScheduled");
        assertThat(c.getReason()).isEqualTo("Unschedulable");
        assertThat(c.getMessage()).contains("no device allocator");
      });
    });
  }

  @Test
  void deletingThePodDeletesItsGeneratedClaim() {
    client.resource(K.template("tpl")).createOr(t -> t.update());
    client.resource(K.podWithTemplate("gone", "gpu", "tpl")).create();
    await().atMost(Duration.ofSeconds(20))
        .untilAsserted(() -> assertThat(claimsOf("gone")).hasSize(1));

    client.pods().inNamespace(NS).withName("gone").delete();

    await().atMost(Duration.ofSeconds(20))
        .untilAsserted(() -> assertThat(claimsOf("gone")).isEmpty());
  }
}
