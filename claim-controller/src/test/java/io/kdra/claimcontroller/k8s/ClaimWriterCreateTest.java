package io.kdra.claimcontroller.k8s;

import static org.assertj.core.api.Assertions.assertThat;

import io.fabric8.kubernetes.api.model.resource.v1.ResourceClaim;
import io.fabric8.kubernetes.api.model.resource.v1.ResourceClaimBuilder;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.server.mock.EnableKubernetesMockClient;
import io.kdra.claimcontroller.domain.Kdra;
import io.kdra.claimcontroller.domain.Upstream;
import java.util.Map;
import org.junit.jupiter.api.Test;

@EnableKubernetesMockClient(crud = true)
class ClaimWriterCreateTest {

  KubernetesClient client;

  /** A template's claim is created ready to be allocated: no metadata write is left for later. */
  @Test
  void createsTheClaimMarkedWithTheTraceContextAndUpstreamsFinalizer() {
    ResourceClaim desired =
        new ResourceClaimBuilder()
            .withNewMetadata()
            .withNamespace("apps")
            .withName("web-gpu-x1")
            .endMetadata()
            .build();

    new ClaimWriter(client, "dra-claim-controller", 3)
        .create(desired, Map.of("kdra.io/traceparent", "00-abc-def-01"));

    ResourceClaim stored =
        client.resources(ResourceClaim.class).inNamespace("apps").withName("web-gpu-x1").get();
    assertThat(stored.getMetadata().getFinalizers()).containsExactly(Upstream.FINALIZER);
    assertThat(stored.getMetadata().getAnnotations())
        .containsEntry(Kdra.SCHEDULER_ANNOTATION, "dra-claim-controller")
        .containsEntry("kdra.io/traceparent", "00-abc-def-01");
  }
}
