package io.kdra.it;

import static org.awaitility.Awaitility.await;

import io.kdra.devicedriver.kubelet.drahealth.v1alpha1.HealthStatus;
import io.kdra.it.chart.KdraChart;
import io.kdra.it.controlplane.ApiServerOutage;
import io.kdra.it.controlplane.ControlPlane;
import io.kdra.it.controlplane.EtcdRestart;
import io.kdra.it.nodes.TestKubelet;
import io.kdra.it.services.ElectedServices;
import io.kdra.it.services.LeaseReplicas;
import io.kdra.it.services.Stack;
import io.kdra.it.support.PausableProxy;
import io.kdra.it.support.ServiceProcess;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.time.ZonedDateTime;
import java.util.Arrays;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.Set;
import java.util.function.BooleanSupplier;

/**
 * The chaos soak's faults beyond process kills (issues 39 and 40), drawn from the soak's seeded
 * stream and counted by kind:
 *
 * <ul>
 *   <li>the kube-apiserver restarted, or away for longer than every renew deadline ({@link
 *       ApiServerOutage}); in the long form one outage in five lasts two minutes;
 *   <li>etcd stopped under the API server and started again ({@link EtcdRestart});
 *   <li>the claim-controller's or the slice-publisher's leader frozen (SIGSTOP) until its standby
 *       took the Lease over, then let run on (SIGCONT);
 *   <li>a partition, silent or loud ({@link PausableProxy}), between a claim-controller replica and
 *       the API server (within or past the lease), or between a node's driver and the publishers
 *       (shorter than the disconnected taint's grace, past the stale taint, past the removal);
 *   <li>a driver stopped by SIGTERM (with prepares taking a while, often mid-prepare) and started
 *       again;
 *   <li>a driver's checkpoint truncated or overwritten with garbage while the driver is down
 *       (SIGKILL or SIGTERM), then the driver started again: it must rebuild its state from the
 *       node's CDI specs, which the soak's invariants check (every bound pod's claims keep their
 *       spec and checkpoint entry on its node);
 *   <li>the inventory gRPC's certificate renewed, or its CA rotated with an overlap ({@link
 *       SoakTls}), then every driver's connection ended: no handshake may be refused;
 *   <li>etcd latency: every chunk between kube-apiserver and etcd delayed ({@link
 *       io.kdra.it.controlplane.EtcdLink}) by up to 400 ms each way for a while, in the long form
 *       one time in four by 1 to 1.5 s (a Lease's renewal then takes longer than its renew
 *       deadline);
 *   <li>the publishers' admission webhook down (its link cut or paused) while claims and templates
 *       are written ({@link SoakWebhook});
 *   <li>a burst of ComputeClass creations, changes and deletions ({@link SoakBridge});
 *   <li>nvidia-smi hung on the node whose driver runs the nvidia backend ({@link SoakNvidiaSmi})
 *       until the kubelet shows its devices' health Unknown; once it answers, they must be Healthy
 *       again;
 *   <li>a full disk under one node's CDI specs and checkpoint ({@link SoakDisk}) for a while: a
 *       prepare there fails naming the file, leaving no claim half-prepared; once the space is
 *       back, every pod there starts;
 *   <li>a node's kubelet restarted with prepared claims: the driver registered again, each running
 *       pod's claims prepared again with the same CDI ids.
 * </ul>
 *
 * After each control-plane fault, both Leases must be held by a live replica and renewed within
 * {@link ElectedServices#RESUMED} of the return (issue 40's bound). Freezes and partitions stay in
 * place across the soak's next operations ({@link #tick} ends them), one at a time; the others run
 * to their end at once.
 */
final class SoakFaults {

  /** How many kinds {@link #inject} draws from. */
  static final int KINDS = 18;

  /** Longest wait for a restarted kubelet to have prepared the running pods' claims again. */
  private static final Duration PREPARED_AGAIN = Duration.ofSeconds(90);

  /** Longest a full disk stays full when no prepare meets it. */
  private static final Duration FULL_AT_MOST = Duration.ofSeconds(20);

  /** Shortest a full disk stays full once a prepare failed on it: the kubelet retries meanwhile. */
  private static final Duration FULL_AT_LEAST = Duration.ofSeconds(3);

  /**
   * Longest wait for the kubelet to hear that a hung nvidia-smi left its devices' health Unknown.
   */
  private static final Duration HUNG_SHOWN = Duration.ofSeconds(60);

  /** Longest wait, once nvidia-smi answers again, for every device there to be Healthy again. */
  private static final Duration RECOVERED = Duration.ofSeconds(30);

  /** The publishers' stale timers in the soak, short enough for partitions past each. */
  static final Duration DISCONNECTED_TAINT_AFTER = Duration.ofSeconds(5);

  static final Duration TAINT_AFTER = Duration.ofSeconds(10);
  static final Duration REMOVE_AFTER = Duration.ofSeconds(30);

  /** Longest wait for a standby to take over from a frozen leader. */
  private static final Duration TAKEOVER = Duration.ofSeconds(120);

  /** Longest wait for the API server's {@code /readyz} after a restart. */
  private static final Duration BACK = Duration.ofSeconds(120);

  private final Stack stack;
  private final ControlPlane.Running controlPlane;
  private final Random random;
  private final boolean longForm;
  private final Map<String, Integer> counts;
  private final SoakTls tls;
  private final List<String> nodes;
  private final LeaseReplicas controllers;
  private final LeaseReplicas publishers;
  private final PausableProxy etcdLink;
  private final SoakWebhook webhook;
  private final SoakBridge bridge;
  private final SoakNvidiaSmi smi;
  private final SoakDisk disk;

  /** A fault in place across operations; null when none. */
  private Ongoing ongoing;

  /**
   * {@code -Dsoak.first-fault=K}: the kind numbered K in {@link #inject}'s switch is the first
   * fault drawn (then the rounds go on as drawn); -1: none.
   */
  private int firstFault = Integer.getInteger("soak.first-fault", -1);

  /** The kinds not drawn yet in this round ({@link #inject}). */
  private final List<Integer> deck = new java.util.ArrayList<>();

  /**
   * @param longForm the 30-minute form: longer outages too
   * @param counts where each injected fault is counted, by kind
   */
  SoakFaults(
      Stack stack,
      ControlPlane.Running controlPlane,
      Random random,
      boolean longForm,
      Map<String, Integer> counts,
      List<String> nodes,
      SoakTls tls,
      PausableProxy etcdLink,
      SoakWebhook webhook,
      SoakBridge bridge,
      SoakNvidiaSmi smi,
      SoakDisk disk) {
    this.smi = smi;
    this.disk = disk;
    this.tls = tls;
    this.etcdLink = etcdLink;
    this.webhook = webhook;
    this.bridge = bridge;
    this.stack = stack;
    this.controlPlane = controlPlane;
    this.random = random;
    this.longForm = longForm;
    this.counts = counts;
    this.nodes = nodes;
    this.controllers =
        new LeaseReplicas(
            stack, KdraChart.CONTROLLER_LEASE, List.of("claim-controller-1", "claim-controller-2"));
    this.publishers =
        new LeaseReplicas(
            stack, KdraChart.PUBLISHER_LEASE, List.of("slice-publisher-1", "slice-publisher-2"));
  }

  /**
   * A fault in place: the services it leaves unready ({@code unready}) and those no one may kill
   * meanwhile ({@code untouchable}: a frozen process must be let run on, not killed), when it is
   * over, and how it ends.
   */
  private record Ongoing(
      String kind,
      Set<String> unready,
      Set<String> untouchable,
      BooleanSupplier over,
      Runnable end,
      long since) {}

  /** Whether a fault is in place now (then {@link #inject} injects none). */
  boolean inPlace() {
    return ongoing != null;
  }

  /** Whether {@code service} may be unready now, because of the fault in place. */
  boolean mayBeUnready(String service) {
    return ongoing != null && ongoing.unready().contains(service);
  }

  /** Whether {@code service} must not be killed now (it is frozen). */
  boolean untouchable(String service) {
    return ongoing != null && ongoing.untouchable().contains(service);
  }

  /** Ends the fault in place once it is over. */
  void tick() {
    if (ongoing != null && ongoing.over().getAsBoolean()) {
      end();
    }
  }

  /** Ends the fault in place, if any, over or not (the operations stop). */
  void endAll() {
    if (ongoing != null) {
      end();
    }
  }

  private void end() {
    Ongoing o = ongoing;
    ongoing = null;
    o.end().run();
    System.out.printf(
        "[soak] %s ended after %d ms%n", o.kind(), (System.nanoTime() - o.since()) / 1_000_000);
  }

  /**
   * Injects one fault, of a kind drawn at random from those not drawn yet in this round (every kind
   * once, in a shuffled order, before any comes again: so that even the short form meets many of
   * them); returns the operation's name.
   */
  String inject() {
    if (ongoing != null) {
      throw new IllegalStateException("a fault is in place: " + ongoing.kind());
    }
    if (deck.isEmpty()) {
      for (int k = 0; k < KINDS; k++) {
        deck.add(k);
      }
      java.util.Collections.shuffle(deck, random);
      if (firstFault >= 0 && deck.remove(Integer.valueOf(firstFault))) {
        deck.add(firstFault); // drawn next: replays a kind at once
        firstFault = -1;
      }
    }
    return switch (deck.remove(deck.size() - 1)) {
      case 0 -> apiServerRestart();
      case 1 -> apiServerAway();
      case 2 -> etcdRestart();
      case 3 -> freezeLeader(controllers, "claim-controller", Set.of());
      case 4 ->
          // the drivers' streams to a frozen publisher hang until they give up on it
          freezeLeader(publishers, "slice-publisher", Set.copyOf(drivers()));
      case 5 -> controllerPartition();
      case 6 -> publisherPartition();
      case 7 -> driverSigterm();
      case 8 -> corruptCheckpoint(false);
      case 9 -> corruptCheckpoint(true);
      case 12 -> etcdLatency();
      case 13 -> webhookDown();
      case 14 -> bridgeChurn();
      case 15 -> hungNvidiaSmi();
      case 16 -> fullDisk();
      case 17 -> kubeletRestart();
      case 10 -> {
        tls.renew(stack, publishers.replicas(), nodes);
        counts.merge("inventory certificate renewed", 1, Integer::sum);
        yield "renew certificate";
      }
      default -> {
        tls.rotateCa(stack, publishers.replicas(), nodes);
        counts.merge("inventory CA rotated", 1, Integer::sum);
        yield "rotate CA";
      }
    };
  }

  private String apiServerRestart() {
    long down = System.nanoTime();
    ApiServerOutage.begin(controlPlane).end(BACK);
    return resumed("kube-apiserver restarted", down);
  }

  private String apiServerAway() {
    boolean twoMinutes = longForm && random.nextInt(5) == 0;
    // past every renew deadline (4 s with the harness's replicas): each leader steps down
    long away = twoMinutes ? 120_000 : 5_000 + random.nextInt(6_000);
    long down = System.nanoTime();
    ApiServerOutage outage = ApiServerOutage.begin(controlPlane);
    // the outage's length, a fault the soak injects, not a wait for a state
    ServiceProcess.sleep(away);
    outage.end(BACK);
    return resumed(
        twoMinutes ? "kube-apiserver away 2 min" : "kube-apiserver away past the renew deadlines",
        down);
  }

  private String etcdRestart() {
    long away = 1_000 + random.nextInt(longForm ? 30_000 : 7_000);
    long down = System.nanoTime();
    EtcdRestart restart = EtcdRestart.begin(controlPlane);
    ServiceProcess.sleep(away);
    restart.end();
    await("kube-apiserver ready after etcd's restart")
        .atMost(BACK)
        .pollInterval(Duration.ofMillis(200))
        .ignoreExceptions()
        .until(() -> "ok".equals(controlPlane.client().raw("/readyz")));
    return resumed("etcd restarted", down);
  }

  /**
   * After a control-plane fault: each Lease held by a live replica again and renewed since the
   * return, within issue 40's bound; counts the fault.
   */
  private String resumed(String kind, long down) {
    awaitLeasesRenewed(kind, down);
    counts.merge(kind, 1, Integer::sum);
    return kind.startsWith("etcd") ? "restart etcd" : "stop kube-apiserver";
  }

  /** Each Lease held by a live replica again and renewed since now, within issue 40's bound. */
  private void awaitLeasesRenewed(String kind, long down) {
    long back = System.nanoTime();
    ZonedDateTime returned = ZonedDateTime.now();
    await(kind + ": every Lease held and renewed again")
        .atMost(ElectedServices.RESUMED)
        .pollInterval(Duration.ofMillis(200))
        .ignoreExceptions()
        .until(() -> ledAgainSince(controllers, returned) && ledAgainSince(publishers, returned));
    System.out.printf(
        "[soak] %s: away %d ms, every Lease renewed %d ms after the return%n",
        kind, (back - down) / 1_000_000, (System.nanoTime() - back) / 1_000_000);
  }

  /**
   * Every chunk between kube-apiserver and etcd delayed for a while, the operations going on; at
   * its end, both Leases held and renewed within the bound. Any service may be unready meanwhile.
   */
  private String etcdLatency() {
    boolean slow = longForm && random.nextInt(4) == 0;
    long latency = slow ? 1_000 + random.nextInt(500) : 50 + random.nextInt(350);
    long ms = slow ? 10_000 + random.nextInt(20_000) : 3_000 + random.nextInt(12_000);
    etcdLink.delay(Duration.ofMillis(latency));
    long since = System.nanoTime();
    String kind =
        slow
            ? "etcd latency 1-1.5 s each way (past the renew deadlines)"
            : "etcd latency 50-400 ms each way";
    ongoing =
        new Ongoing(
            kind,
            Set.copyOf(stack.services.processNames()),
            Set.of(),
            () -> System.nanoTime() - since >= ms * 1_000_000,
            () -> {
              etcdLink.delay(Duration.ZERO);
              awaitLeasesRenewed(kind, since);
            },
            since);
    counts.merge(kind, 1, Integer::sum);
    return "delay etcd";
  }

  /**
   * The publishers' admission webhook unreachable for a while, loud (connections refused) or silent
   * (calls time out), while the operations write claims and templates with and without our driver's
   * configs ({@link SoakWebhook} checks each write); at its end, a write with a valid config is
   * admitted again within {@link SoakWebhook#BACK}.
   */
  private String webhookDown() {
    boolean loud = random.nextBoolean();
    long ms = (longForm ? 5_000 + random.nextInt(40_000) : 3_000 + random.nextInt(10_000));
    webhook.takeDown(loud);
    long since = System.nanoTime();
    String kind = "admission webhook down (" + (loud ? "loud" : "silent") + ")";
    ongoing =
        new Ongoing(
            kind,
            Set.of(),
            Set.of(),
            () -> System.nanoTime() - since >= ms * 1_000_000,
            webhook::bringBack,
            since);
    counts.merge(kind, 1, Integer::sum);
    return "take the webhook down";
  }

  /**
   * nvidia-smi hangs on {@link SoakNvidiaSmi}'s node until the kubelet hears that its devices'
   * health is Unknown (each run ended by the driver's timeout, the passes failing; the driver is
   * neither killed nor needed ready meanwhile); then it answers again, and within {@link
   * #RECOVERED} every device there must be Healthy again: discovery resumed.
   */
  private String hungNvidiaSmi() {
    String driver = "device-driver-" + smi.node();
    TestKubelet kubelet = stack.nodes.kubelet(smi.node());
    smi.hang();
    long since = System.nanoTime();
    String kind = "nvidia-smi hung";
    ongoing =
        new Ongoing(
            kind,
            Set.of(driver),
            Set.of(driver),
            () -> {
              if (allDevices(kubelet, HealthStatus.UNKNOWN)) {
                return true;
              }
              if (System.nanoTime() - since > HUNG_SHOWN.toNanos()) {
                smi.release();
                throw new AssertionError(
                    "the kubelet on "
                        + smi.node()
                        + " did not hear within "
                        + HUNG_SHOWN
                        + " that nvidia-smi hangs: "
                        + kubelet.deviceHealth());
              }
              return false;
            },
            () -> {
              smi.release();
              long back = System.nanoTime();
              await(kind + ": every device of " + smi.node() + " Healthy again")
                  .atMost(RECOVERED)
                  .pollInterval(Duration.ofMillis(200))
                  .until(() -> allDevices(kubelet, HealthStatus.HEALTHY));
              System.out.printf(
                  "[soak] nvidia-smi hung: devices Healthy again %d ms after it answered%n",
                  (System.nanoTime() - back) / 1_000_000);
            },
            since);
    counts.merge(kind, 1, Integer::sum);
    return "hang nvidia-smi";
  }

  /**
   * {@link SoakDisk}'s node's disk full for a while, the operations going on (a probe pod lands
   * there too): while full, no claim there is half-prepared, and it is over once a prepare failed
   * with the driver's error naming the file it could not write (then a few seconds more of the
   * kubelet's retries), or after {@link #FULL_AT_MOST} if none met it; then some look must find no
   * spec without its checkpoint entry there (a failed prepare takes its spec back), the space is
   * freed and every pod on the node must start.
   */
  private String fullDisk() {
    if (!disk.available()) {
      counts.merge("full disk skipped (needs root)", 1, Integer::sum);
      return "full disk skipped";
    }
    // one page left (the spec fits, the entry does not) more often: the prepare's roll-back
    int pagesLeft = random.nextInt(3) == 0 ? 0 : 1;
    disk.fill(stack, pagesLeft);
    long since = System.nanoTime();
    String[] failed = new String[1];
    ongoing =
        new Ongoing(
            "full disk on " + SoakDisk.NODE + " (" + pagesLeft + " pages left)",
            Set.of(),
            Set.of(),
            () -> {
              disk.topUp(stack);
              if (failed[0] == null) {
                failed[0] = disk.failedForSpace(stack);
                if (failed[0] != null) {
                  System.out.printf(
                      "[soak] full disk: a prepare failed after %d ms: %s (%s)%n",
                      (System.nanoTime() - since) / 1_000_000, failed[0], disk.files(stack));
                }
              } else {
                disk.failedForSpace(stack); // still nothing half-prepared
              }
              long full = System.nanoTime() - since;
              return failed[0] != null
                  ? full >= FULL_AT_LEAST.toNanos()
                  : full >= FULL_AT_MOST.toNanos();
            },
            () -> {
              disk.assertNoSpecWithoutEntry(stack);
              disk.free(stack);
              counts.merge(
                  failed[0] != null
                      ? "full disk (a prepare failed: " + SoakDisk.CANNOT_WRITE + "...)"
                      : "full disk (no prepare met it)",
                  1,
                  Integer::sum);
            },
            since);
    return "fill the disk of " + SoakDisk.NODE;
  }

  /**
   * A node's (test) kubelet restarted with prepared claims ({@link
   * io.kdra.it.services.StackNodes#restartKubelet}): the driver is registered again, and every pod
   * the old kubelet had prepared that is still there (not being deleted) is prepared again by the
   * new one with the same CDI ids, within {@link #PREPARED_AGAIN}.
   */
  private String kubeletRestart() {
    // the node with the most prepared pods: a restart with none prepared proves little
    String node =
        nodes.stream()
            .max(
                java.util.Comparator.comparingInt(
                    (String n) -> stack.nodes.kubelet(n).prepared().size()))
            .orElseThrow();
    Map<String, TestKubelet.Prepared> before = stack.nodes.kubelet(node).prepared();
    long since = System.nanoTime();
    TestKubelet kubelet = stack.nodes.restartKubelet(node, PREPARED_AGAIN);
    await("kubelet restart on " + node + ": the running pods' claims prepared again, same CDI ids")
        .atMost(PREPARED_AGAIN)
        .pollInterval(Duration.ofMillis(200))
        .untilAsserted(
            () -> {
              Map<String, io.fabric8.kubernetes.api.model.Pod> running = new java.util.HashMap<>();
              stack.client.pods().inNamespace(stack.namespace).list().getItems().stream()
                  .filter(p -> p.getMetadata().getDeletionTimestamp() == null)
                  .filter(p -> node.equals(p.getSpec().getNodeName()))
                  .forEach(p -> running.put(key(p), p));
              Map<String, TestKubelet.Prepared> now = kubelet.prepared();
              for (var e : before.entrySet()) {
                if (running.containsKey(e.getKey())) {
                  org.assertj.core.api.Assertions.assertThat(now.get(e.getKey()))
                      .as(
                          "%s prepared again (last error: %s)",
                          e.getKey(), kubelet.lastError(running.get(e.getKey())))
                      .isNotNull();
                  org.assertj.core.api.Assertions.assertThat(now.get(e.getKey()).cdiIds())
                      .as("CDI ids of %s after the kubelet's restart", e.getKey())
                      .containsExactlyInAnyOrderElementsOf(e.getValue().cdiIds());
                }
              }
            });
    System.out.printf(
        "[soak] kubelet restarted on %s: %d prepared pods before, all still there prepared again"
            + " with the same CDI ids %d ms after%n",
        node, before.size(), (System.nanoTime() - since) / 1_000_000);
    counts.merge(
        before.isEmpty()
            ? "kubelet restarted (nothing prepared yet)"
            : "kubelet restarted with prepared claims",
        1,
        Integer::sum);
    return "restart kubelet";
  }

  /** A pod as the kubelet keys it: {@code namespace/name@uid}. */
  private static String key(io.fabric8.kubernetes.api.model.Pod p) {
    return p.getMetadata().getNamespace()
        + "/"
        + p.getMetadata().getName()
        + "@"
        + p.getMetadata().getUid();
  }

  /** Whether the kubelet's health cache has devices, each in {@code state}. */
  private static boolean allDevices(TestKubelet kubelet, HealthStatus state) {
    var health = kubelet.deviceHealth();
    return !health.isEmpty() && health.values().stream().allMatch(h -> h.getHealth() == state);
  }

  /** Three to six ComputeClass writes in a row, none waiting for the bridge. */
  private String bridgeChurn() {
    int writes = 3 + random.nextInt(4);
    for (int i = 0; i < writes; i++) {
      try {
        bridge.churn();
      } catch (io.fabric8.kubernetes.client.KubernetesClientException e) {
        // a conflict with the bridge's own write of the same ComputeClass: part of the churn
      }
    }
    counts.merge("computeclass churn burst", 1, Integer::sum);
    return "computeclass churn burst";
  }

  private boolean ledAgainSince(LeaseReplicas lease, ZonedDateTime returned) {
    String holder = lease.holder();
    ZonedDateTime renewed = lease.renewTime();
    return holder != null
        && lease.replicas().contains(holder)
        && stack.services.process(holder).alive()
        && renewed != null
        && renewed.isAfter(returned);
  }

  /**
   * Freezes the Lease's holder (SIGSTOP) until its standby holds the Lease (so past its lease),
   * then lets it run on (SIGCONT); {@code alsoUnready} may be unready meanwhile.
   */
  private String freezeLeader(LeaseReplicas lease, String service, Set<String> alsoUnready) {
    String leader = lease.awaitLiveLeaderAndStandby();
    String standby = lease.other(leader);
    ServiceProcess frozen = stack.services.process(leader);
    frozen.pause();
    long since = System.nanoTime();
    Set<String> unready = new HashSet<>(alsoUnready);
    unready.add(leader);
    String kind = "SIGSTOP " + service + " leader past its lease";
    ongoing =
        new Ongoing(
            kind,
            unready,
            Set.of(leader),
            () -> {
              if (standby.equals(lease.holder())) {
                return true;
              }
              if (System.nanoTime() - since > TAKEOVER.toNanos()) {
                frozen.resume();
                throw new AssertionError(
                    standby
                        + " did not take the Lease over from the frozen "
                        + leader
                        + " within "
                        + TAKEOVER);
              }
              return false;
            },
            frozen::resume,
            since);
    counts.merge(kind, 1, Integer::sum);
    return "freeze " + service + " leader";
  }

  /** A claim-controller replica (the leader, mostly) cut off from the API server for a while. */
  private String controllerPartition() {
    String holder = controllers.holder();
    String cut =
        holder != null && controllers.replicas().contains(holder) && random.nextInt(10) < 7
            ? holder
            : pick(controllers.replicas());
    boolean pastLease = random.nextBoolean();
    // the lease is 6 s
    long ms = pastLease ? 8_000 + random.nextInt(12_000) : 1_000 + random.nextInt(2_500);
    return partition(
        stack.services.apiLink(cut),
        cut,
        "claim-controller<->kube-apiserver",
        pastLease ? "past the lease" : "within the lease",
        ms);
  }

  /** A node's driver cut off from the slice-publishers for a while. */
  private String publisherPartition() {
    String node = pick(nodes);
    long ms;
    String length;
    switch (random.nextInt(3)) {
      case 0 -> {
        ms = DISCONNECTED_TAINT_AFTER.toMillis() - 4_000 + random.nextInt(2_000);
        length = "shorter than the disconnected taint's grace";
      }
      case 1 -> {
        ms = TAINT_AFTER.toMillis() + 2_000 + random.nextInt(10_000);
        length = "past the stale taint";
      }
      default -> {
        ms = REMOVE_AFTER.toMillis() + 5_000 + random.nextInt(10_000);
        length = "past the removal";
      }
    }
    return partition(
        stack.services.publisherLink(node),
        "device-driver-" + node,
        "device-driver<->slice-publisher",
        length,
        ms);
  }

  private String partition(
      PausableProxy link, String service, String between, String length, long ms) {
    boolean loud = random.nextBoolean();
    if (loud) {
      link.cut();
    } else {
      link.pause();
    }
    long since = System.nanoTime();
    String kind = "partition " + between + " (" + (loud ? "loud" : "silent") + ", " + length + ")";
    // the partition's length, a fault the soak injects; operations go on meanwhile
    // untouchable too: a replica started again behind a cut link may give up starting
    ongoing =
        new Ongoing(
            kind,
            Set.of(service),
            Set.of(service),
            () -> System.nanoTime() - since >= ms * 1_000_000,
            link::heal,
            since);
    counts.merge(kind, 1, Integer::sum);
    return "partition " + between;
  }

  private String driverSigterm() {
    String driver = "device-driver-" + pick(nodes);
    stack.services.stop(driver);
    counts.merge("SIGTERM device-driver", 1, Integer::sum);
    stack.services.restartWithoutWaiting(driver);
    return "sigterm-and-restart device-driver";
  }

  /**
   * Stops a driver (SIGKILL or SIGTERM), damages its checkpoint (cut short, or replaced by random
   * bytes) and starts it again.
   */
  private String corruptCheckpoint(boolean garbage) {
    String node = pick(nodes);
    String driver = "device-driver-" + node;
    boolean sigterm = random.nextBoolean();
    if (sigterm) {
      stack.services.stop(driver);
    } else {
      stack.services.crash(driver);
    }
    Path file = stack.nodes.checkpointFile(node);
    try {
      byte[] now = Files.exists(file) ? Files.readAllBytes(file) : new byte[0];
      byte[] damaged;
      if (garbage) {
        damaged = new byte[1 + random.nextInt(512)];
        random.nextBytes(damaged);
      } else {
        damaged =
            now.length < 2
                ? "{\"apiVersion\":".getBytes(java.nio.charset.StandardCharsets.UTF_8)
                : Arrays.copyOf(now, 1 + random.nextInt(now.length - 1));
      }
      Files.write(file, damaged);
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
    String kind =
        "checkpoint "
            + (garbage ? "garbage" : "truncated")
            + " (driver "
            + (sigterm ? "SIGTERM" : "SIGKILL")
            + ")";
    counts.merge(kind, 1, Integer::sum);
    stack.services.restartWithoutWaiting(driver);
    return "corrupt-checkpoint";
  }

  private List<String> drivers() {
    return nodes.stream().map(n -> "device-driver-" + n).toList();
  }

  private <T> T pick(List<T> from) {
    return from.get(random.nextInt(from.size()));
  }
}
