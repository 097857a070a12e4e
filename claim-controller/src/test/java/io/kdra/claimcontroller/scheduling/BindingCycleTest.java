package io.kdra.claimcontroller.scheduling;

import static io.kdra.claimcontroller.domain.K.NS;
import static org.assertj.core.api.Assertions.assertThat;

import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.StatusBuilder;
import io.fabric8.kubernetes.api.model.resource.v1.ResourceClaim;
import io.kdra.claimcontroller.domain.CleanupPlan;
import io.kdra.claimcontroller.domain.K;
import io.kdra.claimcontroller.domain.TemplateMode;
import io.kdra.claimcontroller.domain.Upstream;
import io.kdra.events.EventRecorder;
import java.time.Clock;
import java.util.List;
import java.util.Optional;
import org.junit.jupiter.api.Test;

/**
 * {@link BindingCycle} end to end ({@link PreBind}, then Bind): conflicts, stale decisions, a
 * restart between the writes, a pod gone before its binding.
 */
class BindingCycleTest extends SchedulingFixture {

  @Test
  void conflictOnStatusWriteIsRetriedWithAFreshRead() {
    client.resource(K.claim("c").build()).create();
    Pod pod = create(K.podWithClaim("web", "gpu", "c"));
    server
        .expect()
        .put()
        .withPath("/apis/resource.k8s.io/v1/namespaces/ns/resourceclaims/c/status")
        .andReturn(409, new StatusBuilder().withCode(409).withReason("Conflict").build())
        .once();

    assertThat(scheduling.schedule(pod)).isEqualTo(new Outcome.Bound("node-a"));
    assertThat(claim("c").getStatus().getReservedFor()).hasSize(1);
  }

  @Test
  void claimAllocatedMeanwhileMakesTheDecisionStaleAndRollsBack() {
    client.resource(K.claim("one").build()).create();
    client.resource(K.claim("two").build()).create();
    Pod pod = create(K.podWithClaims("web", "a", "one", "b", "two"));
    // Another writer allocates "two" after our informer saw it free.
    ResourceClaim stale = claim("two");
    client
        .resource(
            K.allocated(K.claim("two"), K.pod("other").build())
                .editMetadata()
                .withResourceVersion(null)
                .endMetadata()
                .build())
        .update();
    ApiView lagging =
        new ApiView(client) {
          @Override
          public Optional<ResourceClaim> claim(String namespace, String name) {
            return "two".equals(name) ? Optional.of(stale) : super.claim(namespace, name);
          }

          @Override
          public List<ResourceClaim> claims() {
            return super.claims().stream()
                .map(c -> "two".equals(c.getMetadata().getName()) ? stale : c)
                .toList();
          }
        };
    PodScheduling s =
        new PodScheduling(
            lagging,
            new RecentWrites(),
            new PodScheduling.Writers(
                claims, pods, binder, new EventRecorder(client, K.SCHEDULER, Clock.systemUTC())),
            allocator,
            PodScheduling.Settings.of(TemplateMode.OWN, ClaimTracer.NOOP));

    assertThat(s.schedule(pod)).isInstanceOf(Outcome.Retry.class);
    ResourceClaim one = claim("one");
    assertThat(one.getStatus().getAllocation()).isNull();
    assertThat(one.getStatus().getReservedFor()).isEmpty();
    assertThat(one.getMetadata().getFinalizers()).doesNotContain(Upstream.FINALIZER);
    assertThat(get("web").getSpec().getNodeName()).isNull();
  }

  @Test
  void restartBetweenReservationAndBindingBindsWhereTheAllocationIs() {
    client.nodes().resource(K.readyNode("node-b")).create();
    client.resource(K.claim("c").build()).create();
    Pod pod = create(K.podWithClaim("web", "gpu", "c"));
    // What a crash after the status write leaves: allocated on node-b, reserved, pod unbound.
    claims.reserve(NS, "c", pod, FakeAllocator.result("node-b", "dev-0"), java.util.Map.of());

    assertThat(newScheduling(TemplateMode.OWN).schedule(pod))
        .isEqualTo(new Outcome.Bound("node-b"));
    assertThat(allocator.calls).isZero();
    assertThat(claim("c").getStatus().getReservedFor()).hasSize(1);
  }

  @Test
  void podDeletedBeforeBindingLeavesNothingBehind() {
    client.resource(K.template("tpl")).create();
    Pod pod = create(K.podWithTemplate("web", "gpu", "tpl"));
    scheduling.schedule(pod);
    ResourceClaim c = allClaims().get(0);
    // Allocated and reserved, but the bind never happened (e.g. the pod was deleted first).
    claims.reserve(
        NS,
        c.getMetadata().getName(),
        pod,
        FakeAllocator.result("node-a", "dev-0"),
        java.util.Map.of());
    client.pods().inNamespace(NS).withName("web").delete();

    CleanupPlan plan =
        claims.cleanup(
            NS,
            c.getMetadata().getName(),
            (ns, name) -> Optional.ofNullable(client.pods().inNamespace(ns).withName(name).get()));

    assertThat(plan.deallocate()).isTrue();
    assertThat(plan.delete()).isTrue();
    assertThat(allClaims()).isEmpty();
  }
}
