package io.kdra.claimcontroller.scheduling;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.resource.v1.AllocationResult;
import io.fabric8.kubernetes.api.model.resource.v1.AllocationResultBuilder;
import io.fabric8.kubernetes.api.model.resource.v1.ResourceClaim;
import io.fabric8.kubernetes.api.model.resource.v1.ResourceClaimBuilder;
import io.fabric8.kubernetes.client.KubernetesClientException;
import io.kdra.claimcontroller.domain.K;
import io.kdra.claimcontroller.domain.TemplateMode;
import io.kdra.claimcontroller.domain.Upstream;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import org.junit.jupiter.api.Test;

/**
 * {@link Reserve} and Unreserve end to end: what an attempt reserved stays taken until the informer
 * shows its write, and is given back when it is not written.
 */
class ReserveTest extends SchedulingFixture {

  @Test
  void twoPodsNeverGetTheSameDevice() {
    client.resource(K.template("tpl")).create();
    for (String name : List.of("p1", "p2", "p3")) {
      Pod pod = create(K.podWithTemplate(name, "gpu", "tpl"));
      scheduling.schedule(pod);
      scheduling.schedule(get(name));
    }
    assertThat(allClaims())
        .filteredOn(c -> c.getStatus() != null && c.getStatus().getAllocation() != null)
        .extracting(c -> c.getStatus().getAllocation().getDevices().getResults().get(0).getDevice())
        .containsExactlyInAnyOrder("dev-0", "dev-1");
    Outcome third = scheduling.schedule(get("p3"));
    assertThat(third).isInstanceOf(Outcome.Unschedulable.class);
    assertThat(((Outcome.Unschedulable) third).message()).contains("no device left");
  }

  /**
   * The informer lags behind an allocation this process wrote for longer than any timeout (a
   * relist, a slow watch): the device stays taken, so a second claim cannot get it; once the
   * informer shows the written version, the informer answers for the claim alone.
   */
  @Test
  void anAllocationTheInformerHasNotShownKeepsItsDeviceHoweverLongItLags() {
    allocator = new FakeAllocator(1);
    RecentWrites recent = new RecentWrites();
    PodScheduling s = newScheduling(TemplateMode.OWN, recent);
    ResourceClaim one = client.resource(K.claim("one").build()).create();
    client.resource(K.claim("two").build()).create();
    view.frozen.put("one", one);

    assertThat(s.schedule(create(K.podWithClaims("first", "gpu", "one"))))
        .isEqualTo(new Outcome.Bound("node-a"));
    // (no clock decides: until this fix, what was remembered went after one minute)

    Outcome second = s.schedule(create(K.podWithClaims("second", "gpu", "two")));
    assertThat(second).isInstanceOf(Outcome.Unschedulable.class);
    assertThat(claim("two").getStatus() == null ? null : claim("two").getStatus().getAllocation())
        .as("the only device is held by claim one")
        .isNull();

    // the informer catches up: what was remembered goes, the informer's copy holds the device
    view.frozen.clear();
    assertThat(s.schedule(create(K.podWithClaims("third", "gpu", "two"))))
        .isInstanceOf(Outcome.Unschedulable.class);
    assertThat(recent.assumes(one.getMetadata().getUid())).isFalse();
  }

  @Test
  void aRefusedReservationReleasesEveryDeviceTheAttemptAssumed() {
    client.resource(K.claim("one").build()).create();
    // "two" cannot take another consumer: its reservation is refused after "one"'s was written
    var full = K.claim("two");
    for (int i = 0; i < Upstream.MAX_RESERVED_FOR; i++) {
      full.editOrNewStatus()
          .addNewReservedFor()
          .withResource("pods")
          .withName("other-" + i)
          .withUid("uid-other-" + i)
          .endReservedFor()
          .endStatus();
    }
    client.resource(full.build()).create();
    Pod pod = create(K.podWithClaims("web", "a", "one", "b", "two"));
    RecentWrites recent = new RecentWrites();
    PodScheduling s = newScheduling(TemplateMode.OWN, recent);

    assertThat(s.schedule(pod)).isInstanceOf(Outcome.Unschedulable.class);
    assertThat(claim("one").getStatus().getAllocation()).isNull();
    assertThat(claim("two").getStatus().getAllocation()).isNull();

    // both devices of the node are free again: a pod needing two gets both
    client.resource(K.claim("three").build()).create();
    client.resource(K.claim("four").build()).create();
    Pod next = create(K.podWithClaims("next", "a", "three", "b", "four"));
    assertThat(s.schedule(next)).isEqualTo(new Outcome.Bound("node-a"));
  }

  /**
   * An allocation's write ended without an answer (the API server restarted under it) and did not
   * land, and nothing else changes the claim: the informer never shows a newer version, so waiting
   * for it would hold the device for good and leave the pod pending with the device free. The pod's
   * next attempt sends the same allocation again, on the version it was first sent on.
   */
  @Test
  void anAllocationWriteThatEndedWithoutAnAnswerIsSentAgainByThePodsNextAttempt() {
    allocator = new FakeAllocator(1);
    RecentWrites recent = new RecentWrites();
    PodScheduling s = newSchedulingWithoutRequestRetries(recent);
    ResourceClaim one = client.resource(K.claim("one").build()).create();
    failNextStatusWrite("one");

    assertThatThrownBy(() -> s.schedule(create(K.podWithClaims("first", "gpu", "one"))))
        .isInstanceOf(KubernetesClientException.class);
    assertThat(claim("one").getStatus() == null ? null : claim("one").getStatus().getAllocation())
        .as("the write did not land")
        .isNull();
    assertThat(recent.assumes(one.getMetadata().getUid())).isTrue();

    assertThat(s.schedule(get("first"))).isEqualTo(new Outcome.Bound("node-a"));
    ResourceClaim written = claim("one");
    assertThat(written.getStatus().getAllocation().getDevices().getResults())
        .extracting(r -> r.getDevice())
        .containsExactly("dev-0");
    assertThat(written.getStatus().getReservedFor()).extracting(r -> r.getName()).contains("first");
  }

  /**
   * As above, but the write did land: the next attempt finds the allocation it sent and only
   * reserves the claim; the device is never counted twice meanwhile.
   */
  @Test
  void anAllocationWriteThatLandedWithoutAnAnswerIsOnlyReservedByTheNextAttempt() {
    allocator = new FakeAllocator(1);
    RecentWrites recent = new RecentWrites();
    PodScheduling s = newSchedulingWithoutRequestRetries(recent);
    client.resource(K.claim("one").build()).create();
    client.resource(K.claim("two").build()).create();
    failNextStatusWrite("one");

    assertThatThrownBy(() -> s.schedule(create(K.podWithClaims("first", "gpu", "one"))))
        .isInstanceOf(KubernetesClientException.class);
    // the lost write landed after all, while a second pod wants the only device
    ResourceClaim landed = claim("one");
    client
        .resource(
            new ResourceClaimBuilder(landed)
                .editOrNewStatus()
                .withAllocation(FakeAllocator.result("node-a", "dev-0"))
                .endStatus()
                .build())
        .updateStatus();
    assertThat(s.schedule(create(K.podWithClaims("second", "gpu", "two"))))
        .isInstanceOf(Outcome.Unschedulable.class);

    assertThat(s.schedule(get("first"))).isEqualTo(new Outcome.Bound("node-a"));
    assertThat(claim("one").getStatus().getReservedFor())
        .extracting(r -> r.getName())
        .containsExactly("first");
    assertThat(claim("two").getStatus() == null ? null : claim("two").getStatus().getAllocation())
        .isNull();
  }

  /**
   * As above, the lost write landed with its reservation, and the pod was deleted before its next
   * attempt knew it (the informer lags): that attempt finds the claim reserved for the pod and its
   * binding fails, the pod being gone. Removing the pod from {@code reservedFor} must deallocate
   * the claim it leaves unreserved, as the cleanup (upstream's resourceclaim controller) would for
   * a consumer that is gone: nothing deallocates a claim allocated for no consumer, and its device
   * would never be free again.
   */
  @Test
  void aClaimWhosePodIsGoneWhenBindingIsDeallocatedWithItsReservation() {
    allocator = new FakeAllocator(1);
    RecentWrites recent = new RecentWrites();
    PodScheduling s = newSchedulingWithoutRequestRetries(recent);
    client.resource(K.claim("one").build()).create();
    client.resource(K.claim("two").build()).create();
    failNextStatusWrite("one");
    Pod first = create(K.podWithClaims("first", "gpu", "one"));
    assertThatThrownBy(() -> s.schedule(first)).isInstanceOf(KubernetesClientException.class);
    // the lost write landed after all, allocation and reservation as it was sent
    client
        .resource(
            new ResourceClaimBuilder(claim("one"))
                .editOrNewStatus()
                .withAllocation(FakeAllocator.result("node-a", "dev-0"))
                .addNewReservedFor()
                .withResource("pods")
                .withName("first")
                .withUid(first.getMetadata().getUid())
                .endReservedFor()
                .endStatus()
                .build())
        .updateStatus();
    Pod stale = get("first");
    client.pods().inNamespace(K.NS).withName("first").delete();

    assertThat(s.schedule(stale)).isInstanceOf(Outcome.Waiting.class);

    ResourceClaim released = claim("one");
    assertThat(released.getStatus().getReservedFor()).isNullOrEmpty();
    assertThat(released.getStatus().getAllocation()).as("the allocation").isNull();
    assertThat(released.getMetadata().getFinalizers()).doesNotContain(Upstream.FINALIZER);
    assertThat(s.schedule(create(K.podWithClaims("second", "gpu", "two"))))
        .isEqualTo(new Outcome.Bound("node-a"));
  }

  /**
   * One assumption per claim: a placement that would allocate a claim assumed allocated already (a
   * bug) takes nothing, not even its other claims' devices, and is tried again as stale.
   */
  @Test
  void aPlacementAllocatingAClaimAssumedAllocatedAlreadyTakesNothingAndIsTriedAgain() {
    RecentWrites recent = new RecentWrites();
    Reserve reserve = new Reserve(new DraManager(view, recent));
    Pod pod = K.pod("web").build();
    recent.allocated("uid-x", on("gpu-0"));
    Map<String, AllocationResult> allocations = new LinkedHashMap<>();
    allocations.put("uid-y", on("gpu-1"));
    allocations.put("uid-x", on("gpu-2"));

    Optional<String> bug =
        reserve.reserve(
            pod, List.of(), new Decided.Placement("node-a", allocations, Map.of(), null, null));

    assertThat(bug).hasValueSatisfying(m -> assertThat(m).contains("gpu-0", "gpu-2"));
    assertThat(recent.assumes("uid-y")).as("the placement's other claim").isFalse();
    assertThat(
            recent
                .withAssumed(K.claim("x").editMetadata().withUid("uid-x").endMetadata().build())
                .getStatus()
                .getAllocation())
        .as("the first assumption")
        .isEqualTo(on("gpu-0"));
    assertThat(recent.isBinding(pod.getMetadata().getUid())).isFalse();
  }

  private static AllocationResult on(String device) {
    return new AllocationResultBuilder()
        .withNewDevices()
        .addNewResult()
        .withRequest("gpu")
        .withDriver("gpu.kdra.io")
        .withPool("node-a")
        .withDevice(device)
        .endResult()
        .endDevices()
        .build();
  }
}
