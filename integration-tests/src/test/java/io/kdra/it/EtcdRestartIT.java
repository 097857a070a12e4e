package io.kdra.it;

import static io.kdra.it.nodes.SimulatedNode.l4s;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.coordination.v1.Lease;
import io.fabric8.kubernetes.api.model.resource.v1.ResourceClaim;
import io.fabric8.kubernetes.api.model.resource.v1.ResourceSlice;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.kdra.it.chart.KdraChart;
import io.kdra.it.controlplane.ControlPlane;
import io.kdra.it.controlplane.EtcdRestart;
import io.kdra.it.services.Dra;
import io.kdra.it.services.KdraStack;
import io.kdra.it.services.Stack;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.time.Duration;
import java.time.ZonedDateTime;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * etcd stops under a running kube-apiserver for longer than every elected service's renew deadline
 * and comes back on the same data ({@link EtcdRestart}). The API server stays up but can neither
 * read nor write, so every Lease renewal fails: each leader steps down in the process, and once
 * etcd is back one replica of each leads again and works. No service exits, and no device is ever
 * given to two claims: with one device left free before the pause, of two pods created after it one
 * is bound and the other stays unschedulable.
 *
 * <p>The stack of {@link ApiServerOutageIT}: two claim-controller replicas, two bridge replicas,
 * one slice-publisher.
 */
@ExtendWith(ControlPlane.class)
class EtcdRestartIT {

  static final int DEVICES = 4;

  /** Issue 40's bound, as for the API server's return. */
  static final Duration RESUMED = ApiServerOutageIT.RESUMED;

  @RegisterExtension
  static final KdraStack STACK =
      KdraStack.nodes(l4s("node-a", DEVICES)).withControllers(2).withBridges(2);

  private static Stack stack;
  private static KubernetesClient client;
  private static ControlPlane.Running controlPlane;

  @BeforeAll
  static void publishedAndLed(ControlPlane.Running running) {
    controlPlane = running;
    stack = STACK.get();
    client = stack.client;
    await()
        .atMost(Duration.ofSeconds(60))
        .untilAsserted(
            () -> {
              assertThat(Dra.publishedDevices(client, "node-a")).isEqualTo(DEVICES);
              ApiServerOutageIT.LEASES.forEach(
                  (lease, replicas) -> assertThat(holder(lease)).isIn(replicas));
            });
  }

  @Test
  void everyServiceStaysUpResumesAndAllocatesNoDeviceTwiceOnceEtcdIsBack() {
    String ns = stack.namespace;
    client.resource(Dra.template(ns, "one-gpu", KdraChart.GPU_CLASS, 1)).create();
    for (String pod : List.of("before-0", "before-1", "before-2")) {
      client.resource(Dra.podWithTemplate(ns, pod, "one-gpu")).create();
    }
    await()
        .atMost(Duration.ofSeconds(60))
        .until(
            () ->
                List.of("before-0", "before-1", "before-2").stream()
                    .allMatch(p -> nodeOf(p) != null));

    Map<String, Integer> stepDowns = new LinkedHashMap<>();
    Map<String, String> leaders = new LinkedHashMap<>();
    ApiServerOutageIT.LEASES.keySet().forEach(lease -> leaders.put(lease, holder(lease)));
    leaders.forEach((lease, leader) -> stepDowns.put(leader, stepDowns(lease, leader)));
    Map<String, Integer> restarts = new LinkedHashMap<>();
    stack.services.processNames().forEach(n -> restarts.put(n, stack.services.restarts(n)));

    long down = System.nanoTime();
    EtcdRestart restart = EtcdRestart.begin(controlPlane);
    await()
        .atMost(Duration.ofSeconds(120))
        .pollInterval(Duration.ofMillis(250))
        .untilAsserted(
            () ->
                leaders.forEach(
                    (lease, leader) ->
                        assertThat(stepDowns(lease, leader))
                            .as(leader + " stepped down")
                            .isGreaterThan(stepDowns.get(leader))));
    long away = (System.nanoTime() - down) / 1_000_000;
    restart.end();
    await()
        .atMost(Duration.ofSeconds(120))
        .pollInterval(Duration.ofMillis(200))
        .ignoreExceptions()
        .until(() -> "ok".equals(controlPlane.client().raw("/readyz")));
    long back = System.nanoTime();
    System.out.printf(
        "[it] etcd away %d ms (every leader stepped down); API server ready after %d ms%n",
        away, (back - down) / 1_000_000);

    // one device is free: of two new pods, one is bound and the other stays unschedulable
    List<String> after = List.of("after-0", "after-1");
    after.forEach(p -> client.resource(Dra.podWithTemplate(ns, p, "one-gpu")).create());
    await()
        .atMost(RESUMED)
        .pollInterval(Duration.ofMillis(200))
        .until(() -> after.stream().filter(p -> nodeOf(p) != null).count() == 1);
    String waiting = after.stream().filter(p -> nodeOf(p) == null).findFirst().orElseThrow();
    await()
        .atMost(RESUMED)
        .untilAsserted(
            () ->
                assertThat(pod(waiting).getStatus().getConditions())
                    .anySatisfy(
                        c -> {
                          assertThat(c.getType()).isEqualTo("PodScheduled");
                          assertThat(c.getStatus()).isEqualTo("False");
                        }));
    assertThat(nodeOf(waiting)).as("the pod left without a device").isNull();
    List<String> allocated =
        client.resources(ResourceClaim.class).inNamespace(ns).list().getItems().stream()
            .flatMap(c -> Dra.devices(c).stream())
            .toList();
    assertThat(allocated).as("devices of every claim").hasSize(DEVICES).doesNotHaveDuplicates();

    // publishing: node-a's slices, deleted, are published again
    client.resources(ResourceSlice.class).list().getItems().stream()
        .filter(s -> "node-a".equals(s.getSpec().getNodeName()))
        .forEach(s -> client.resource(s).delete());
    await()
        .atMost(RESUMED)
        .pollInterval(Duration.ofMillis(200))
        .until(() -> Dra.publishedDevices(client, "node-a") == DEVICES);

    ZonedDateTime returned = ZonedDateTime.now().minus(Duration.ofNanos(System.nanoTime() - back));
    await()
        .atMost(RESUMED)
        .untilAsserted(
            () ->
                ApiServerOutageIT.LEASES.forEach(
                    (lease, replicas) -> {
                      Lease l = lease(lease);
                      assertThat(l.getSpec().getHolderIdentity()).as(lease).isIn(replicas);
                      assertThat(l.getSpec().getRenewTime()).as(lease).isAfter(returned);
                    }));

    for (String name : stack.services.processNames()) {
      assertThat(stack.services.process(name).alive()).as(name + " runs").isTrue();
      assertThat(stack.services.restarts(name))
          .as(name + " restarts")
          .isEqualTo(restarts.get(name));
    }
  }

  /** How often {@code replica}'s log says it lost {@code lease}'s leadership. */
  private static int stepDowns(String lease, String replica) {
    try {
      String log = Files.readString(stack.services.process(replica).log);
      String line = "lost the " + ApiServerOutageIT.COMPONENT.get(lease) + " Lease";
      int n = 0;
      for (int i = log.indexOf(line); i >= 0; i = log.indexOf(line, i + 1)) {
        n++;
      }
      return n;
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }

  private static Pod pod(String name) {
    return client.pods().inNamespace(stack.namespace).withName(name).get();
  }

  private static String nodeOf(String name) {
    Pod p = pod(name);
    return p == null ? null : p.getSpec().getNodeName();
  }

  private static Lease lease(String name) {
    return client.leases().inNamespace(KdraChart.NAMESPACE).withName(name).get();
  }

  private static String holder(String name) {
    Lease l = lease(name);
    return l == null || l.getSpec() == null ? null : l.getSpec().getHolderIdentity();
  }
}
