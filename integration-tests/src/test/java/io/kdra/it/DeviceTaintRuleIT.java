package io.kdra.it;

import static io.kdra.it.nodes.SimulatedNode.twoL4s;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.resource.v1.ResourceClaim;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.kdra.it.chart.KdraChart;
import io.kdra.it.controlplane.ControlPlane;
import io.kdra.it.services.Dra;
import io.kdra.it.services.KdraStack;
import io.kdra.it.services.MaintenanceRule;
import io.kdra.it.services.Stack;
import java.time.Duration;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * DeviceTaintRules (resource.k8s.io/v1, Kubernetes 1.37) against a real API server, with the
 * claim-controller in {@code own} mode (it runs the device-taint eviction itself): a rule's
 * NoSchedule taint stops new allocations and the pending pod's message names the rule; NoExecute
 * evicts the pod holding the device and the rule's status says so; deleting the rule lets the
 * waiting pod in. Runs only on an API server from 1.37 on ({@code -Dkdra.k8s.version=1.37.2}), the
 * first to serve the kind as v1.
 */
@ExtendWith(ControlPlane.class)
class DeviceTaintRuleIT {

  @RegisterExtension static final KdraStack STACK = KdraStack.nodes(twoL4s("node-a"));

  private static Stack stack;
  private static KubernetesClient client;
  private static MaintenanceRule rule;

  @BeforeAll
  static void slicesPublished() {
    MaintenanceRule.assumeServed();
    stack = STACK.get();
    client = stack.client;
    rule = new MaintenanceRule(client, "maintenance", "node-a");
    await()
        .atMost(Duration.ofSeconds(60))
        .untilAsserted(() -> assertThat(Dra.publishedDevices(client, "node-a")).isEqualTo(2));
  }

  /** The rule is cluster-wide and selects node-a's pool, which other classes' stacks use too. */
  @AfterAll
  static void ruleGone() {
    if (rule != null) {
      rule.delete();
    }
  }

  /** The test's claims are its own (no template): deleted here, gone with their pods. */
  @AfterEach
  void noPodsLeft() {
    client.resources(ResourceClaim.class).inNamespace(stack.namespace).delete();
    stack.deletePodsAndAwaitClaimsGone();
  }

  @Test
  void taintNoAllocationEvictionUntaint() {
    String ns = stack.namespace;
    client.resource(Dra.claim(ns, "held", KdraChart.GPU_CLASS, 1)).create();
    Pod holder = client.resource(Dra.podWithClaim(ns, "holder", "held")).create();
    await()
        .atMost(Duration.ofSeconds(60))
        .untilAsserted(
            () -> assertThat(Dra.get(client, holder).getSpec().getNodeName()).isNotNull());

    // every device of the pool: the free one may not be allocated, the held one stays held
    rule.create("NoSchedule");

    client.resource(Dra.claim(ns, "waiting", KdraChart.GPU_CLASS, 1)).create();
    Pod waiting = client.resource(Dra.podWithClaim(ns, "waiter", "waiting")).create();
    rule.awaitKeepsOut(waiting, Duration.ofSeconds(60));
    assertThat(Dra.get(client, holder).getMetadata().getDeletionTimestamp()).isNull();

    // NoExecute: the holder goes, the rule's status tells
    rule.turnNoExecute();
    await()
        .atMost(Duration.ofSeconds(60))
        .untilAsserted(() -> assertThat(client.resource(holder).get()).isNull());
    rule.awaitOnePodEvicted();
    assertThat(Dra.get(client, waiting).getSpec().getNodeName()).isNull();

    // untaint: the waiting pod gets a device
    rule.delete();
    await()
        .atMost(Duration.ofSeconds(60))
        .untilAsserted(
            () -> assertThat(Dra.get(client, waiting).getSpec().getNodeName()).isEqualTo("node-a"));
  }
}
