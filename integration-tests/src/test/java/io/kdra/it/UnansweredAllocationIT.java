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
import io.kdra.it.services.ClaimWriteGate;
import io.kdra.it.services.Dra;
import io.kdra.it.services.KdraStack;
import io.kdra.it.services.Stack;
import io.kdra.it.support.PausableProxy;
import io.kdra.it.support.ServiceProcess;
import java.io.IOException;
import java.nio.file.Files;
import java.time.Duration;
import java.util.Map;
import java.util.Objects;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * Issue 40: the claim-controller's allocation write to a user's ResourceClaim (not a template's)
 * reaches the API server, and the answer never comes back: the controller's link to the API server
 * is paused while a {@link ClaimWriteGate} holds the write at the API server, until the
 * controller's request has timed out; the gate then stores it or refuses it, and what the pause
 * held is dropped ({@link PausableProxy#cut}). The pod is deleted meanwhile. Once the link heals,
 * the cluster's only device is not held forever in the controller's memory: a second pod for it is
 * bound within {@link #FREED}, the first claim ends without an allocation, and no device is ever in
 * two claims. Where the write was never stored, only the leader's settle of unanswered allocations
 * frees it ({@code kdra_claim_controller_unanswered_allocations_total{outcome="unreserved"}}).
 */
@ExtendWith(ControlPlane.class)
class UnansweredAllocationIT {

  static final String CONTROLLER = "claim-controller";

  /** Two settle intervals (5 s) and the informers' catching up after the link heals, loaded. */
  static final Duration FREED = Duration.ofSeconds(60);

  static final String UNRESERVED =
      "kdra_claim_controller_unanswered_allocations_total{outcome=\"unreserved\"}";

  @RegisterExtension
  static final KdraStack STACK = KdraStack.nodes(l4s("node-a", 1)).withControllerApiLinks();

  private static Stack stack;
  private static KubernetesClient client;

  @BeforeAll
  static void published() {
    stack = STACK.get();
    client = stack.client;
    await().atMost(Duration.ofSeconds(60)).until(() -> Dra.publishedDevices(client, "node-a") == 1);
  }

  @AfterEach
  void everyClaimGone() {
    stack.services.apiLink(CONTROLLER).heal();
    client.resources(ResourceClaim.class).inNamespace(stack.namespace).delete();
    stack.deletePodsAndAwaitClaimsGone();
  }

  @Test
  void anAllocationStoredWithoutAnAnswerForADeletedPodHoldsItsDeviceNoLonger() throws Exception {
    allocationUnansweredForADeletedPod("stored", true);
  }

  @Test
  void anAllocationRefusedWithoutAnAnswerForADeletedPodHoldsItsDeviceNoLonger() throws Exception {
    double unreserved = counter(UNRESERVED);
    allocationUnansweredForADeletedPod("refused", false);
    // the leader's settle undid the attempt on the version the write was made on
    await()
        .alias("the settle's undo counted")
        .atMost(FREED)
        .until(() -> counter(UNRESERVED) > unreserved);
  }

  private void allocationUnansweredForADeletedPod(String name, boolean stored) throws Exception {
    String ns = stack.namespace;
    String first = name + "-first";
    String second = name + "-second";
    PausableProxy link = stack.services.apiLink(CONTROLLER);
    try (AllocationInvariants invariants = new AllocationInvariants(client, ns, Stack.DRIVER);
        ClaimWriteGate gate = ClaimWriteGate.start(client, ns, name, stored)) {
      client.resource(ClaimWriteGate.gated(Dra.claim(ns, name, KdraChart.GPU_CLASS, 1))).create();
      int[] touches = {0};
      gate.awaitEffective(
          () ->
              client
                  .resources(ResourceClaim.class)
                  .inNamespace(ns)
                  .withName(name)
                  .edit(
                      c -> {
                        c.getMetadata()
                            .setAnnotations(Map.of("touched", String.valueOf(++touches[0])));
                        return c;
                      }));

      client.resource(Dra.podWithClaim(ns, first, name)).create();
      gate.awaitHeld(Duration.ofSeconds(60));
      // from here the answer cannot reach the controller, nor its giving up the API server
      link.pause();
      client.pods().inNamespace(ns).withName(first).delete();
      await()
          .alias("the first pod gone")
          .atMost(Duration.ofSeconds(60))
          .until(() -> client.pods().inNamespace(ns).withName(first).get() == null);
      await()
          .alias("the controller's write ended without an answer")
          .atMost(Duration.ofSeconds(90))
          .until(() -> controllerLog().contains("pod " + ns + "/" + first + ": attempt failed"));
      gate.answer(stored);
      if (stored) {
        await()
            .alias("the held write stored")
            .atMost(Duration.ofSeconds(60))
            .until(() -> !Dra.devices(claim(name)).isEmpty());
      }
      // what the pause held, the answer among it, is lost; the controller connects again
      link.cut();
      link.heal();
      long healed = System.nanoTime();

      client.resource(Dra.claim(ns, second, KdraChart.GPU_CLASS, 1)).create();
      client.resource(Dra.podWithClaim(ns, second, second)).create();
      await()
          .alias("the second pod bound: the device is not held for the first claim")
          .atMost(FREED)
          .pollInterval(Duration.ofMillis(250))
          .until(() -> nodeOf(second) != null);
      System.out.printf(
          "[it] %s: the device went to the second pod %d ms after the link healed%n",
          name, (System.nanoTime() - healed) / 1_000_000);
      await()
          .alias("the first claim without an allocation")
          .atMost(FREED)
          .until(() -> Dra.devices(claim(name)).isEmpty());
      assertThat(Dra.devices(claim(second))).hasSize(1);
      assertThat(invariants.violations).as("devices in two claims").isEmpty();
    }
  }

  private static ResourceClaim claim(String name) {
    return Objects.requireNonNull(
        client.resources(ResourceClaim.class).inNamespace(stack.namespace).withName(name).get());
  }

  private static String nodeOf(String pod) {
    Pod p = client.pods().inNamespace(stack.namespace).withName(pod).get();
    return p == null ? null : p.getSpec().getNodeName();
  }

  private static String controllerLog() throws IOException {
    return Files.readString(stack.services.process(CONTROLLER).log);
  }

  private static double counter(String series) {
    ServiceProcess controller = stack.services.process(CONTROLLER);
    Double value = controller.metric(series);
    return value == null ? 0 : value;
  }
}
