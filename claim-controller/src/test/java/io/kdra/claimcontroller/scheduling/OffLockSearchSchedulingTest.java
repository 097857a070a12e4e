package io.kdra.claimcontroller.scheduling;

import static org.assertj.core.api.Assertions.assertThat;

import io.fabric8.kubernetes.api.model.resource.v1.ResourceClaim;
import io.kdra.claimcontroller.domain.K;
import io.kdra.claimcontroller.domain.TemplateMode;
import io.kdra.events.EventRecorder;
import java.time.Clock;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.atomic.AtomicBoolean;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * A pod whose device search ran out of time before searches again off the scheduling lock: the
 * other pods are placed meanwhile, and what it found is written only once redone under the lock
 * against the devices taken since. The pathological pod's search is a test allocator that blocks
 * until the test lets it go, so nothing here waits for time.
 */
class OffLockSearchSchedulingTest extends SchedulingFixture {

  final CountDownLatch inSearch = new CountDownLatch(1);
  final CountDownLatch releaseSearch = new CountDownLatch(1);
  final ExecutorService executor = Executors.newSingleThreadExecutor();

  @BeforeEach
  void templates() {
    client.resource(K.template("tpl")).create();
  }

  @AfterEach
  void release() {
    releaseSearch.countDown();
    executor.shutdownNow();
  }

  /** {@code fake}'s answers, the first search of pod "patho" blocked until the test releases it. */
  PodScheduling blockingFirstSearchOfPatho(FakeAllocator fake) {
    AtomicBoolean blocked = new AtomicBoolean();
    PodAllocator blocking =
        (pod, candidates, unallocated, state, v, deadline) -> {
          if ("patho".equals(pod.getMetadata().getName()) && blocked.compareAndSet(false, true)) {
            inSearch.countDown();
            try {
              releaseSearch.await();
            } catch (InterruptedException e) {
              Thread.currentThread().interrupt();
              throw new IllegalStateException(e);
            }
          }
          synchronized (fake) {
            return fake.allocate(pod, candidates, unallocated, state, v, deadline);
          }
        };
    return new PodScheduling(
        view,
        new RecentWrites(),
        new PodScheduling.Writers(
            claims, pods, binder, new EventRecorder(client, K.SCHEDULER, Clock.systemUTC())),
        blocking,
        PodScheduling.Settings.of(TemplateMode.OWN, ClaimTracer.NOOP));
  }

  void createPods(PodScheduling s) {
    for (String name : List.of("patho", "p1")) {
      assertThat(s.schedule(create(K.podWithTemplate(name, "gpu", "tpl"))))
          .isInstanceOf(Outcome.Waiting.class);
    }
  }

  /** The claim made from the template for pod {@code pod}. */
  ResourceClaim claimOf(String pod) {
    return allClaims().stream()
        .filter(c -> pod.equals(c.getMetadata().getOwnerReferences().get(0).getName()))
        .findFirst()
        .orElseThrow();
  }

  @Test
  @Timeout(value = 120, threadMode = Timeout.ThreadMode.SEPARATE_THREAD) // a failure guard: with
  // the search under the lock, p1 waits for it, which never ends
  void anotherPodIsPlacedWhileASearchThatRanOutBeforeRunsAgain() throws Exception {
    PodScheduling s = blockingFirstSearchOfPatho(new FakeAllocator(2));
    createPods(s);

    Future<Outcome> patho = executor.submit(() -> s.schedule(get("patho"), 2, true));
    inSearch.await();
    assertThat(s.schedule(get("p1"))).isEqualTo(new Outcome.Bound("node-a"));
    releaseSearch.countDown();

    // its search saw dev-0 free; redone under the lock, it takes the device p1 left
    assertThat(patho.get()).isEqualTo(new Outcome.Bound("node-a"));
    assertThat(allClaims())
        .extracting(c -> c.getStatus().getAllocation().getDevices().getResults().get(0).getDevice())
        .containsExactlyInAnyOrder("dev-0", "dev-1");
  }

  @Test
  @Timeout(value = 120, threadMode = Timeout.ThreadMode.SEPARATE_THREAD) // as above
  void aPlacementFoundOnASnapshotThatWentStaleIsNotWritten() throws Exception {
    PodScheduling s = blockingFirstSearchOfPatho(new FakeAllocator(1));
    createPods(s);

    Future<Outcome> patho = executor.submit(() -> s.schedule(get("patho"), 2, true));
    inSearch.await();
    // p1 takes the only device, which the pathological pod's snapshot shows free
    assertThat(s.schedule(get("p1"))).isEqualTo(new Outcome.Bound("node-a"));
    releaseSearch.countDown();

    assertThat(patho.get())
        .isInstanceOfSatisfying(
            Outcome.Retry.class,
            r ->
                assertThat(r.reason())
                    .startsWith(
                        "node node-a, found by a search off the scheduling lock, no longer fits:"));
    assertThat(get("patho").getSpec().getNodeName()).isNull();
    assertThat(claimOf("patho").getStatus()).isNull(); // never allocated
    assertThat(claimOf("p1").getStatus().getAllocation().getDevices().getResults())
        .singleElement()
        .satisfies(r -> assertThat(r.getDevice()).isEqualTo("dev-0"));
  }
}
