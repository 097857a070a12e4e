package io.kdra.claimcontroller.scheduling;

import static org.assertj.core.api.Assertions.assertThat;

import io.fabric8.kubernetes.api.model.Node;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.resource.v1.AllocationResult;
import io.fabric8.kubernetes.api.model.resource.v1.ResourceClaim;
import io.fabric8.kubernetes.api.model.resource.v1.ResourceClaimConsumerReference;
import io.kdra.claimcontroller.domain.K;
import io.kdra.claimcontroller.domain.Reservation;
import io.kdra.claimcontroller.domain.TemplateMode;
import io.kdra.claimcontroller.k8s.ClaimWriter;
import io.kdra.core.alloc.AllocatedState;
import io.kdra.core.alloc.Deadline;
import io.kdra.events.EventRecorder;
import java.time.Clock;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * Pods sharing a claim that is not allocated yet, scheduled together (the {@code shared} workload
 * of the scheduling benchmark). The second pod's attempt resolves its claims before the first pod's
 * allocation is reserved and is decided after it, under the scheduling lock: there it must see that
 * allocation (assumed) and only reserve the claim. Allocating the claim a second time replaced the
 * first allocation in the assume cache, so the devices the claim was about to hold looked free to
 * the next pod: one device in two claims.
 */
class SharedClaimInFlightTest extends SchedulingFixture {

  @Test
  @Timeout(300) // a failure guard: the interleaving is driven by latches, never by time
  void aClaimAllocatedWhileTheNextPodWaitedForTheLockIsOnlyReservedForIt() throws Exception {
    client.resource(K.claim("shared").build()).create();
    client.resource(K.claim("own").build()).create();
    Pod first = create(K.podWithClaims("first", "gpu", "shared"));
    Pod second = create(K.podWithClaims("second", "gpu", "shared"));
    Pod third = create(K.podWithClaims("third", "gpu", "own"));

    // the first pod's device search, under the scheduling lock, waits until the second pod's
    // attempt has resolved its claims and waits for that lock
    CountDownLatch firstSearching = new CountDownLatch(1);
    CountDownLatch releaseFirst = new CountDownLatch(1);
    PodAllocator holdingFirst =
        new PodAllocator() {
          @Override
          public Decision allocate(
              Pod pod,
              List<Node> candidates,
              List<ResourceClaim> unallocated,
              AllocatedState allocated,
              ClusterView view,
              Deadline deadline) {
            if ("first".equals(pod.getMetadata().getName())) {
              firstSearching.countDown();
              await(releaseFirst);
            }
            return allocator.allocate(pod, candidates, unallocated, allocated, view, deadline);
          }
        };
    // the first and the second pod's PreBind wait (before any write) while a third pod is decided
    CountDownLatch firstInPreBind = new CountDownLatch(1);
    CountDownLatch releaseFirstWrites = new CountDownLatch(1);
    CountDownLatch secondInPreBind = new CountDownLatch(1);
    CountDownLatch releaseSecondWrites = new CountDownLatch(1);
    ClaimWriter holdingWrites =
        new ClaimWriter(client, K.SCHEDULER, 3) {
          @Override
          public Reservation.Step reserve(
              String namespace,
              String name,
              ResourceClaim cached,
              ResourceClaimConsumerReference consumer,
              AllocationResult allocation,
              AllocationResult relied,
              Map<String, String> annotations,
              StatusWrites writes) {
            if (first.getMetadata().getUid().equals(consumer.getUid())) {
              firstInPreBind.countDown();
              await(releaseFirstWrites);
            } else if (second.getMetadata().getUid().equals(consumer.getUid())) {
              secondInPreBind.countDown();
              await(releaseSecondWrites);
            }
            return super.reserve(
                namespace, name, cached, consumer, allocation, relied, annotations, writes);
          }
        };
    PodScheduling s =
        new PodScheduling(
            view,
            new RecentWrites(),
            new PodScheduling.Writers(
                holdingWrites,
                pods,
                binder,
                new EventRecorder(client, K.SCHEDULER, Clock.systemUTC())),
            holdingFirst,
            PodScheduling.Settings.of(TemplateMode.OWN, ClaimTracer.NOOP));

    ExecutorService threads = Executors.newFixedThreadPool(2);
    Outcome firstOutcome;
    Outcome secondOutcome;
    Outcome thirdOutcome;
    try {
      Future<Outcome> firstDone = threads.submit(() -> s.schedule(first));
      firstSearching.await();
      AtomicReference<Thread> secondThread = new AtomicReference<>();
      Future<Outcome> secondDone =
          threads.submit(
              () -> {
                secondThread.set(Thread.currentThread());
                return s.schedule(second);
              });
      awaitBlockedOnTheSchedulingLock(secondThread);
      // the first pod's allocation is reserved (assumed) and its writes start; the second pod is
      // decided on the claims it resolved before that
      releaseFirst.countDown();
      firstInPreBind.await();
      secondInPreBind.await();
      // both pods' writes are in flight: what the third pod's claim gets is what the assume cache
      // holds for claim shared
      thirdOutcome = s.schedule(third);
      releaseFirstWrites.countDown();
      firstOutcome = firstDone.get();
      releaseSecondWrites.countDown();
      secondOutcome = secondDone.get();
    } finally {
      releaseFirst.countDown();
      releaseFirstWrites.countDown();
      releaseSecondWrites.countDown();
      threads.shutdownNow();
    }

    assertThat(device("own"))
        .as("claim own must not get the device claim shared holds")
        .isNotEqualTo(device("shared"));
    assertThat(List.of(firstOutcome, secondOutcome, thirdOutcome))
        .containsOnly(new Outcome.Bound("node-a"));
    assertThat(claim("shared").getStatus().getReservedFor())
        .extracting(ResourceClaimConsumerReference::getName)
        .containsExactlyInAnyOrder("first", "second");
  }

  private String device(String claim) {
    return claim(claim).getStatus().getAllocation().getDevices().getResults().get(0).getDevice();
  }

  /**
   * Waits until the thread in {@code ref} is blocked entering the scheduling lock in {@link
   * PodScheduling#schedule}: its attempt has resolved its claims.
   */
  private static void awaitBlockedOnTheSchedulingLock(AtomicReference<Thread> ref) {
    // a state, polled; bounded so that a thread that never gets there fails the test, not hangs it
    org.awaitility.Awaitility.await("the second pod's attempt blocked on the scheduling lock")
        .atMost(java.time.Duration.ofMinutes(1))
        .pollInterval(java.time.Duration.ofMillis(1))
        .until(
            () -> {
              Thread t = ref.get();
              if (t == null || t.getState() != Thread.State.BLOCKED) {
                return false;
              }
              StackTraceElement[] stack = t.getStackTrace();
              return stack.length > 0
                  && stack[0].getClassName().equals(PodScheduling.class.getName())
                  && stack[0].getMethodName().equals("schedule");
            });
  }

  private static void await(CountDownLatch latch) {
    try {
      latch.await();
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new IllegalStateException(e);
    }
  }
}
