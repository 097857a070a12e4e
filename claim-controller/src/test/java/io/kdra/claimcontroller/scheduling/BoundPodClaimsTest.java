package io.kdra.claimcontroller.scheduling;

import static org.assertj.core.api.Assertions.assertThat;

import io.fabric8.kubernetes.api.model.Pod;
import io.kdra.claimcontroller.domain.K;
import org.junit.jupiter.api.Test;

/**
 * {@link BoundPodClaims}: a pod bound without this scheduler gets its allocated claims reserved.
 */
class BoundPodClaimsTest extends SchedulingFixture {

  @Test
  void boundPodGetsItsAllocatedClaimReserved() {
    client.resource(K.allocated(K.claim("c")).build()).create();
    Pod pod =
        create(
            K.pod("web")
                .editSpec()
                .withNodeName("node-a")
                .addNewResourceClaim()
                .withName("gpu")
                .withResourceClaimName("c")
                .endResourceClaim()
                .endSpec()
                .build());
    scheduling.reserveForBoundPod(pod);
    assertThat(claim("c").getStatus().getReservedFor())
        .extracting(r -> r.getName())
        .containsExactly("web");
  }
}
