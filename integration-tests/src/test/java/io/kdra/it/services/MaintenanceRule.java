package io.kdra.it.services;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import io.fabric8.kubernetes.api.model.Condition;
import io.fabric8.kubernetes.api.model.ObjectMetaBuilder;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.PodCondition;
import io.fabric8.kubernetes.api.model.resource.v1.DeviceTaint;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.dsl.base.PatchContext;
import io.fabric8.kubernetes.client.dsl.base.PatchType;
import io.kdra.core.model.Semver;
import io.kdra.core.taint.DeviceTaintRule;
import io.kdra.core.taint.DeviceTaintRuleSpec;
import io.kdra.core.taint.DeviceTaintSelector;
import io.kdra.it.controlplane.ControlPlane;
import java.time.Duration;
import java.util.Optional;

/**
 * A DeviceTaintRule tainting every device of one node's pool of our driver for maintenance, and
 * what the taint ITs await of it: a pod kept out by it, and the pods it evicted.
 */
public final class MaintenanceRule {

  private final KubernetesClient client;
  private final String name;
  private final String pool;

  public MaintenanceRule(KubernetesClient client, String name, String pool) {
    this.client = client;
    this.name = name;
    this.pool = pool;
  }

  /** Skips the test class where the API server does not serve the kind as v1 (before 1.37). */
  public static void assumeServed() {
    assumeTrue(
        Semver.parse(ControlPlane.VERSION).compareTo(Semver.parse("1.37.0")) >= 0,
        "DeviceTaintRule is served as v1 from Kubernetes 1.37 on; this run's is "
            + ControlPlane.VERSION);
  }

  /** Creates the rule with {@code effect} (NoSchedule or NoExecute). */
  public void create(String effect) {
    client
        .resources(DeviceTaintRule.class)
        .resource(
            new DeviceTaintRule(
                new ObjectMetaBuilder().withName(name).build(),
                new DeviceTaintRuleSpec(
                    new DeviceTaintSelector(Stack.DRIVER, pool, null),
                    new DeviceTaint(effect, "example.com/maintenance", null, "planned"))))
        .create();
  }

  /**
   * Turns the rule's effect to NoExecute by a merge patch of the spec alone: the controller writes
   * the rule's status meanwhile, and an edit (which sends the read resourceVersion) would meet 409
   * Conflict.
   */
  public void turnNoExecute() {
    client
        .resources(DeviceTaintRule.class)
        .withName(name)
        .patch(
            PatchContext.of(PatchType.JSON_MERGE),
            "{\"spec\": {\"taint\": {\"effect\": \"NoExecute\"}}}");
  }

  public void delete() {
    client.resources(DeviceTaintRule.class).withName(name).delete();
  }

  /** Awaits {@code pod} unschedulable with a message that names this rule. */
  public void awaitKeepsOut(Pod pod, Duration within) {
    await()
        .atMost(within)
        .untilAsserted(
            () ->
                assertThat(scheduled(Dra.get(client, pod)))
                    .hasValueSatisfying(
                        c -> {
                          assertThat(c.getReason()).isEqualTo("Unschedulable");
                          assertThat(c.getMessage()).contains("(DeviceTaintRule " + name + ")");
                        }));
  }

  /** Awaits the rule's status saying that its eviction completed, with one pod evicted. */
  public void awaitOnePodEvicted() {
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
  }

  private static Optional<PodCondition> scheduled(Pod pod) {
    if (pod.getStatus() == null || pod.getStatus().getConditions() == null) {
      return Optional.empty();
    }
    return pod.getStatus().getConditions().stream()
        .filter(c -> "PodScheduled".equals(c.getType()))
        .findFirst();
  }

  private Optional<Condition> evictionCondition() {
    DeviceTaintRule r = client.resources(DeviceTaintRule.class).withName(name).get();
    if (r == null || r.getStatus() == null || r.getStatus().getConditions() == null) {
      return Optional.empty();
    }
    return r.getStatus().getConditions().stream()
        .filter(c -> "EvictionInProgress".equals(c.getType()))
        .findFirst();
  }
}
