package io.kdra.it;

import static io.kdra.it.nodes.SimulatedNode.l4s;
import static io.kdra.it.nodes.SimulatedNode.oneA100;
import static io.kdra.it.nodes.SimulatedNode.twoL4s;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.resource.v1.ResourceClaim;
import io.fabric8.kubernetes.api.model.resource.v1.ResourceSlice;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientException;
import io.kdra.it.controlplane.ControlPlane;
import io.kdra.it.controlplane.EtcdLink;
import io.kdra.it.services.Dra;
import io.kdra.it.services.KdraStack;
import io.kdra.it.services.Stack;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.TreeMap;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Order;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * Random operations against the whole stack for a bounded time, then invariants once it settles.
 * Operations: pods from templates (the soak's, or a ComputeClass's) and pods sharing a claim
 * created and deleted in random order with reused names (gracefully or at once, one at a time or in
 * bursts), bursts of 3 or 4 pods sharing a new claim created at once from as many threads, claims
 * and templates created and deleted before or after their pods (with no config, a valid or an
 * invalid one of our driver, through the publishers' admission webhook: {@link SoakWebhook}), pods
 * whose claims share GPUs by time-slicing or MPS, take dynamic MIG partitions or take devices with
 * adminAccess ({@link SoakSharing}), ComputeClasses created, changed and deleted ({@link
 * SoakBridge}), SIGKILL and restart of any service (two claim-controller replicas, two
 * slice-publisher replicas, the computeclass-bridge, a driver often mid-prepare, since prepares
 * take a while here), a node's slices deleted, a node deleted and registered again, and the faults
 * of {@link SoakFaults}: the kube-apiserver restarted or away, etcd restarted or slow, a leader
 * frozen past its lease, partitions between a claim-controller and the API server and between a
 * driver and the publishers, a driver stopped by SIGTERM, a driver's checkpoint truncated or
 * garbage, certificate and CA rotation, the admission webhook down, bursts of ComputeClass churn, a
 * hung nvidia-smi (node-b's driver runs the nvidia backend on {@link SoakNvidiaSmi}), a full disk
 * under node-c's CDI specs and checkpoint ({@link SoakDisk}), a node's kubelet restarted with
 * prepared claims. A service that exits on its own is started again, as its Deployment would.
 *
 * <p>Where the Workload API is served (1.37 on), gangs too: a PodGroup of {@link #GANG_SIZE} pods
 * with a gang policy created with its pods and deleted with them.
 *
 * <p>Checked after every operation: no device is in two claims' allocations, no pod's node changed;
 * after each control-plane fault, every Lease is held and renewed again within 30 s of the return.
 * Checked once the faults stopped and it settled, each within {@link #SETTLE}: the settled
 * invariants of {@link SoakInvariants}. Finally everything is deleted, the sharing nodes' simulated
 * GPUs must be as their empty checkpoints imply, and every whole GPU must be free again: one pod
 * per whole GPU of the cluster is placed.
 *
 * <p>{@code -Dsoak.duration=PT30M} for the long form (default: {@link #SHORT}; longer than {@link
 * #LONG}, outages of two minutes too), {@code -Dsoak.seed=N} replays a run: the seed is printed at
 * the start, and the last line counts operations, invariant checks and faults by kind.
 */
@ExtendWith(ControlPlane.class)
class ChaosSoakIT {

  static final Duration SHORT = Duration.ofSeconds(60);
  static final Duration SETTLE = Duration.ofSeconds(120);

  /** The whole GPUs (neither shared nor MIG-enabled): the devices of the soak's own claims. */
  static final int DEVICES = 5;

  /** The nodes of the whole GPUs. */
  static final List<String> WHOLE_GPU_NODES = List.of("node-a", "node-b", "node-c");

  /** Every node: those of the whole GPUs and {@link SoakSharing}'s two. */
  static final List<String> NODES =
      List.of("node-a", "node-b", "node-c", SoakSharing.TIME_SLICED_NODE, SoakSharing.MPS_NODE);

  static final List<String> TEMPLATES = List.of("tpl-0", "tpl-1");
  static final List<String> SHARED = List.of("shared-0", "shared-1");

  /**
   * The claims of the bursts of pods sharing one ({@link Soak#toggleSharedBurst}): each created new
   * with its pods, all at once.
   */
  static final List<String> BURSTS = List.of("burst-0", "burst-1");

  static final int POD_NAMES = 8;
  static final List<String> GANGS = List.of("gang-0", "gang-1");
  static final int GANG_SIZE = 2;

  /** Each node's devices, as its simulated inventory has them. */
  static final Map<String, Integer> DEVICES_OF =
      Map.of(
          "node-a",
          2,
          "node-b",
          1,
          "node-c",
          2,
          SoakSharing.TIME_SLICED_NODE,
          SoakSharing.DEVICES_OF.get(SoakSharing.TIME_SLICED_NODE),
          SoakSharing.MPS_NODE,
          SoakSharing.DEVICES_OF.get(SoakSharing.MPS_NODE));

  /** Every published device, the sharing nodes' included. */
  static final int ALL_DEVICES = DEVICES_OF.values().stream().mapToInt(Integer::intValue).sum();

  /** The publisher replicas, each node's driver dialling both through a link of its own. */
  static final List<String> PUBLISHERS = List.of("slice-publisher-1", "slice-publisher-2");

  static final List<String> CONTROLLERS = List.of("claim-controller-1", "claim-controller-2");

  /** The long form: longer outages too. */
  static final Duration LONG = Duration.ofMinutes(5);

  /** The inventory gRPC's certificates, which the soak rotates. */
  static final SoakTls TLS = SoakTls.create();

  /** node-b's nvidia-smi, which the soak makes hang; its driver runs the nvidia backend. */
  static final SoakNvidiaSmi NVIDIA_SMI = new SoakNvidiaSmi("node-b").create();

  /** node-c's driver runs on a small disk of its own, which the soak fills (where root). */
  static final SoakDisk DISK = new SoakDisk();

  /** kube-apiserver reaching etcd through a proxy the soak delays; made before the stack starts. */
  @RegisterExtension
  @Order(1)
  static final EtcdLink ETCD = new EtcdLink();

  @RegisterExtension
  @Order(2)
  static final KdraStack STACK =
      KdraStack.nodes(
              twoL4s("node-a"),
              oneA100("node-b").withDriverProperties(NVIDIA_SMI.driverProperties()),
              DISK.onDisk(l4s("node-c", 2)),
              SoakSharing.timeSlicedNode(),
              SoakSharing.mpsNode())
          .withControllers(2)
          .withPublishers(2)
          .withControllerApiLinks()
          .withPublisherWebhook()
          .withBridge()
          .withProperties(properties());

  private static Map<String, String> properties() {
    Map<String, String> p = new HashMap<>(TLS.properties());
    // prepares take a while, so that a driver killed at random is often killed mid-prepare
    p.put("kdra.device-driver.test-only.prepare-delay", "300ms");
    // claims that no kubelet unprepares (their pod went while the driver was down) are the
    // driver's own clean-up's, sooner than the chart's 2 and 5 minutes
    p.put("kdra.device-driver.stale-claims.check-interval", "5s");
    p.put("kdra.device-driver.stale-claims.grace", "10s");
    // partitions shorter and longer than each of these
    p.put(
        "kdra.slice-publisher.stale.disconnected-taint-after",
        SoakFaults.DISCONNECTED_TAINT_AFTER.toSeconds() + "s");
    p.put("kdra.slice-publisher.stale.taint-after", SoakFaults.TAINT_AFTER.toSeconds() + "s");
    p.put("kdra.slice-publisher.stale.remove-after", SoakFaults.REMOVE_AFTER.toSeconds() + "s");
    return p;
  }

  private static Stack stack;
  private static KubernetesClient client;
  private static ControlPlane.Running controlPlane;
  private static SoakWebhook webhook;
  private static SoakBridge bridge;

  private final Map<String, Integer> operations = new TreeMap<>();

  @BeforeAll
  static void slicesPublished(ControlPlane.Running running) {
    controlPlane = running;
    stack = STACK.get();
    client = stack.client;
    await()
        .atMost(SETTLE)
        .untilAsserted(
            () ->
                assertThat(NODES.stream().mapToLong(n -> Dra.publishedDevices(client, n)).sum())
                    .isEqualTo(ALL_DEVICES));
  }

  /** While the stack still runs: the bridge's finalizer lets the ComputeClasses go. */
  @AfterAll
  static void removeWebhookAndComputeClasses() {
    if (bridge != null) {
      bridge.deleteAll();
      await("the soak's ComputeClasses gone").atMost(SETTLE).until(bridge::allGone);
    }
    if (webhook != null) {
      webhook.unregister();
    }
  }

  /** After the stack: the driver, still inside, keeps the mount until the stack ends it. */
  @AfterAll
  static void unmount() {
    DISK.close();
  }

  @Test
  void randomOperationsAndFaultsKeepEveryInvariant() {
    long seed = Long.getLong("soak.seed", System.nanoTime());
    Duration duration = Duration.parse(System.getProperty("soak.duration", SHORT.toString()));
    System.out.printf(
        "[soak] seed %d, %s of operations (replay: -Dsoak.seed=%d)%n", seed, duration, seed);
    Random random = new Random(seed);
    Map<String, Integer> faultCounts = new TreeMap<>();
    Map<String, Integer> writes = new TreeMap<>();
    SoakSharing sharing = new SoakSharing(stack, random);
    sharing.setUp();
    webhook = new SoakWebhook(client, stack.services.webhook(), random, writes);
    webhook.register();
    bridge = new SoakBridge(client, stack.namespace, random);
    SoakFaults faults =
        new SoakFaults(
            stack,
            controlPlane,
            random,
            duration.compareTo(LONG) > 0,
            faultCounts,
            NODES,
            TLS,
            ETCD.proxy(),
            webhook,
            bridge,
            NVIDIA_SMI,
            DISK);
    Soak soak = new Soak(stack, random, faults, faultCounts, webhook, bridge, sharing);
    SoakInvariants invariants =
        new SoakInvariants(stack, NODES, WHOLE_GPU_NODES, DEVICES_OF, bridge, sharing);
    long end = System.nanoTime() + duration.toNanos();
    long started = System.nanoTime();
    while (System.nanoTime() < end) {
      String op = soak.step();
      operations.merge(op, 1, Integer::sum);
      faults.tick();
      soak.superviseServices();
      invariants.afterEachOperation();
    }
    faults.endAll();
    long stopped = System.nanoTime();
    System.out.printf(
        "[soak] %d operations in %d s: %s%n",
        operations.values().stream().mapToInt(Integer::intValue).sum(),
        (stopped - started) / 1_000_000_000,
        operations);

    soak.superviseServices();
    await("settled")
        .atMost(SETTLE)
        .untilAsserted(
            () -> {
              soak.superviseServices();
              invariants.settled();
            });
    System.out.printf(
        "[soak] settled %d ms after the faults stopped%n",
        (System.nanoTime() - stopped) / 1_000_000);

    // everything deleted: all devices free again, one pod per device placed
    client.pods().inNamespace(stack.namespace).delete();
    if (GangMembers.served()) {
      GangMembers.podGroups(client, stack.namespace).delete();
    }
    java.util.stream.Stream.concat(SHARED.stream(), BURSTS.stream())
        .forEach(
            c ->
                client
                    .resources(ResourceClaim.class)
                    .inNamespace(stack.namespace)
                    .withName(c)
                    .delete());
    await("pods and claims gone")
        .atMost(SETTLE)
        .untilAsserted(
            () -> {
              assertThat(client.pods().inNamespace(stack.namespace).list().getItems()).isEmpty();
              assertThat(invariants.claims()).isEmpty();
              invariants.assertNoPreparedStateWithoutItsClaim();
              // every MIG instance destroyed, every MPS daemon stopped, every mode back
              invariants.assertSharedGpusMatchCheckpoints();
            });
    client
        .resource(Dra.template(stack.namespace, "final", SoakSharing.WHOLE_CLASS, 1))
        .createOr(t -> t.update());
    await("slices republished")
        .atMost(SETTLE)
        .untilAsserted(
            () ->
                assertThat(NODES.stream().mapToLong(n -> Dra.publishedDevices(client, n)).sum())
                    .isEqualTo(ALL_DEVICES));
    List<Pod> last = new ArrayList<>();
    for (int i = 0; i < DEVICES; i++) {
      last.add(
          client.resource(Dra.podWithTemplate(stack.namespace, "final-" + i, "final")).create());
    }
    await("every device placed")
        .atMost(SETTLE)
        .untilAsserted(
            () -> {
              for (Pod p : last) {
                assertThat(Dra.get(client, p).getSpec().getNodeName())
                    .as(p.getMetadata().getName())
                    .isNotNull();
              }
              invariants.assertNoDeviceInTwoClaims();
            });
    // nothing left of deleted ComputeClasses: no template, no DeviceClass
    bridge.deleteAll();
    await("the soak's ComputeClasses gone, and all they made")
        .atMost(SETTLE)
        .untilAsserted(
            () -> {
              assertThat(bridge.allGone()).as("ComputeClasses gone").isTrue();
              invariants.assertBridgeConverged();
            });
    System.out.printf("[soak] claim and template writes through the webhook: %s%n", writes);
    System.out.printf(
        "[soak] seed %d: invariants held; %d operations, %d invariant checks, %d s in all;"
            + " %d faults: %s; replicas started again after exiting by themselves: %d%n",
        seed,
        operations.values().stream().mapToInt(Integer::intValue).sum(),
        invariants.checks(),
        (System.nanoTime() - started) / 1_000_000_000,
        faultCounts.values().stream().mapToInt(Integer::intValue).sum(),
        faultCounts,
        java.util.stream.Stream.concat(CONTROLLERS.stream(), PUBLISHERS.stream())
            .mapToInt(stack.services::restarts)
            .sum());
  }

  /** The operations and faults, drawn from one seeded random stream. */
  static final class Soak {
    private final Stack stack;
    private final KubernetesClient client;
    private final Random random;
    private final String ns;
    private final SoakFaults more;
    private final Map<String, Integer> faults;
    private final SoakWebhook webhook;
    private final SoakBridge bridge;
    private final SoakSharing sharing;

    Soak(
        Stack stack,
        Random random,
        SoakFaults more,
        Map<String, Integer> faults,
        SoakWebhook webhook,
        SoakBridge bridge,
        SoakSharing sharing) {
      this.sharing = sharing;
      this.webhook = webhook;
      this.bridge = bridge;
      this.stack = stack;
      this.client = stack.client;
      this.random = random;
      this.ns = stack.namespace;
      this.more = more;
      this.faults = faults;
    }

    /**
     * {@code -Dsoak.shared-bursts-first=K}: the first K operations are bursts of pods sharing a
     * claim ({@link #toggleSharedBurst}), each creating one where a burst's claim is absent.
     */
    private int sharedBurstsFirst = Integer.getInteger("soak.shared-bursts-first", 0);

    /** Runs one random operation; returns its name. */
    String step() {
      if (sharedBurstsFirst > 0) {
        sharedBurstsFirst--;
        return toggleSharedBurst(true);
      }
      int roll = random.nextInt(100);
      try {
        if (roll < 17) {
          return createPod(false);
        } else if (roll < 27) {
          return sharing.createPod();
        } else if (roll < 34) {
          return createPod(true);
        } else if (roll < 39 && GangMembers.served()) {
          return toggleGang();
        } else if (roll < 56) {
          return deletePod();
        } else if (roll < 60) {
          return toggleSharedBurst(false);
        } else if (roll < 63) {
          return burst();
        } else if (roll < 70) {
          return toggleClaim();
        } else if (roll < 77) {
          return toggleTemplate();
        } else if (roll < 81) {
          return bridge.churn();
        } else {
          return fault();
        }
      } catch (KubernetesClientException e) {
        // a race between the soak's own operations (409 on a name being deleted, 404): part of
        // the chaos, not a failure of the system under test
        return "raced(" + e.getCode() + ")";
      }
    }

    /**
     * A fault: one of the six kinds of process kills and object deletions, or one of {@link
     * SoakFaults}' kinds when none of those is in place.
     */
    private String fault() {
      int kind = random.nextInt(6 + SoakFaults.KINDS);
      if (kind >= 6 && !more.inPlace()) {
        return more.inject();
      }
      return switch (kind % 6) {
        case 0 -> fault(pick(CONTROLLERS), "kill -9");
        case 1 -> fault(pick(PUBLISHERS), "kill -9");
        case 2 -> fault("device-driver-" + pick(NODES), "kill -9");
        case 3 -> fault("computeclass-bridge", "kill -9");
        case 4 -> deleteSlices(pick(NODES));
        default -> recreateNode(pick(NODES));
      };
    }

    private String createPod(boolean shared) {
      String name = "p-" + random.nextInt(POD_NAMES);
      if (client.pods().inNamespace(ns).withName(name).get() != null) {
        return "create-pod(exists)";
      }
      // one template pod in four from a ComputeClass's template (which may not exist now)
      String template = random.nextInt(4) == 0 ? bridge.template() : pick(TEMPLATES);
      Pod pod =
          shared
              ? Dra.podWithClaim(ns, name, pick(SHARED))
              : Dra.podWithTemplate(ns, name, template);
      client.resource(pod).create();
      return shared ? "create-shared-pod" : "create-template-pod";
    }

    /**
     * Creates gang {@code gang-N}, its PodGroup and its {@link #GANG_SIZE} pods (claims from a
     * template, which may be missing: the gang then waits whole), or deletes them all.
     */
    private String toggleGang() {
      String name = pick(GANGS);
      var group = GangMembers.podGroups(client, ns).withName(name);
      if (group.get() == null) {
        client.resource(GangMembers.podGroup(ns, name, GANG_SIZE)).create();
        String template = pick(TEMPLATES);
        for (int i = 0; i < GANG_SIZE; i++) {
          client.resource(GangMembers.member(ns, name, i, template)).create();
        }
        return "create-gang";
      }
      GangMembers.of(client.pods().inNamespace(ns).list().getItems(), name)
          .forEach(p -> client.resource(p).delete());
      group.delete();
      return "delete-gang";
    }

    private String deletePod() {
      // a gang's pods go only with their gang (toggleGang): its invariant is about the scheduler
      List<Pod> pods =
          client.pods().inNamespace(ns).list().getItems().stream()
              .filter(p -> GangMembers.groupOf(p) == null)
              // the full disk's probe goes with its fault
              .filter(p -> !SoakDisk.PROBE.equals(p.getMetadata().getName()))
              .toList();
      if (pods.isEmpty()) {
        return "delete-pod(none)";
      }
      Pod victim = pods.get(random.nextInt(pods.size()));
      if (random.nextBoolean()) {
        client.resource(victim).withGracePeriod(0).delete();
        return "delete-pod-now";
      }
      client.resource(victim).delete();
      return "delete-pod-gracefully";
    }

    private String burst() {
      for (int i = 0; i < 3; i++) {
        createPod(false);
      }
      return "burst-of-3";
    }

    /**
     * A burst of pods sharing a claim: a new claim of one whole GPU and 3 or 4 pods referencing it,
     * created from as many threads at once, so that the pods are scheduled while the claim is being
     * allocated for one of them. Or, where the burst's claim exists, its pods and it deleted; with
     * {@code creating}, a burst whose claim is absent is created where there is one.
     */
    private String toggleSharedBurst(boolean creating) {
      String drawn = pick(BURSTS);
      String name =
          creating
              ? BURSTS.stream()
                  .filter(
                      b ->
                          client.resources(ResourceClaim.class).inNamespace(ns).withName(b).get()
                              == null)
                  .findFirst()
                  .orElse(drawn)
              : drawn;
      var claim = client.resources(ResourceClaim.class).inNamespace(ns).withName(name);
      List<Pod> pods =
          client.pods().inNamespace(ns).list().getItems().stream()
              .filter(p -> p.getMetadata().getName().startsWith(name + "-"))
              .toList();
      if (claim.get() != null) {
        pods.forEach(p -> client.resource(p).delete());
        claim.delete();
        return "delete-shared-burst";
      }
      if (!pods.isEmpty()) {
        return "shared-burst(pods still there)";
      }
      client.resource(Dra.claim(ns, name, SoakSharing.WHOLE_CLASS, 1)).create();
      int size = 3 + random.nextInt(2);
      ExecutorService threads = Executors.newFixedThreadPool(size);
      CountDownLatch go = new CountDownLatch(1);
      try {
        List<Future<?>> created = new ArrayList<>();
        for (int i = 0; i < size; i++) {
          Pod pod = Dra.podWithClaim(ns, name + "-" + i, name);
          created.add(
              threads.submit(
                  () -> {
                    go.await();
                    return client.resource(pod).create();
                  }));
        }
        go.countDown();
        for (Future<?> f : created) {
          f.get(1, TimeUnit.MINUTES);
        }
      } catch (ExecutionException e) {
        if (e.getCause() instanceof KubernetesClientException k) {
          throw k;
        }
        throw new IllegalStateException(e.getCause());
      } catch (InterruptedException | TimeoutException e) {
        throw new IllegalStateException(e);
      } finally {
        threads.shutdownNow();
      }
      return "shared-burst-of-" + size;
    }

    private String toggleClaim() {
      String name = pick(SHARED);
      var claim = client.resources(ResourceClaim.class).inNamespace(ns).withName(name);
      if (claim.get() == null) {
        return webhook.create(Dra.claim(ns, name, SoakSharing.WHOLE_CLASS, 1), webhook.draw());
      }
      claim.delete();
      return "delete-claim";
    }

    private String toggleTemplate() {
      String name = pick(TEMPLATES);
      var template =
          client
              .resources(io.fabric8.kubernetes.api.model.resource.v1.ResourceClaimTemplate.class)
              .inNamespace(ns)
              .withName(name);
      if (template.get() == null) {
        return webhook.create(Dra.template(ns, name, SoakSharing.WHOLE_CLASS, 1), webhook.draw());
      }
      template.delete();
      return "delete-template";
    }

    private String fault(String service, String kind) {
      if (more.untouchable(service)) {
        return "kill-skipped(frozen or cut off)";
      }
      stack.services.crash(service);
      faults.merge(kind + " " + kindOf(service), 1, Integer::sum);
      stack.services.restartWithoutWaiting(service);
      return "kill-and-restart " + kindOf(service);
    }

    private static String kindOf(String service) {
      return service.replaceAll("-\\d+$|-node-.$", "");
    }

    private String deleteSlices(String node) {
      client.resources(ResourceSlice.class).list().getItems().stream()
          .filter(s -> node.equals(s.getSpec().getNodeName()))
          .forEach(s -> client.resource(s).delete());
      faults.merge("slices deleted", 1, Integer::sum);
      return "delete-slices";
    }

    private String recreateNode(String node) {
      stack.nodes.recreateNode(node);
      faults.merge("node deleted and re-registered", 1, Integer::sum);
      return "recreate-node";
    }

    /**
     * Starts every service that exited again, as a Deployment or DaemonSet would, until all are
     * ready. The stack itself starts its leader-electing replicas again.
     */
    void superviseServices() {
      await("services ready")
          .atMost(Duration.ofMinutes(3))
          .until(
              () -> {
                boolean ready = true;
                for (String name : stack.services.processNames()) {
                  if (!stack.services.restartsByItself(name)
                      && !stack.services.process(name).alive()) {
                    faults.merge("exited by itself " + kindOf(name), 1, Integer::sum);
                    stack.services.restartWithoutWaiting(name);
                  }
                  // a frozen leader, a cut-off replica or a driver whose publisher is frozen
                  ready &= more.mayBeUnready(name) || stack.services.process(name).ready();
                }
                return ready;
              });
    }

    private <T> T pick(List<T> from) {
      return from.get(random.nextInt(from.size()));
    }
  }
}
