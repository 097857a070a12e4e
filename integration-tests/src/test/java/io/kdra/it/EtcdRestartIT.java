package io.kdra.it;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.resource.v1.ResourceClaim;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.kdra.it.chart.KdraChart;
import io.kdra.it.controlplane.ControlPlane;
import io.kdra.it.controlplane.EtcdRestart;
import io.kdra.it.services.Dra;
import io.kdra.it.services.ElectedServices;
import io.kdra.it.services.KdraStack;
import io.kdra.it.services.Stack;
import java.time.Duration;
import java.time.ZonedDateTime;
import java.util.List;
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
 * <p>The stack of {@link ApiServerOutageIT} ({@link ElectedServices}): two claim-controller
 * replicas, two bridge replicas, one slice-publisher.
 */
@ExtendWith(ControlPlane.class)
class EtcdRestartIT {

  static final int DEVICES = 4;

  @RegisterExtension static final KdraStack STACK = ElectedServices.stack(DEVICES);

  private static Stack stack;
  private static KubernetesClient client;
  private static ControlPlane.Running controlPlane;
  private static ElectedServices elected;

  @BeforeAll
  static void publishedAndLed(ControlPlane.Running running) {
    controlPlane = running;
    stack = STACK.get();
    client = stack.client;
    elected = ElectedServices.publishedAndLed(stack, DEVICES);
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

    ElectedServices.Before before = elected.before();
    long down = System.nanoTime();
    EtcdRestart restart = EtcdRestart.begin(controlPlane);
    elected.awaitEveryLeaderSteppedDown(before, Duration.ofSeconds(120));
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
        .atMost(ElectedServices.RESUMED)
        .pollInterval(Duration.ofMillis(200))
        .until(() -> after.stream().filter(p -> nodeOf(p) != null).count() == 1);
    String waiting = after.stream().filter(p -> nodeOf(p) == null).findFirst().orElseThrow();
    await()
        .atMost(ElectedServices.RESUMED)
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
    elected.awaitSlicesPublishedAgain();

    elected.awaitLeasesRenewedAfter(
        ZonedDateTime.now().minus(Duration.ofNanos(System.nanoTime() - back)));
    elected.assertNoneExitedOrRestarted(before);
  }

  private static Pod pod(String name) {
    return client.pods().inNamespace(stack.namespace).withName(name).get();
  }

  private static String nodeOf(String name) {
    Pod p = pod(name);
    return p == null ? null : p.getSpec().getNodeName();
  }
}
