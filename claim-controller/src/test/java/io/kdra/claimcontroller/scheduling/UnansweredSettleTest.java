package io.kdra.claimcontroller.scheduling;

import static io.kdra.claimcontroller.domain.K.NS;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.fabric8.kubernetes.api.model.resource.v1.ResourceClaim;
import io.fabric8.kubernetes.client.KubernetesClientException;
import io.kdra.claimcontroller.domain.K;
import io.kdra.claimcontroller.domain.Upstream;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * An allocation whose write ended without an answer, when no pod attempt sends it again: the pod
 * was deleted first, and nothing else writes its claim (a user's ResourceClaim).
 */
class UnansweredSettleTest extends SchedulingFixture {

  private final List<String> outcomes = new ArrayList<>();

  /**
   * The write did not land and the pod is gone: without a settle the informer never shows a newer
   * version and the device stays assumed in memory, so another pod never gets it. The settle undoes
   * the attempt on the version the write was made on, and the device is free.
   */
  @Test
  void aLostAllocationOfADeletedPodIsUndoneAndItsDeviceFreed() {
    allocator = new FakeAllocator(1);
    RecentWrites recent = new RecentWrites();
    PodScheduling s = newSchedulingWithoutRequestRetries(recent);
    ResourceClaim one = client.resource(K.claim("one").build()).create();
    client.resource(K.claim("two").build()).create();
    failNextStatusWrite("one");
    assertThatThrownBy(() -> s.schedule(create(K.podWithClaims("first", "gpu", "one"))))
        .isInstanceOf(KubernetesClientException.class);
    client.pods().inNamespace(NS).withName("first").delete();

    UnansweredSettle settle = new UnansweredSettle(recent, claims, () -> true, outcomes::add);
    settle.pass(); // takes note of the assumption
    settle.pass(); // unchanged since: settles it

    assertThat(s.schedule(create(K.podWithClaims("second", "gpu", "two"))))
        .isEqualTo(new Outcome.Bound("node-a"));
    ResourceClaim undone = claim("one");
    assertThat(undone.getStatus() == null ? null : undone.getStatus().getAllocation()).isNull();
    assertThat(undone.getMetadata().getFinalizers()).doesNotContain(Upstream.FINALIZER);
    assertThat(recent.assumes(one.getMetadata().getUid())).isFalse();
    assertThat(outcomes).containsExactly("unreserved");
  }

  /**
   * The pod's next attempt settles the assumption itself (it sends the allocation again): a pass
   * leaves alone what changed since the pass before, and writes nothing.
   */
  @Test
  void anAssumptionThatAPodAttemptSettledIsLeftAlone() {
    allocator = new FakeAllocator(1);
    RecentWrites recent = new RecentWrites();
    PodScheduling s = newSchedulingWithoutRequestRetries(recent);
    client.resource(K.claim("one").build()).create();
    failNextStatusWrite("one");
    assertThatThrownBy(() -> s.schedule(create(K.podWithClaims("first", "gpu", "one"))))
        .isInstanceOf(KubernetesClientException.class);
    UnansweredSettle settle = new UnansweredSettle(recent, claims, () -> true, outcomes::add);
    settle.pass();

    assertThat(s.schedule(get("first"))).isEqualTo(new Outcome.Bound("node-a"));
    settle.pass();

    assertThat(outcomes).isEmpty();
    assertThat(claim("one").getStatus().getReservedFor())
        .extracting(r -> r.getName())
        .containsExactly("first");
  }

  /** A replica that may not write (not leading, or its Lease is stale) leaves it all alone. */
  @Test
  void aReplicaThatMayNotWriteSettlesNothing() {
    allocator = new FakeAllocator(1);
    RecentWrites recent = new RecentWrites();
    PodScheduling s = newSchedulingWithoutRequestRetries(recent);
    ResourceClaim one = client.resource(K.claim("one").build()).create();
    failNextStatusWrite("one");
    assertThatThrownBy(() -> s.schedule(create(K.podWithClaims("first", "gpu", "one"))))
        .isInstanceOf(KubernetesClientException.class);
    client.pods().inNamespace(NS).withName("first").delete();

    UnansweredSettle settle = new UnansweredSettle(recent, claims, () -> false, outcomes::add);
    settle.pass();
    settle.pass();

    assertThat(outcomes).isEmpty();
    assertThat(recent.assumes(one.getMetadata().getUid())).isTrue();
    assertThat(claim("one").getMetadata().getFinalizers()).contains(Upstream.FINALIZER);
  }
}
