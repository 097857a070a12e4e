package io.kdra.claimcontroller.scheduling;

import static org.assertj.core.api.Assertions.assertThat;

import io.kdra.claimcontroller.domain.K;
import io.kdra.claimcontroller.domain.TemplateMode;
import io.kdra.claimcontroller.k8s.PodBinder;
import io.kdra.events.EventRecorder;
import java.time.Clock;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * {@link SchedulingCycle}'s lock covers the decision and Reserve only: the next pod is decided
 * while the one before is bound or diagnosed.
 */
class SchedulingCycleTest extends SchedulingFixture {

  @Test
  @Timeout(120) // a failure guard: before the decision and the writes were split, this hung
  void theNextPodIsPlacedWhileTheFirstIsStillBeingBound() throws Exception {
    client.resource(K.template("tpl")).create();
    CountDownLatch firstInBind = new CountDownLatch(1);
    CountDownLatch releaseFirst = new CountDownLatch(1);
    PodBinder blocking =
        (pod, node) -> {
          if ("p1".equals(pod.getMetadata().getName())) {
            firstInBind.countDown();
            try {
              releaseFirst.await();
            } catch (InterruptedException e) {
              Thread.currentThread().interrupt();
              throw new IllegalStateException(e);
            }
          }
          binder.bind(pod, node);
        };
    PodScheduling s =
        new PodScheduling(
            view,
            new RecentWrites(),
            new PodScheduling.Writers(
                claims, pods, blocking, new EventRecorder(client, K.SCHEDULER, Clock.systemUTC())),
            allocator,
            PodScheduling.Settings.of(TemplateMode.OWN, ClaimTracer.NOOP));
    for (String name : List.of("p1", "p2")) {
      assertThat(s.schedule(create(K.podWithTemplate(name, "gpu", "tpl"))))
          .isInstanceOf(Outcome.Waiting.class);
    }
    ExecutorService executor = Executors.newSingleThreadExecutor();
    try {
      Future<Outcome> first = executor.submit(() -> s.schedule(get("p1")));
      firstInBind.await();

      // p1 holds its devices (reserved, or assumed) while its binding hangs; p2 goes past it
      assertThat(s.schedule(get("p2"))).isEqualTo(new Outcome.Bound("node-a"));
      releaseFirst.countDown();
      assertThat(first.get()).isEqualTo(new Outcome.Bound("node-a"));
    } finally {
      releaseFirst.countDown();
      executor.shutdownNow();
    }
    assertThat(allClaims())
        .extracting(c -> c.getStatus().getAllocation().getDevices().getResults().get(0).getDevice())
        .containsExactlyInAnyOrder("dev-0", "dev-1");
  }

  @Test
  @Timeout(120) // a failure guard: were the diagnosis under the scheduling lock, this would hang
  void theNextPodIsPlacedWhileWhyTheFirstFitsNowhereIsStillBeingWorkedOut() throws Exception {
    client.resource(K.template("tpl")).create();
    CountDownLatch inDiagnosis = new CountDownLatch(1);
    CountDownLatch releaseDiagnosis = new CountDownLatch(1);
    PodAllocator slowToExplain =
        (pod, candidates, unallocated, state, v, deadline) -> {
          if (!"p1".equals(pod.getMetadata().getName())) {
            return allocator.allocate(pod, candidates, unallocated, state, v, deadline);
          }
          return new PodAllocator.Decision.Unexplained(
              () -> {
                inDiagnosis.countDown();
                try {
                  releaseDiagnosis.await();
                } catch (InterruptedException e) {
                  Thread.currentThread().interrupt();
                  throw new IllegalStateException(e);
                }
                return new PodAllocator.Decision.NotPlaced(
                    "claim x: worked out", Map.of("x", "worked out"), "Unsatisfiable");
              });
        };
    PodScheduling s =
        new PodScheduling(
            view,
            new RecentWrites(),
            new PodScheduling.Writers(
                claims, pods, binder, new EventRecorder(client, K.SCHEDULER, Clock.systemUTC())),
            slowToExplain,
            PodScheduling.Settings.of(TemplateMode.OWN, ClaimTracer.NOOP));
    for (String name : List.of("p1", "p2")) {
      assertThat(s.schedule(create(K.podWithTemplate(name, "gpu", "tpl"))))
          .isInstanceOf(Outcome.Waiting.class);
    }
    ExecutorService executor = Executors.newSingleThreadExecutor();
    try {
      Future<Outcome> first = executor.submit(() -> s.schedule(get("p1")));
      inDiagnosis.await();

      assertThat(s.schedule(get("p2"))).isEqualTo(new Outcome.Bound("node-a"));
      releaseDiagnosis.countDown();
      assertThat(first.get())
          .isEqualTo(
              new Outcome.Unschedulable(
                  "claim x: worked out", Map.of("x", "worked out"), "Unsatisfiable"));
    } finally {
      releaseDiagnosis.countDown();
      executor.shutdownNow();
    }
  }
}
