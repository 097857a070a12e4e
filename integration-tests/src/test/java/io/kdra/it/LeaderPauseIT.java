package io.kdra.it;

import static io.kdra.it.nodes.SimulatedNode.l4s;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.resource.v1.ResourceClaim;
import io.fabric8.kubernetes.api.model.resource.v1.ResourceSlice;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.informers.ResourceEventHandler;
import io.fabric8.kubernetes.client.informers.SharedIndexInformer;
import io.kdra.it.chart.KdraChart;
import io.kdra.it.controlplane.ControlPlane;
import io.kdra.it.services.AllocationInvariants;
import io.kdra.it.services.Dra;
import io.kdra.it.services.KdraStack;
import io.kdra.it.services.LeaseReplicas;
import io.kdra.it.services.PodArrivals;
import io.kdra.it.services.Stack;
import io.kdra.it.support.ServiceProcess;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * Leaders frozen (SIGSTOP) past their lease, one test per service.
 *
 * <p>A claim-controller leader frozen past its lease while pods keep arriving: the standby takes
 * the Lease and schedules; then the frozen one runs on (SIGCONT) with its timers, informers and
 * writes in flight from before the pause. It must notice it lost the Lease without writing (its
 * fence is asked right before each write), step down in the process and stand by. Watched all
 * along, not only at the end: no device is in two claims' allocations at any point of the claims'
 * history, and no pod's node changes once set; at the end every pod is bound exactly once, each
 * claim reserved for its pod only, and the frozen replica never exited.
 *
 * <p>A slice-publisher leader frozen past its lease while drivers publish: the drivers dial two
 * publisher replicas through one address (a round-robin proxy per driver, as their Service), so
 * their streams are held by the frozen leader. The standby takes the Lease and, while the leader is
 * still frozen, publishes an inventory change of node-a: the drivers must notice that the frozen
 * one no longer answers and reach the standby. Then SIGCONT: the resumed replica holds the drivers'
 * snapshots from before the change and its own old plan; it must not write (its {@code
 * LeaseFence}), so node-a's pool never shrinks back, no pool is tainted or removed, and it steps
 * down in the process.
 *
 * <p>{@value #PODS} pods on {@value #DEVICES_PER_NODE} x 2 simulated L4s (a device for each), lease
 * 6 s, renew deadline 4 s, retry 1 s (the harness's) for both services; about a minute and a half
 * each on two cores.
 */
@ExtendWith(ControlPlane.class)
class LeaderPauseIT {

  static final int DEVICES_PER_NODE = 20;
  static final int PODS = 2 * DEVICES_PER_NODE;
  static final List<String> REPLICAS = List.of("claim-controller-1", "claim-controller-2");
  static final List<String> PUBLISHERS = List.of("slice-publisher-1", "slice-publisher-2");
  static final int PUBLISHER_PODS = 12;

  @RegisterExtension
  static final KdraStack STACK =
      KdraStack.nodes(l4s("node-a", DEVICES_PER_NODE), l4s("node-b", DEVICES_PER_NODE))
          .withControllers(2)
          .withPublishers(2);

  private static Stack stack;
  private static KubernetesClient client;
  private static LeaseReplicas controllers;
  private static LeaseReplicas publishers;

  /** What the watchers saw go wrong, at the moment it was seen. */
  private static final List<String> violations = new CopyOnWriteArrayList<>();

  private static final Map<String, String> nodeOfPod = new ConcurrentHashMap<>();
  private static final List<SharedIndexInformer<?>> informers = new ArrayList<>();

  @BeforeAll
  static void slicesPublishedAndLeaderElected() {
    stack = STACK.get();
    client = stack.client;
    controllers = new LeaseReplicas(stack, KdraChart.CONTROLLER_LEASE, REPLICAS);
    publishers = new LeaseReplicas(stack, KdraChart.PUBLISHER_LEASE, PUBLISHERS);
    await()
        .atMost(Duration.ofSeconds(60))
        .untilAsserted(
            () -> {
              assertThat(Dra.publishedDevices(client, "node-a")).isEqualTo(DEVICES_PER_NODE);
              assertThat(Dra.publishedDevices(client, "node-b")).isEqualTo(DEVICES_PER_NODE);
              assertThat(controllers.holder()).isIn(REPLICAS);
              assertThat(publishers.holder()).isIn(PUBLISHERS);
            });
    watchClaimsAndPods();
    client.resource(Dra.template(stack.namespace, "one-gpu", KdraChart.GPU_CLASS, 1)).create();
  }

  @BeforeEach
  void everyDeviceFree() {
    stack.deletePodsAndAwaitClaimsGone();
    nodeOfPod.clear();
  }

  @AfterAll
  static void stopWatching() {
    informers.forEach(SharedIndexInformer::close);
  }

  @Test
  void aFrozenLeaderResumesWithoutWritingAndNoDeviceIsEverHeldTwice() throws Exception {
    String ns = stack.namespace;
    // pods keep arriving across the pause, the takeover and the resume
    PodArrivals arrivals =
        PodArrivals.start(client, ns, "one-gpu", "arrive", PODS, Duration.ofMillis(250));

    await().atMost(Duration.ofSeconds(60)).until(() -> bound().size() >= 3);
    String frozen = controllers.awaitLiveLeaderAndStandby();
    String standby = controllers.other(frozen);
    int restartsBefore = stack.services.restarts(frozen);
    long paused = System.nanoTime();
    ServiceProcess frozenProcess = stack.services.process(frozen);
    frozenProcess.pause();
    int boundAtPause = bound().size();
    try {
      controllers.awaitTakenOverBy(standby, Duration.ofSeconds(60));
      long takeover = (System.nanoTime() - paused) / 1_000_000;
      // the new leader has written while the old one is frozen: its devices are now taken in the
      // API server but free in the frozen replica's informers
      await().atMost(Duration.ofSeconds(60)).until(() -> bound().size() >= boundAtPause + 3);
      System.out.printf(
          "[it] %s frozen with %d of %d pods bound; %s leads %d ms later; %d bound at SIGCONT"
              + " (%d ms frozen)%n",
          frozen,
          boundAtPause,
          PODS,
          standby,
          takeover,
          bound().size(),
          (System.nanoTime() - paused) / 1_000_000);
    } finally {
      frozenProcess.resume();
    }
    long resumed = System.nanoTime();
    assertThat(arrivals.awaitEnd(Duration.ofSeconds(60))).isEqualTo(PODS);

    // the resumed replica steps down in the process, without a restart
    await()
        .atMost(Duration.ofSeconds(60))
        .untilAsserted(
            () ->
                assertThat(Files.readString(stack.services.process(frozen).log))
                    .contains("lost the claim-controller Lease"));
    System.out.printf(
        "[it] %s stepped down %d ms after SIGCONT%n",
        frozen, (System.nanoTime() - resumed) / 1_000_000);

    await().atMost(Duration.ofSeconds(90)).until(() -> bound().size() == PODS);
    System.out.printf(
        "[it] all %d pods bound %d ms after SIGCONT%n",
        PODS, (System.nanoTime() - resumed) / 1_000_000);
    assertThat(stack.services.process(frozen).alive()).isTrue();
    assertThat(stack.services.restarts(frozen))
        .as("stepped down, not restarted")
        .isEqualTo(restartsBefore);

    // at the end: each pod's one claim holds one device on the pod's node, reserved for it only
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
    assertThat(claims).hasSize(PODS);
    assertThat(violations).isEmpty();
  }

  @Test
  void aFrozenPublisherLeaderResumesWithoutWritingAndNoPoolFlaps() throws Exception {
    String ns = stack.namespace;
    Path inventory = stack.nodes.nodeDir("node-a").resolve("inventory.yaml");
    PoolSizes nodeA = new PoolSizes(client, "node-a");
    try (AllocationInvariants invariants = new AllocationInvariants(client, ns, Stack.DRIVER);
        nodeA) {
      // pods keep arriving across the pause, the takeover and the resume
      PodArrivals arrivals =
          PodArrivals.start(client, ns, "one-gpu", "pub", PUBLISHER_PODS, Duration.ofMillis(1000));
      await().atMost(Duration.ofSeconds(60)).until(() -> bound().size() >= 2);

      String frozen = publishers.awaitLiveLeaderAndStandby();
      String standby = publishers.other(frozen);
      int restartsBefore = stack.services.restarts(frozen);
      ServiceProcess frozenProcess = stack.services.process(frozen);
      long paused = System.nanoTime();
      frozenProcess.pause();
      try {
        publishers.awaitTakenOverBy(standby, Duration.ofSeconds(60));
        long takeover = (System.nanoTime() - paused) / 1_000_000;
        // node-a gains a device while the old leader is frozen: only the standby can publish it,
        // and only once node-a's driver has left the frozen replica for it
        Files.writeString(inventory, l4s("node-a", DEVICES_PER_NODE + 1).inventory());
        await()
            .atMost(Duration.ofSeconds(60))
            .pollInterval(Duration.ofMillis(200))
            .until(() -> Dra.publishedDevices(client, "node-a") == DEVICES_PER_NODE + 1);
        nodeA.neverBelow(DEVICES_PER_NODE + 1);
        System.out.printf(
            "[it] %s frozen; %s leads %d ms later and publishes node-a's new device %d ms after"
                + " the freeze%n",
            frozen, standby, takeover, (System.nanoTime() - paused) / 1_000_000);
      } finally {
        frozenProcess.resume();
      }
      long resumed = System.nanoTime();

      // the resumed replica steps down in the process, without a restart or a write
      await()
          .atMost(Duration.ofSeconds(60))
          .untilAsserted(
              () ->
                  assertThat(Files.readString(stack.services.process(frozen).log))
                      .contains("lost the slice-publisher Lease"));
      System.out.printf(
          "[it] %s stepped down %d ms after SIGCONT%n",
          frozen, (System.nanoTime() - resumed) / 1_000_000);
      assertThat(arrivals.awaitEnd(Duration.ofSeconds(60))).isEqualTo(PUBLISHER_PODS);
      await().atMost(Duration.ofSeconds(90)).until(() -> bound().size() == PUBLISHER_PODS);
      assertThat(stack.services.process(frozen).alive()).isTrue();
      assertThat(stack.services.restarts(frozen))
          .as("stepped down, not restarted")
          .isEqualTo(restartsBefore);
      assertThat(publishers.holder()).isEqualTo(standby);

      // the drivers stay with the new leader: node-a's device goes again, published by it
      nodeA.neverBelow(0);
      Files.writeString(inventory, l4s("node-a", DEVICES_PER_NODE).inventory());
      await()
          .atMost(Duration.ofSeconds(60))
          .until(() -> Dra.publishedDevices(client, "node-a") == DEVICES_PER_NODE);
      assertThat(nodeA.violations)
          .as("node-a's pool shrank back while it had its device")
          .isEmpty();
      assertThat(invariants.deletedSlices).as("slices removed").isEmpty();
      assertThat(invariants.taintedSlices).as("pools tainted").isEmpty();
      assertThat(invariants.violations).isEmpty();
      assertThat(violations).isEmpty();
    } finally {
      Files.writeString(inventory, l4s("node-a", DEVICES_PER_NODE).inventory());
    }
  }

  /**
   * Watches the devices published for one node: once told a floor, every later state of the node's
   * slices must have at least that many (a replica writing an old plan would shrink it).
   */
  private static final class PoolSizes implements AutoCloseable {
    final List<String> violations = new CopyOnWriteArrayList<>();
    private final SharedIndexInformer<ResourceSlice> slices;
    private volatile int floor;

    PoolSizes(KubernetesClient client, String node) {
      slices = client.resources(ResourceSlice.class).inform();
      slices.addEventHandler(
          new ResourceEventHandler<>() {
            @Override
            public void onAdd(ResourceSlice s) {
              check();
            }

            @Override
            public void onUpdate(ResourceSlice old, ResourceSlice s) {
              check();
            }

            @Override
            public void onDelete(ResourceSlice s, boolean unknown) {
              check();
            }

            private void check() {
              long n =
                  slices.getStore().list().stream()
                      .filter(s -> Stack.DRIVER.equals(s.getSpec().getDriver()))
                      .filter(s -> node.equals(s.getSpec().getNodeName()))
                      .mapToLong(s -> s.getSpec().getDevices().size())
                      .sum();
              if (n < floor) {
                violations.add(node + " had " + n + " devices published, at least " + floor);
              }
            }
          });
    }

    void neverBelow(int devices) {
      floor = devices;
    }

    @Override
    public void close() {
      slices.close();
    }
  }

  /**
   * Informers over the test namespace's claims and pods: after each claim event, no device may be
   * in two claims' allocations (the informer's store is a prefix of the API server's history, so
   * this checks every state the claims passed through); a pod's node, once set, never changes.
   */
  private static void watchClaimsAndPods() {
    SharedIndexInformer<ResourceClaim> claims =
        client.resources(ResourceClaim.class).inNamespace(stack.namespace).inform();
    claims.addEventHandler(
        new ResourceEventHandler<>() {
          @Override
          public void onAdd(ResourceClaim c) {
            check(claims.getStore().list());
          }

          @Override
          public void onUpdate(ResourceClaim old, ResourceClaim c) {
            check(claims.getStore().list());
          }

          @Override
          public void onDelete(ResourceClaim c, boolean unknown) {}
        });
    SharedIndexInformer<Pod> pods = client.pods().inNamespace(stack.namespace).inform();
    pods.addEventHandler(
        new ResourceEventHandler<>() {
          @Override
          public void onAdd(Pod p) {
            bound(p);
          }

          @Override
          public void onUpdate(Pod old, Pod p) {
            bound(p);
          }

          @Override
          public void onDelete(Pod p, boolean unknown) {}
        });
    informers.add(claims);
    informers.add(pods);
  }

  private static void check(List<ResourceClaim> claims) {
    Map<String, String> holder = new HashMap<>();
    for (ResourceClaim c : claims) {
      for (String device : Dra.devices(c)) {
        String before = holder.put(device, c.getMetadata().getName());
        if (before != null) {
          violations.add(device + " in " + before + " and " + c.getMetadata().getName());
        }
      }
    }
  }

  private static void bound(Pod p) {
    String node = p.getSpec().getNodeName();
    if (node == null) {
      return;
    }
    String before = nodeOfPod.putIfAbsent(p.getMetadata().getUid(), node);
    if (before != null && !before.equals(node)) {
      violations.add(p.getMetadata().getName() + " bound to " + before + ", then " + node);
    }
  }

  private static List<Pod> bound() {
    return client.pods().inNamespace(stack.namespace).list().getItems().stream()
        .filter(p -> p.getSpec().getNodeName() != null)
        .toList();
  }
}
