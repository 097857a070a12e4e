package io.kdra.it;

import static io.kdra.it.nodes.SimulatedNode.twoL4s;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import io.fabric8.kubernetes.api.model.Condition;
import io.fabric8.kubernetes.api.model.ObjectMetaBuilder;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.PodCondition;
import io.fabric8.kubernetes.api.model.resource.v1.DeviceTaint;
import io.fabric8.kubernetes.api.model.resource.v1.ResourceClaim;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.kdra.core.model.Semver;
import io.kdra.core.taint.DeviceTaintRule;
import io.kdra.core.taint.DeviceTaintRuleSpec;
import io.kdra.core.taint.DeviceTaintSelector;
import io.kdra.it.chart.KdraChart;
import io.kdra.it.controlplane.ControlPlane;
import io.kdra.it.services.Dra;
import io.kdra.it.services.KdraStack;
import io.kdra.it.services.Stack;
import java.time.Duration;
import java.util.Optional;
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

  @BeforeAll
  static void slicesPublished() {
    assumeTrue(
        Semver.parse(ControlPlane.VERSION).compareTo(Semver.parse("1.37.0")) >= 0,
        "DeviceTaintRule is served as v1 from Kubernetes 1.37 on; this run's is "
            + ControlPlane.VERSION);
    stack = STACK.get();
    client = stack.client;
    await()
        .atMost(Duration.ofSeconds(60))
        .untilAsserted(() -> assertThat(Dra.publishedDevices(client, "node-a")).isEqualTo(2));
  }

  /** The rule is cluster-wide and selects node-a's pool, which other classes' stacks use too. */
  @AfterAll
  static void ruleGone() {
    if (client != null) {
      client.resources(DeviceTaintRule.class).withName("maintenance").delete();
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
    DeviceTaintRule rule =
        new DeviceTaintRule(
            new ObjectMetaBuilder().withName("maintenance").build(),
            new DeviceTaintRuleSpec(
                new DeviceTaintSelector(Stack.DRIVER, "node-a", null),
                new DeviceTaint("NoSchedule", "example.com/maintenance", null, "planned")));
    client.resources(DeviceTaintRule.class).resource(rule).create();

    client.resource(Dra.claim(ns, "waiting", KdraChart.GPU_CLASS, 1)).create();
    Pod waiting = client.resource(Dra.podWithClaim(ns, "waiter", "waiting")).create();
    await()
        .atMost(Duration.ofSeconds(60))
        .untilAsserted(
            () ->
                assertThat(scheduled(Dra.get(client, waiting)))
                    .hasValueSatisfying(
                        c -> {
                          assertThat(c.getReason()).isEqualTo("Unschedulable");
                          assertThat(c.getMessage()).contains("(DeviceTaintRule maintenance)");
                        }));
    assertThat(Dra.get(client, holder).getMetadata().getDeletionTimestamp()).isNull();

    // NoExecute: the holder goes, the rule's status tells
    // a merge patch of the spec alone: the controller writes the rule's status meanwhile, and
    // an edit (which sends the read resourceVersion) would meet 409 Conflict
    client
        .resources(DeviceTaintRule.class)
        .withName("maintenance")
        .patch(
            io.fabric8.kubernetes.client.dsl.base.PatchContext.of(
                io.fabric8.kubernetes.client.dsl.base.PatchType.JSON_MERGE),
            "{\"spec\": {\"taint\": {\"effect\": \"NoExecute\"}}}");
    await()
        .atMost(Duration.ofSeconds(60))
        .untilAsserted(() -> assertThat(client.resource(holder).get()).isNull());
    await()
        .atMost(Duration.ofSeconds(60))
        .untilAsserted(
            () ->
                assertThat(evictionCondition())
                    .hasValueSatisfying(
                        c -> {
                          assertThat(c.getReason()).isEqualTo("Completed");
                          assertThat(c.getMessage())
                              .isEqualTo("1 pod evicted since starting the controller.");
                        }));
    assertThat(Dra.get(client, waiting).getSpec().getNodeName()).isNull();

    // untaint: the waiting pod gets a device
    client.resources(DeviceTaintRule.class).withName("maintenance").delete();
    await()
        .atMost(Duration.ofSeconds(60))
        .untilAsserted(
            () -> assertThat(Dra.get(client, waiting).getSpec().getNodeName()).isEqualTo("node-a"));
  }

  private static Optional<PodCondition> scheduled(Pod pod) {
    if (pod.getStatus() == null || pod.getStatus().getConditions() == null) {
      return Optional.empty();
    }
    return pod.getStatus().getConditions().stream()
        .filter(c -> "PodScheduled".equals(c.getType()))
        .findFirst();
  }

  private static Optional<Condition> evictionCondition() {
    DeviceTaintRule r = client.resources(DeviceTaintRule.class).withName("maintenance").get();
    if (r == null || r.getStatus() == null || r.getStatus().getConditions() == null) {
      return Optional.empty();
    }
    return r.getStatus().getConditions().stream()
        .filter(c -> "EvictionInProgress".equals(c.getType()))
        .findFirst();
  }
}
