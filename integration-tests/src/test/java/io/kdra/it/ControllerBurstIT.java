package io.kdra.it;

import static io.kdra.it.nodes.SimulatedNode.l4s;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.fabric8.kubernetes.api.model.OwnerReference;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.PodCondition;
import io.fabric8.kubernetes.api.model.resource.v1.ResourceClaim;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.kdra.it.chart.KdraChart;
import io.kdra.it.controlplane.ControlPlane;
import io.kdra.it.services.Dra;
import io.kdra.it.services.KdraStack;
import io.kdra.it.services.LeaseReplicas;
import io.kdra.it.services.Stack;
import java.nio.file.Files;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.stream.Collectors;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * Scenario 8: two claim-controller replicas electing a leader through the Lease, a burst of pods
 * (more than there are devices), and the leader killed (SIGKILL) while it allocates, then started
 * again as a Deployment would. The standby takes over: no device is allocated twice, every pod a
 * device is left for is bound, the rest stay Pending with the reason. Then the leader is stopped
 * gracefully (SIGTERM) and hands the Lease over, and a leader whose Lease is taken steps down in
 * the process and leads again once the Lease is free, without a restart. A replica that exits by
 * itself is started again by the harness, as its ReplicaSet would; the test kills whichever replica
 * leads when it crashes it.
 *
 * <p>{@value #PODS} pods on {@value #DEVICES_PER_NODE} x 2 simulated L4s; about a minute on two
 * cores, most of it the stack's start and the lease's expiry.
 */
@ExtendWith(ControlPlane.class)
class ControllerBurstIT {

  static final int DEVICES_PER_NODE = 32;
  static final int PODS = 100;
  static final String LEASE = KdraChart.CONTROLLER_LEASE;
  static final List<String> REPLICAS = List.of("claim-controller-1", "claim-controller-2");

  @RegisterExtension
  static final KdraStack STACK =
      KdraStack.nodes(l4s("node-a", DEVICES_PER_NODE), l4s("node-b", DEVICES_PER_NODE))
          .withControllers(2);

  private static Stack stack;
  private static KubernetesClient client;
  private static LeaseReplicas controllers;

  @BeforeAll
  static void slicesPublishedAndLeaderElected() {
    stack = STACK.get();
    client = stack.client;
    controllers = new LeaseReplicas(stack, LEASE, REPLICAS);
    await()
        .atMost(Duration.ofSeconds(60))
        .untilAsserted(
            () -> {
              assertThat(Dra.publishedDevices(client, "node-a")).isEqualTo(DEVICES_PER_NODE);
              assertThat(Dra.publishedDevices(client, "node-b")).isEqualTo(DEVICES_PER_NODE);
              assertThat(controllers.holder()).isNotNull();
            });
  }

  @Test
  void aBurstSurvivesTheLeadersCrashWithoutDoubleAllocation() throws Exception {
    String ns = stack.namespace;
    int devices = 2 * DEVICES_PER_NODE;
    client.resource(Dra.template(ns, "one-gpu", KdraChart.GPU_CLASS, 1)).create();

    long started = System.nanoTime();
    ExecutorService pool = Executors.newFixedThreadPool(8);
    List<Future<Pod>> created = new ArrayList<>();
    for (int i = 0; i < PODS; i++) {
      String name = String.format("burst-%03d", i);
      created.add(
          pool.submit(() -> client.resource(Dra.podWithTemplate(ns, name, "one-gpu")).create()));
    }
    List<Pod> pods = new ArrayList<>();
    for (Future<Pod> f : created) {
      pods.add(f.get());
    }
    pool.shutdown();

    // the leader dies mid-burst: some pods bound, most not yet. On a loaded machine a leader may
    // have missed its renew deadline before (it then steps down and campaigns again): the one
    // killed is whoever leads now, with a standby running
    await()
        .atMost(Duration.ofSeconds(60))
        .pollInterval(Duration.ofMillis(50))
        .until(() -> bound().size() >= 3);
    String leader = controllers.awaitLiveLeaderAndStandby();
    int boundAtCrash = bound().size();
    stack.services.crash(leader);
    String standby = controllers.other(leader);
    // the standby takes the lease once it expires and goes on where the leader stopped
    controllers.awaitTakenOverBy(standby, Duration.ofSeconds(90));
    System.out.printf(
        "[it] %s killed with %d of %d pods bound; %s leads since %d ms%n",
        leader, boundAtCrash, PODS, standby, (System.nanoTime() - started) / 1_000_000);
    // the killed replica comes back, as its Deployment would start it again, as the standby
    stack.services.restart(leader);

    await()
        .atMost(Duration.ofSeconds(90))
        .untilAsserted(
            () -> {
              assertThat(bound()).hasSize(devices);
              assertThat(controllers.holder()).isIn(REPLICAS);
            });
    System.out.printf(
        "[it] %d pods bound in %d ms; lease now held by %s%n",
        devices, (System.nanoTime() - started) / 1_000_000, controllers.holder());

    // no device allocated twice, and every bound pod holds a device on its node
    List<ResourceClaim> claims =
        client.resources(ResourceClaim.class).inNamespace(ns).list().getItems();
    List<String> allocated = claims.stream().flatMap(c -> Dra.devices(c).stream()).toList();
    assertThat(allocated).doesNotHaveDuplicates().hasSize(devices);
    Map<String, Pod> byName = new HashMap<>();
    client
        .pods()
        .inNamespace(ns)
        .list()
        .getItems()
        .forEach(p -> byName.put(p.getMetadata().getName(), p));
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
    // at most one claim per pod (no spare claim from the takeover), each owned by a live pod
    Map<String, List<String>> claimsByOwner =
        claims.stream()
            .collect(
                Collectors.groupingBy(
                    c ->
                        c.getMetadata().getOwnerReferences().stream()
                            .map(OwnerReference::getName)
                            .findFirst()
                            .orElse("(none)"),
                    Collectors.mapping(c -> c.getMetadata().getName(), Collectors.toList())));
    assertThat(claimsByOwner)
        .allSatisfy(
            (owner, names) -> {
              assertThat(byName).containsKey(owner);
              assertThat(names).hasSize(1);
            });
    // the rest are Pending, unschedulable, with the reason
    await()
        .atMost(Duration.ofSeconds(90))
        .untilAsserted(
            () -> {
              List<Pod> pending =
                  client.pods().inNamespace(ns).list().getItems().stream()
                      .filter(p -> p.getSpec().getNodeName() == null)
                      .toList();
              assertThat(pending).hasSize(PODS - devices);
              assertThat(pending)
                  .allSatisfy(
                      p -> {
                        PodCondition scheduled =
                            p.getStatus().getConditions().stream()
                                .filter(c -> c.getType().equals("PodScheduled"))
                                .findFirst()
                                .orElse(null);
                        assertThat(scheduled).as(p.getMetadata().getName()).isNotNull();
                        assertThat(scheduled.getStatus()).isEqualTo("False");
                        assertThat(scheduled.getReason()).isEqualTo("Unschedulable");
                        assertThat(scheduled.getMessage()).isNotBlank();
                        assertThat(Dra.devices(Dra.claimOf(client, p, "gpu"))).isEmpty();
                      });
            });
    // and every bound pod is prepared on its node
    await()
        .atMost(Duration.ofSeconds(60))
        .untilAsserted(
            () -> {
              for (Pod pod : bound()) {
                assertThat(stack.nodes.kubelet(pod.getSpec().getNodeName()).prepared(pod))
                    .as(pod.getMetadata().getName())
                    .isNotNull();
              }
            });

    String leading = controllers.awaitLiveLeaderAndStandby();
    handOverOnStopAndStepDownOnALostLease(leading, controllers.other(leading));
  }

  /**
   * A rolling update stops the leader (SIGTERM): it ends within its grace period and releases the
   * Lease, so the other replica leads long before the lease would expire, and schedules. Then a
   * Lease taken from that leader behind its back makes it step down (it may no longer write) and
   * campaign again: it leads once the other holder's lease has run out, with no restart, and
   * schedules.
   */
  private void handOverOnStopAndStepDownOnALostLease(String leading, String other)
      throws Exception {
    assertThat(controllers.holder()).isEqualTo(leading);
    long stopping = System.nanoTime();
    stack.services.stop(leading);
    long exited = (System.nanoTime() - stopping) / 1_000_000;
    await()
        .atMost(Duration.ofSeconds(90))
        .pollInterval(Duration.ofMillis(100))
        .until(() -> other.equals(controllers.holder()));
    long takeover = (System.nanoTime() - stopping) / 1_000_000;
    System.out.printf(
        "[it] claim-controller leader stopped (SIGTERM) in %d ms; %s leads %d ms"
            + " after the SIGTERM (lease duration 6 s)%n",
        exited, other, takeover);
    assertThat(Files.readString(stack.services.process(leading).log)).contains("released Lease");
    // ServiceProcess sends SIGKILL after 10 s: a shutdown that hangs takes longer
    assertThat(exited).as("ms from SIGTERM to exit").isLessThan(9_000);
    assertThat(takeover).as("ms from SIGTERM to the standby's takeover").isLessThan(6_000);

    // the new leader schedules: a bound pod's device goes to a pending pod once it is deleted
    Pod gone = bound().get(0);
    client.resource(gone).withGracePeriod(0).delete();
    await()
        .atMost(Duration.ofSeconds(60))
        .untilAsserted(
            () -> {
              assertThat(bound())
                  .hasSize(2 * DEVICES_PER_NODE)
                  .noneMatch(p -> p.getMetadata().getUid().equals(gone.getMetadata().getUid()));
            });

    // someone else holds the Lease now (a partition healed, a clock jumped): the leader steps down
    // the leader renews concurrently: retry a conflicting edit, as any other writer would
    for (int attempt = 1; ; attempt++) {
      try {
        client
            .leases()
            .inNamespace(KdraChart.NAMESPACE)
            .withName(LEASE)
            .edit(
                l -> {
                  l.getSpec().setHolderIdentity("intruder");
                  l.getSpec().setRenewTime(java.time.ZonedDateTime.now(java.time.ZoneOffset.UTC));
                  return l;
                });
        break;
      } catch (io.fabric8.kubernetes.client.KubernetesClientException e) {
        if (e.getCode() != 409 || attempt == 10) {
          throw e;
        }
      }
    }
    // it stays up, campaigns again and leads once the intruder's lease has run out
    int restarts = stack.services.restarts(other);
    await()
        .atMost(Duration.ofSeconds(90))
        .untilAsserted(
            () ->
                assertThat(Files.readString(stack.services.process(other).log))
                    .contains("lost the claim-controller" + " Lease"));
    await().atMost(Duration.ofSeconds(90)).until(() -> other.equals(controllers.holder()));
    assertThat(stack.services.restarts(other))
        .as("stepped down, not restarted")
        .isEqualTo(restarts);

    // and schedules again
    Pod freed = bound().get(0);
    client.resource(freed).withGracePeriod(0).delete();
    await()
        .atMost(Duration.ofSeconds(60))
        .untilAsserted(
            () ->
                assertThat(bound())
                    .hasSize(2 * DEVICES_PER_NODE)
                    .noneMatch(p -> p.getMetadata().getUid().equals(freed.getMetadata().getUid())));
  }

  private static List<Pod> bound() {
    return client.pods().inNamespace(stack.namespace).list().getItems().stream()
        .filter(p -> p.getSpec().getNodeName() != null)
        .toList();
  }
}
