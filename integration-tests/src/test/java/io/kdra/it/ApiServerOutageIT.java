package io.kdra.it;

import static org.awaitility.Awaitility.await;

import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.kdra.it.chart.KdraChart;
import io.kdra.it.controlplane.ApiServerOutage;
import io.kdra.it.controlplane.ControlPlane;
import io.kdra.it.services.Dra;
import io.kdra.it.services.ElectedServices;
import io.kdra.it.services.KdraStack;
import io.kdra.it.services.Stack;
import java.time.Duration;
import java.time.ZonedDateTime;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * The kube-apiserver goes away for longer than every elected service's renew deadline and comes
 * back on the same address and etcd. Every service stays up (no exit, so no crash-loop back-off):
 * each leader steps down once its renew deadline passed, every replica campaigns again, and once
 * the API server is back one replica of each leads again and works: a new pod is scheduled and a
 * deleted slice published again, each within {@link ElectedServices#RESUMED} of the API server's
 * return.
 *
 * <p>Two claim-controller replicas (lease 6 s, renew deadline 4 s, retry 1 s), two bridge replicas
 * (the same), one slice-publisher (the defaults: 15 s, 10 s, 2 s). About a minute and a half.
 */
@ExtendWith(ControlPlane.class)
class ApiServerOutageIT {

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
  void everyServiceStaysUpStepsDownAndResumesOnceTheApiServerIsBack() {
    String ns = stack.namespace;
    client.resource(Dra.template(ns, "one-gpu", KdraChart.GPU_CLASS, 1)).create();
    client.resource(Dra.podWithTemplate(ns, "before", "one-gpu")).create();
    await().atMost(Duration.ofSeconds(60)).until(() -> nodeOf("before") != null);

    ElectedServices.Before before = elected.before();
    long down = System.nanoTime();
    ApiServerOutage outage = ApiServerOutage.begin(controlPlane);
    // away until every leader has given up its Lease, in the process
    elected.awaitEveryLeaderSteppedDown(before, Duration.ofSeconds(90));
    long away = (System.nanoTime() - down) / 1_000_000;
    outage.end(Duration.ofSeconds(120));
    long back = System.nanoTime();
    System.out.printf(
        "[it] kube-apiserver away %d ms (every leader stepped down); back after %d ms%n",
        away, (back - down) / 1_000_000);

    // scheduling: a pod created after the return is bound
    client.resource(Dra.podWithTemplate(ns, "after", "one-gpu")).create();
    await()
        .atMost(ElectedServices.RESUMED)
        .pollInterval(Duration.ofMillis(200))
        .until(() -> nodeOf("after") != null);
    long scheduled = (System.nanoTime() - back) / 1_000_000;

    // publishing: node-a's slices, deleted, are published again
    elected.awaitSlicesPublishedAgain();
    long published = (System.nanoTime() - back) / 1_000_000;

    // every Lease is held again, renewed since the return
    elected.awaitLeasesRenewedAfter(
        ZonedDateTime.now().minus(Duration.ofNanos(System.nanoTime() - back)));
    System.out.printf(
        "[it] after the return: a pod bound in %d ms, slices published again in %d ms%n",
        scheduled, published);

    // no service exited, none was started again
    elected.assertNoneExitedOrRestarted(before);
  }

  private static String nodeOf(String pod) {
    Pod p = client.pods().inNamespace(stack.namespace).withName(pod).get();
    return p == null ? null : p.getSpec().getNodeName();
  }
}
