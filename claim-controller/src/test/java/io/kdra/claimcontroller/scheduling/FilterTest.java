package io.kdra.claimcontroller.scheduling;

import static org.assertj.core.api.Assertions.assertThat;

import io.fabric8.kubernetes.api.model.Pod;
import io.kdra.claimcontroller.domain.K;
import io.kdra.claimcontroller.domain.TemplateMode;
import io.kdra.core.alloc.AllocatorFeatures;
import io.kdra.core.alloc.AllocatorOptions;
import io.kdra.core.testing.AllocFixtures;
import io.kdra.events.EventRecorder;
import java.time.Clock;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * {@link Filter} end to end: the nodes a pod may go to, and its claims' devices allocated on one of
 * them, each device once, or the reason on the pod.
 */
class FilterTest extends SchedulingFixture {

  @Test
  void noFeasibleNodeIsUnschedulableWithTheFilterSummary() {
    client.nodes().withName("node-a").delete();
    Pod pod = create(K.pod("web").build());
    Outcome o = scheduling.schedule(pod);
    assertThat(o).isInstanceOf(Outcome.Unschedulable.class);
    assertThat(pods.markUnschedulable(pod, ((Outcome.Unschedulable) o).message())).isTrue();
    assertThat(pods.markUnschedulable(get("web"), ((Outcome.Unschedulable) o).message()))
        .as("unchanged condition is not rewritten")
        .isFalse();
    assertThat(get("web").getStatus().getConditions())
        .singleElement()
        .satisfies(
            c -> {
              assertThat(c.getType()).isEqualTo("PodScheduled");
              assertThat(c.getStatus()).isEqualTo("False");
              assertThat(c.getReason()).isEqualTo("Unschedulable");
              assertThat(c.getMessage()).isEqualTo("0/0 nodes are available.");
            });
  }

  @Test
  void dracoreAllocatorHandsOutEachDeviceOnceAndExplainsTheRest() {
    client.resource(AllocFixtures.deviceClass("gpu")).create();
    client
        .resource(
            AllocFixtures.slice(
                    "node-a-gpu",
                    "node-a",
                    AllocFixtures.device("gpu-0").build(),
                    AllocFixtures.device("gpu-1").build())
                .build())
        .create();
    allocator = null;
    PodScheduling real =
        new PodScheduling(
            view,
            new RecentWrites(),
            new PodScheduling.Writers(
                claims, pods, binder, new EventRecorder(client, K.SCHEDULER, Clock.systemUTC())),
            new DraCorePodAllocator(
                AllocatorOptions.defaults(AllocatorFeatures.defaults(), () -> "share")),
            PodScheduling.Settings.of(TemplateMode.OWN, ClaimTracer.NOOP));
    client.resource(K.template("tpl")).create();
    for (String name : List.of("p1", "p2", "p3")) {
      real.schedule(create(K.podWithTemplate(name, "gpu", "tpl")));
    }
    assertThat(real.schedule(get("p1"))).isEqualTo(new Outcome.Bound("node-a"));
    assertThat(real.schedule(get("p2"))).isEqualTo(new Outcome.Bound("node-a"));
    Outcome third = real.schedule(get("p3"));

    assertThat(allClaims())
        .filteredOn(c -> c.getStatus() != null && c.getStatus().getAllocation() != null)
        .extracting(c -> c.getStatus().getAllocation().getDevices().getResults().get(0).getDevice())
        .containsExactlyInAnyOrder("gpu-0", "gpu-1");
    assertThat(third).isInstanceOf(Outcome.Unschedulable.class);
    Outcome.Unschedulable u = (Outcome.Unschedulable) third;
    assertThat(u.perClaim()).hasSize(1);
    assertThat(u.message()).startsWith("claim p3-gpu-").contains("request \"gpu\"");
  }

  @Test
  void sharedClaimIsAllocatedOnceAndReservedForEveryPod() {
    client.resource(K.claim("shared").build()).create();
    for (String name : List.of("p1", "p2")) {
      Pod pod = create(K.podWithClaim(name, "gpu", "shared"));
      assertThat(scheduling.schedule(pod)).isEqualTo(new Outcome.Bound("node-a"));
    }
    assertThat(allocator.calls).isEqualTo(1);
    assertThat(claim("shared").getStatus().getReservedFor())
        .extracting(r -> r.getName())
        .containsExactly("p1", "p2");
  }
}
