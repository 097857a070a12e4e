package io.kdra.it;

import static io.kdra.it.nodes.SimulatedNode.l4s;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.resource.v1.ResourceClaim;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.kdra.it.chart.KdraChart;
import io.kdra.it.controlplane.ControlPlane;
import io.kdra.it.services.AllocationInvariants;
import io.kdra.it.services.Dra;
import io.kdra.it.services.KdraStack;
import io.kdra.it.services.LeaseReplicas;
import io.kdra.it.services.PodArrivals;
import io.kdra.it.services.Stack;
import io.kdra.it.support.PausableProxy;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.time.Duration;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * Partitions between the claim-controller and the API server, while the rest of the control plane
 * goes on: each of two replicas reaches the API server through a {@link PausableProxy} of its own,
 * paused (silent: requests and watches hang, and what was sent is delivered once it heals).
 *
 * <ul>
 *   <li>The leader cut off past its lease while pods arrive: the standby takes over and schedules;
 *       the cut-off one steps down in the process. Its requests held in the network land when the
 *       partition heals, after another leader wrote: no device may ever be in two claims, no pod
 *       changes node, and every pod is bound once.
 *   <li>Both replicas cut off past their lease: nothing schedules; once healed, a new pod is bound
 *       within {@link #RESUMED}, and no replica was restarted.
 * </ul>
 *
 * <p>Lease 6 s, renew deadline 4 s, retry 1 s (the harness's).
 */
@ExtendWith(ControlPlane.class)
class ControllerPartitionIT {

  static final int DEVICES_PER_NODE = 12;
  static final int PODS = 2 * DEVICES_PER_NODE;
  static final List<String> REPLICAS = List.of("claim-controller-1", "claim-controller-2");

  /** Issue 40's bound: scheduling within 30 s of the partition's end. */
  static final Duration RESUMED = Duration.ofSeconds(30);

  @RegisterExtension
  static final KdraStack STACK =
      KdraStack.nodes(l4s("node-a", DEVICES_PER_NODE), l4s("node-b", DEVICES_PER_NODE))
          .withControllers(2)
          .withControllerApiLinks();

  private static Stack stack;
  private static KubernetesClient client;
  private static LeaseReplicas controllers;

  @BeforeAll
  static void publishedAndLed() {
    stack = STACK.get();
    client = stack.client;
    controllers = new LeaseReplicas(stack, KdraChart.CONTROLLER_LEASE, REPLICAS);
    await()
        .atMost(Duration.ofSeconds(60))
        .untilAsserted(
            () -> {
              assertThat(Dra.publishedDevices(client, "node-a")).isEqualTo(DEVICES_PER_NODE);
              assertThat(Dra.publishedDevices(client, "node-b")).isEqualTo(DEVICES_PER_NODE);
              assertThat(controllers.holder()).isIn(REPLICAS);
            });
    client.resource(Dra.template(stack.namespace, "one-gpu", KdraChart.GPU_CLASS, 1)).create();
  }

  @BeforeEach
  void everyDeviceFreeAndEveryLinkOpen() {
    REPLICAS.forEach(r -> stack.services.apiLink(r).heal());
    stack.deletePodsAndAwaitClaimsGone();
  }

  @Test
  void theLeaderCutOffPastItsLeaseStepsDownAndItsHeldWritesAllocateNoDeviceTwice()
      throws Exception {
    String ns = stack.namespace;
    try (AllocationInvariants invariants = new AllocationInvariants(client, ns, Stack.DRIVER)) {
      // pods keep arriving across the partition, the takeover and the healing: about 17 s of
      // arrivals, before, during and after a partition of about 11 s
      PodArrivals arrivals =
          PodArrivals.start(client, ns, "one-gpu", "part", PODS, Duration.ofMillis(700));
      await().atMost(Duration.ofSeconds(60)).until(() -> bound().size() >= 2);

      String cut = controllers.awaitLiveLeaderAndStandby();
      String standby = controllers.other(cut);
      Map<String, Integer> stepDowns = stepDowns();
      PausableProxy link = stack.services.apiLink(cut);
      long partitioned = System.nanoTime();
      link.pause();
      int boundAtPartition = bound().size();
      try {
        controllers.awaitTakenOverBy(standby, Duration.ofSeconds(60));
        long takeover = (System.nanoTime() - partitioned) / 1_000_000;
        // the standby schedules while the cut-off one still believes in what it sent
        await().atMost(Duration.ofSeconds(60)).until(() -> bound().size() >= boundAtPartition + 3);
        // and the cut-off one has noticed by itself (its renewals failed past the deadline)
        await()
            .atMost(Duration.ofSeconds(60))
            .until(() -> stepDowns().get(cut) > stepDowns.get(cut));
        System.out.printf(
            "[it] %s cut off with %d pods bound; %s leads %d ms later; %d bound when healed"
                + " (%d ms cut off)%n",
            cut,
            boundAtPartition,
            standby,
            takeover,
            bound().size(),
            (System.nanoTime() - partitioned) / 1_000_000);
      } finally {
        link.heal();
      }
      long healed = System.nanoTime();
      assertThat(arrivals.awaitEnd(Duration.ofSeconds(60))).isEqualTo(PODS);
      await().atMost(Duration.ofSeconds(90)).until(() -> bound().size() == PODS);
      System.out.printf(
          "[it] all %d pods bound %d ms after healing%n",
          PODS, (System.nanoTime() - healed) / 1_000_000);

      assertNoRestarts();
      List<ResourceClaim> claims =
          client.resources(ResourceClaim.class).inNamespace(ns).list().getItems();
      assertThat(claims.stream().flatMap(c -> Dra.devices(c).stream()).toList())
          .doesNotHaveDuplicates()
          .hasSize(PODS);
      for (Pod pod : bound()) {
        ResourceClaim claim = Dra.claimOf(client, pod, "gpu");
        assertThat(Dra.devices(claim))
            .singleElement()
            .asString()
            .startsWith(pod.getSpec().getNodeName() + "/");
        assertThat(claim.getStatus().getReservedFor())
            .extracting(r -> r.getUid())
            .containsExactly(pod.getMetadata().getUid());
      }
      assertThat(invariants.violations).isEmpty();
    }
  }

  @Test
  void everyReplicaCutOffPastItsLeaseSchedulesWithinThirtySecondsOfHealing() {
    String ns = stack.namespace;
    client.resource(Dra.podWithTemplate(ns, "before", "one-gpu")).create();
    await().atMost(Duration.ofSeconds(60)).until(() -> nodeOf("before") != null);
    controllers.awaitLiveLeaderAndStandby();
    Map<String, Integer> stepDowns = stepDowns();
    String leader = controllers.holder();

    long partitioned = System.nanoTime();
    REPLICAS.forEach(r -> stack.services.apiLink(r).pause());
    try {
      // the leader gives its Lease up by itself, in the process
      await()
          .atMost(Duration.ofSeconds(60))
          .pollInterval(Duration.ofMillis(250))
          .until(() -> stepDowns().get(leader) > stepDowns.get(leader));
      // a pod that arrives meanwhile waits for the healing
      client.resource(Dra.podWithTemplate(ns, "during", "one-gpu")).create();
    } finally {
      REPLICAS.forEach(r -> stack.services.apiLink(r).heal());
    }
    long healed = System.nanoTime();
    System.out.printf(
        "[it] both replicas cut off %d ms (%s stepped down)%n",
        (healed - partitioned) / 1_000_000, leader);

    client.resource(Dra.podWithTemplate(ns, "after", "one-gpu")).create();
    await()
        .atMost(RESUMED)
        .pollInterval(Duration.ofMillis(200))
        .until(() -> nodeOf("during") != null && nodeOf("after") != null);
    System.out.printf(
        "[it] scheduling resumed %d ms after healing%n", (System.nanoTime() - healed) / 1_000_000);
    assertThat(controllers.holder()).isIn(REPLICAS);
    assertNoRestarts();
  }

  private static void assertNoRestarts() {
    for (String r : REPLICAS) {
      assertThat(stack.services.process(r).alive()).as(r + " runs").isTrue();
      assertThat(stack.services.restarts(r)).as(r + " restarts").isZero();
    }
  }

  /** How often each replica's log says it lost the Lease. */
  private static Map<String, Integer> stepDowns() {
    Map<String, Integer> n = new HashMap<>();
    for (String r : REPLICAS) {
      try {
        String log = Files.readString(stack.services.process(r).log);
        String line = "lost the claim-controller Lease";
        int count = 0;
        for (int i = log.indexOf(line); i >= 0; i = log.indexOf(line, i + 1)) {
          count++;
        }
        n.put(r, count);
      } catch (IOException e) {
        throw new UncheckedIOException(e);
      }
    }
    return n;
  }

  private static String nodeOf(String pod) {
    Pod p = client.pods().inNamespace(stack.namespace).withName(pod).get();
    return p == null ? null : p.getSpec().getNodeName();
  }

  private static List<Pod> bound() {
    return client.pods().inNamespace(stack.namespace).list().getItems().stream()
        .filter(p -> p.getSpec().getNodeName() != null)
        .toList();
  }
}
