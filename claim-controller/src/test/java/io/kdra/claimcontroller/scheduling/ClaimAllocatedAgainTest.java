package io.kdra.claimcontroller.scheduling;

import static org.assertj.core.api.Assertions.assertThat;

import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.resource.v1.ResourceClaim;
import io.fabric8.kubernetes.api.model.resource.v1.ResourceClaimBuilder;
import io.kdra.claimcontroller.domain.K;
import io.kdra.claimcontroller.domain.Reservation;
import org.junit.jupiter.api.Test;

/**
 * A pod placed on a claim allocated already (shared) is reserved only while the claim is still
 * allocated as the decision saw it: a claim deallocated and allocated again for another node
 * meanwhile never gets the pod reserved and bound where its first allocation was.
 */
class ClaimAllocatedAgainTest extends SchedulingFixture {

  @Test
  void aClaimAllocatedAgainElsewhereSinceTheDecisionIsStaleNotReserved() {
    client.nodes().resource(K.readyNode("node-b")).create();
    ResourceClaim onNodeA =
        client
            .resource(
                K.claim("shared")
                    .withNewStatus()
                    .withAllocation(FakeAllocator.result("node-a", "dev-0"))
                    .endStatus()
                    .build())
            .create();
    // deallocated and allocated again for node-b; the informer still shows node-a
    client
        .resource(
            new ResourceClaimBuilder(client.resource(onNodeA).get())
                .editStatus()
                .withAllocation(FakeAllocator.result("node-b", "dev-1"))
                .endStatus()
                .build())
        .updateStatus();
    view.frozen.put("shared", onNodeA);
    Pod pod = create(K.podWithClaims("web", "gpu", "shared"));

    Outcome first = scheduling.schedule(pod);

    assertThat(first).isEqualTo(new Outcome.Retry("claim shared was allocated again meanwhile"));
    assertThat(get("web").getSpec().getNodeName()).isNull();
    assertThat(Reservation.reserves(claim("shared"), pod)).isFalse();

    // the informer catches up: placed where the claim is allocated now
    view.frozen.clear();
    assertThat(scheduling.schedule(get("web"))).isEqualTo(new Outcome.Bound("node-b"));
    assertThat(Reservation.reserves(claim("shared"), pod)).isTrue();
  }
}
