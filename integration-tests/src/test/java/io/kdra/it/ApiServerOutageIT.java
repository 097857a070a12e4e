package io.kdra.it;

import static io.kdra.it.nodes.SimulatedNode.l4s;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.coordination.v1.Lease;
import io.fabric8.kubernetes.api.model.resource.v1.ResourceSlice;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.kdra.it.chart.KdraChart;
import io.kdra.it.controlplane.ApiServerOutage;
import io.kdra.it.controlplane.ControlPlane;
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
 * The kube-apiserver goes away for longer than every elected service's renew deadline and comes
 * back on the same address and etcd. Every service stays up (no exit, so no crash-loop back-off):
 * each leader steps down once its renew deadline passed, every replica campaigns again, and once
 * the API server is back one replica of each leads again and works: a new pod is scheduled and a
 * deleted slice published again, each within {@link #RESUMED} of the API server's return.
 *
 * <p>Two claim-controller replicas (lease 6 s, renew deadline 4 s, retry 1 s), two bridge replicas
 * (the same), one slice-publisher (the defaults: 15 s, 10 s, 2 s). About a minute and a half.
 */
@ExtendWith(ControlPlane.class)
class ApiServerOutageIT {

  static final int DEVICES = 4;

  /** Issue 40's bound: scheduling and publishing within 30 s of the API server's return. */
  static final Duration RESUMED = Duration.ofSeconds(30);

  /** Each Lease, with the component name its replicas log and the replicas that elect. */
  static final Map<String, List<String>> LEASES = new LinkedHashMap<>();

  static {
    LEASES.put(KdraChart.CONTROLLER_LEASE, List.of("claim-controller-1", "claim-controller-2"));
    LEASES.put(KdraChart.BRIDGE_LEASE, List.of("computeclass-bridge-1", "computeclass-bridge-2"));
    LEASES.put(KdraChart.PUBLISHER_LEASE, List.of("slice-publisher"));
  }

  static final Map<String, String> COMPONENT =
      Map.of(
          KdraChart.CONTROLLER_LEASE, "claim-controller",
          KdraChart.BRIDGE_LEASE, "computeclass-bridge",
          KdraChart.PUBLISHER_LEASE, "slice-publisher");

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
              LEASES.forEach((lease, replicas) -> assertThat(holder(lease)).isIn(replicas));
            });
  }

  @Test
  void everyServiceStaysUpStepsDownAndResumesOnceTheApiServerIsBack() {
    String ns = stack.namespace;
    client.resource(Dra.template(ns, "one-gpu", KdraChart.GPU_CLASS, 1)).create();
    client.resource(Dra.podWithTemplate(ns, "before", "one-gpu")).create();
    await().atMost(Duration.ofSeconds(60)).until(() -> nodeOf("before") != null);

    Map<String, Integer> stepDowns = new LinkedHashMap<>();
    Map<String, String> leaders = new LinkedHashMap<>();
    LEASES.keySet().forEach(lease -> leaders.put(lease, holder(lease)));
    leaders.forEach((lease, leader) -> stepDowns.put(leader, stepDowns(lease, leader)));
    Map<String, Integer> restarts = new LinkedHashMap<>();
    stack.services.processNames().forEach(n -> restarts.put(n, stack.services.restarts(n)));

    long down = System.nanoTime();
    ApiServerOutage outage = ApiServerOutage.begin(controlPlane);
    // away until every leader has given up its Lease, in the process
    await()
        .atMost(Duration.ofSeconds(90))
        .pollInterval(Duration.ofMillis(250))
        .untilAsserted(
            () ->
                leaders.forEach(
                    (lease, leader) ->
                        assertThat(stepDowns(lease, leader))
                            .as(leader + " stepped down")
                            .isGreaterThan(stepDowns.get(leader))));
    long away = (System.nanoTime() - down) / 1_000_000;
    outage.end(Duration.ofSeconds(120));
    long back = System.nanoTime();
    System.out.printf(
        "[it] kube-apiserver away %d ms (every leader stepped down); back after %d ms%n",
        away, (back - down) / 1_000_000);

    // scheduling: a pod created after the return is bound
    client.resource(Dra.podWithTemplate(ns, "after", "one-gpu")).create();
    await()
        .atMost(RESUMED)
        .pollInterval(Duration.ofMillis(200))
        .until(() -> nodeOf("after") != null);
    long scheduled = (System.nanoTime() - back) / 1_000_000;

    // publishing: node-a's slices, deleted, are published again
    client.resources(ResourceSlice.class).list().getItems().stream()
        .filter(s -> "node-a".equals(s.getSpec().getNodeName()))
        .forEach(s -> client.resource(s).delete());
    await()
        .atMost(RESUMED)
        .pollInterval(Duration.ofMillis(200))
        .until(() -> Dra.publishedDevices(client, "node-a") == DEVICES);
    long published = (System.nanoTime() - back) / 1_000_000;

    // every Lease is held again, renewed since the return
    ZonedDateTime returned = ZonedDateTime.now().minus(Duration.ofNanos(System.nanoTime() - back));
    await()
        .atMost(RESUMED)
        .untilAsserted(
            () ->
                LEASES.forEach(
                    (lease, replicas) -> {
                      Lease l = lease(lease);
                      assertThat(l.getSpec().getHolderIdentity()).as(lease).isIn(replicas);
                      assertThat(l.getSpec().getRenewTime()).as(lease).isAfter(returned);
                    }));
    System.out.printf(
        "[it] after the return: a pod bound in %d ms, slices published again in %d ms%n",
        scheduled, published);

    // no service exited, none was started again
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
      String line = "lost the " + COMPONENT.get(lease) + " Lease";
      int n = 0;
      for (int i = log.indexOf(line); i >= 0; i = log.indexOf(line, i + 1)) {
        n++;
      }
      return n;
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }

  private static String nodeOf(String pod) {
    Pod p = client.pods().inNamespace(stack.namespace).withName(pod).get();
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
