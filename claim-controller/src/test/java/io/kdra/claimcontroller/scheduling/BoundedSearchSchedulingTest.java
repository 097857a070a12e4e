package io.kdra.claimcontroller.scheduling;

import static io.kdra.claimcontroller.domain.K.NS;
import static org.assertj.core.api.Assertions.assertThat;

import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.PodBuilder;
import io.fabric8.kubernetes.api.model.resource.v1.Device;
import io.fabric8.kubernetes.api.model.resource.v1.DeviceRequest;
import io.fabric8.kubernetes.api.model.resource.v1.ResourceClaim;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.server.mock.EnableKubernetesMockClient;
import io.kdra.claimcontroller.domain.K;
import io.kdra.claimcontroller.domain.SearchDeadline;
import io.kdra.claimcontroller.domain.TemplateMode;
import io.kdra.claimcontroller.k8s.ClaimWriter;
import io.kdra.claimcontroller.k8s.PodBinder;
import io.kdra.claimcontroller.k8s.PodWriter;
import io.kdra.core.alloc.AllocatorFeatures;
import io.kdra.core.alloc.AllocatorOptions;
import io.kdra.core.testing.AllocFixtures;
import io.kdra.events.EventRecorder;
import java.time.Clock;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * One tenant's valid but pathological claim does not stall the others: its search stops at the
 * attempt's deadline, the pod is unschedulable with that reason, and the pods queued after it are
 * placed. The clock is the test's: it moves 50 ms each time it is read, so the deadline passes
 * after a fixed number of questions however loaded the machine is.
 */
@EnableKubernetesMockClient(crud = true)
class BoundedSearchSchedulingTest {

  KubernetesClient client;
  ApiView view;
  PodScheduling scheduling;
  final AtomicLong nanos = new AtomicLong();

  final PodBinder binder =
      (pod, node) ->
          client
              .pods()
              .inNamespace(NS)
              .withName(pod.getMetadata().getName())
              .edit(p -> new PodBuilder(p).editSpec().withNodeName(node).endSpec().build());

  @BeforeEach
  void setUp() {
    view = new ApiView(client);
    client.nodes().resource(K.readyNode("node-a")).create();
    client.resource(AllocFixtures.deviceClass("gpu")).create();
    List<Device> gpus = new ArrayList<>();
    for (int i = 0; i < 16; i++) {
      gpus.add(AllocFixtures.device("gpu-" + i).build());
    }
    client
        .resource(AllocFixtures.slice("node-a-gpu", "node-a", gpus.toArray(new Device[0])).build())
        .create();
    scheduling =
        new PodScheduling(
            view,
            new RecentWrites(),
            new PodScheduling.Writers(
                new ClaimWriter(client, K.SCHEDULER, 3),
                new PodWriter(client, 3, Clock.systemUTC()),
                binder,
                new EventRecorder(
                    client,
                    K.SCHEDULER,
                    Clock
                        .systemUTC())), // no step budget to speak of: only the deadline can end the
            // pathological search
            new DraCorePodAllocator(
                AllocatorOptions.defaults(AllocatorFeatures.defaults(), () -> "share")
                    .withStepBudget(Long.MAX_VALUE)),
            PodScheduling.Settings.of(TemplateMode.OWN, ClaimTracer.NOOP)
                .fencedBy(() -> true)
                .searchLimitedBy(
                    new SearchDeadline(Duration.ofMillis(100), Duration.ofSeconds(1)),
                    () -> nanos.addAndGet(Duration.ofMillis(50).toNanos())));
  }

  /**
   * Valid, and infeasible on every node, found out only at its last request: six single GPUs, then
   * seventeen (the node has sixteen), so the search tries every arrangement of the six first.
   */
  static ResourceClaim pathological() {
    List<DeviceRequest> requests = new ArrayList<>();
    for (int i = 0; i < 6; i++) {
      requests.add(AllocFixtures.request("r" + i, "gpu").build());
    }
    requests.add(AllocFixtures.request("many", "gpu").withCount(17).build());
    ResourceClaim c = AllocFixtures.claim("patho", requests.toArray(new DeviceRequest[0])).build();
    c.getMetadata().setNamespace(NS);
    return c;
  }

  @Test
  @Timeout(
      value = 60,
      threadMode =
          Timeout.ThreadMode
              .SEPARATE_THREAD) // a failure guard: without a deadline the pathological search runs
  // for hours
  void podsQueuedAfterAPathologicalOneArePlacedAndItWaitsWithTheReason() {
    client.resource(pathological()).create();
    client.resource(K.template("tpl")).create();
    Pod patho = client.resource(K.podWithClaim("patho", "gpu", "patho")).create();
    for (String name : List.of("p1", "p2")) {
      assertThat(
              scheduling.schedule(client.resource(K.podWithTemplate(name, "gpu", "tpl")).create()))
          .isInstanceOf(Outcome.Waiting.class);
    }

    Outcome first = scheduling.schedule(patho);
    Outcome second = scheduling.schedule(get("p1"));
    Outcome third = scheduling.schedule(get("p2"));

    assertThat(first)
        .isInstanceOfSatisfying(
            Outcome.Unschedulable.class,
            u -> {
              assertThat(u.timedOut()).isTrue();
              assertThat(u.message()).startsWith("claim patho: search exceeded its deadline");
              assertThat(u.perClaim()).containsOnlyKeys("patho");
            });
    assertThat(second).isEqualTo(new Outcome.Bound("node-a"));
    assertThat(third).isEqualTo(new Outcome.Bound("node-a"));
    assertThat(get("patho").getSpec().getNodeName()).isNull();
  }

  @Test
  @Timeout(value = 60, threadMode = Timeout.ThreadMode.SEPARATE_THREAD)
  void eachAttemptOfTheSamePodMaySearchLonger() {
    client.resource(pathological()).create();
    Pod patho = client.resource(K.podWithClaim("patho", "gpu", "patho")).create();

    long before = nanos.get();
    assertThat(scheduling.schedule(patho, 1)).isInstanceOf(Outcome.Unschedulable.class);
    long firstTook = nanos.get() - before;
    before = nanos.get();
    assertThat(scheduling.schedule(patho, 3)).isInstanceOf(Outcome.Unschedulable.class);
    long thirdTook = nanos.get() - before;

    // limits 100 ms and 400 ms, on a clock that moves 50 ms a reading: the start's reading, then
    // the questions up to the first that finds the limit passed
    assertThat(Duration.ofNanos(firstTook)).isEqualTo(Duration.ofMillis(150));
    assertThat(Duration.ofNanos(thirdTook)).isEqualTo(Duration.ofMillis(450));
  }

  @Test
  @Timeout(value = 60, threadMode = Timeout.ThreadMode.SEPARATE_THREAD)
  void aSearchOffTheLockRunsOutWithTheSameReasonAndWritesNothing() {
    client.resource(pathological()).create();
    client.resource(K.template("tpl")).create();
    Pod patho = client.resource(K.podWithClaim("patho", "gpu", "patho")).create();
    assertThat(scheduling.schedule(client.resource(K.podWithTemplate("p1", "gpu", "tpl")).create()))
        .isInstanceOf(Outcome.Waiting.class);

    // its second attempt, after one that ran out: searched off the lock by the detached allocator
    Outcome second = scheduling.schedule(patho, 2, true);

    assertThat(second)
        .isInstanceOfSatisfying(
            Outcome.Unschedulable.class,
            u -> {
              assertThat(u.timedOut()).isTrue();
              assertThat(u.message()).startsWith("claim patho: search exceeded its deadline");
            });
    assertThat(get("patho").getSpec().getNodeName()).isNull();
    assertThat(scheduling.schedule(get("p1"))).isEqualTo(new Outcome.Bound("node-a"));
  }

  Pod get(String name) {
    return client.pods().inNamespace(NS).withName(name).get();
  }
}
