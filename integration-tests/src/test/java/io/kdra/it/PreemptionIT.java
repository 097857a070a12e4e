package io.kdra.it;

import static io.kdra.it.nodes.SimulatedNode.l4s;
import static io.kdra.it.nodes.SimulatedNode.oneA100;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assumptions.assumeThat;
import static org.awaitility.Awaitility.await;

import io.fabric8.kubernetes.api.model.Event;
import io.fabric8.kubernetes.api.model.GenericKubernetesResource;
import io.fabric8.kubernetes.api.model.IntOrString;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.policy.v1.PodDisruptionBudget;
import io.fabric8.kubernetes.api.model.policy.v1.PodDisruptionBudgetBuilder;
import io.fabric8.kubernetes.api.model.scheduling.v1.PriorityClass;
import io.fabric8.kubernetes.api.model.scheduling.v1.PriorityClassBuilder;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.kdra.it.chart.KdraChart;
import io.kdra.it.controlplane.ControlPlane;
import io.kdra.it.services.Dra;
import io.kdra.it.services.KdraStack;
import io.kdra.it.services.Stack;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * Preemption for pods with claims on simulated nodes with one GPU each: a pod of high priority
 * evicts one of low priority holding a GPU it needs and is bound once the victim is gone, a
 * PodDisruptionBudget spares its pod where another victim exists, {@code preemptionPolicy: Never}
 * waits, and a gang goes whole, its PodGroup recording the preemption. Priorities come from
 * PriorityClasses through the API server's Priority admission.
 */
@ExtendWith(ControlPlane.class)
class PreemptionIT {

  @RegisterExtension
  static final KdraStack STACK = KdraStack.nodes(oneA100("node-a"), l4s("node-b", 1));

  private static final String TEMPLATE = "one-gpu";

  private static Stack stack;
  private static KubernetesClient client;

  @BeforeAll
  static void setUp() {
    stack = STACK.get();
    client = stack.client;
    await()
        .atMost(Duration.ofSeconds(60))
        .untilAsserted(
            () -> {
              assertThat(Dra.publishedDevices(client, "node-a")).isEqualTo(1);
              assertThat(Dra.publishedDevices(client, "node-b")).isEqualTo(1);
            });
    priorityClass("preemption-it-low", 10, null);
    priorityClass("preemption-it-mid", 100, null);
    priorityClass("preemption-it-high", 1000, null);
    priorityClass("preemption-it-high-never", 1000, "Never");
  }

  static void priorityClass(String name, int value, String policy) {
    if (client.resources(PriorityClass.class).withName(name).get() == null) {
      client
          .resource(
              new PriorityClassBuilder()
                  .withNewMetadata()
                  .withName(name)
                  .endMetadata()
                  .withValue(value)
                  .withPreemptionPolicy(policy)
                  .build())
          .create();
    }
  }

  @AfterEach
  void noPodsLeft() {
    client.resources(PodDisruptionBudget.class).inNamespace(stack.namespace).delete();
    if (GangMembers.served()) {
      GangMembers.podGroups(client, stack.namespace).delete();
    }
    stack.deletePodsAndAwaitClaimsGone();
  }

  Pod create(String name, String priorityClass, String... labels) {
    Pod pod = Dra.podWithTemplate(stack.namespace, name, TEMPLATE);
    pod.getSpec().setPriorityClassName(priorityClass);
    for (int i = 0; i < labels.length; i += 2) {
      pod.getMetadata().getLabels().put(labels[i], labels[i + 1]);
    }
    return client.resource(pod).create();
  }

  /** Both GPUs held: {@code first} and {@code second} created and bound, in this order. */
  void gpusHeldBy(Pod first, Pod second) {
    await()
        .atMost(Duration.ofSeconds(90))
        .untilAsserted(
            () -> {
              assertThat(Dra.get(client, first).getSpec().getNodeName()).isNotNull();
              assertThat(Dra.get(client, second).getSpec().getNodeName()).isNotNull();
            });
  }

  void template() {
    if (client
            .resources(io.fabric8.kubernetes.api.model.resource.v1.ResourceClaimTemplate.class)
            .inNamespace(stack.namespace)
            .withName(TEMPLATE)
            .get()
        == null) {
      client.resource(Dra.template(stack.namespace, TEMPLATE, KdraChart.GPU_CLASS, 1)).create();
    }
  }

  List<Event> events(String reason) {
    return client.v1().events().inNamespace(stack.namespace).list().getItems().stream()
        .filter(e -> reason.equals(e.getReason()))
        .toList();
  }

  @Test
  void aHighPriorityPodPreemptsALowPriorityHolderOfAGpuAndIsBound() {
    template();
    Pod low = create("low", "preemption-it-low");
    Pod mid = create("mid", "preemption-it-mid");
    gpusHeldBy(low, mid);
    String lowNode = Dra.get(client, low).getSpec().getNodeName();

    Pod high = create("high", "preemption-it-high");

    // the lowest-priority holder is the victim; the high pod takes its GPU once it is gone
    await()
        .atMost(Duration.ofSeconds(120))
        .untilAsserted(
            () -> {
              assertThat(Dra.get(client, high).getSpec().getNodeName()).isEqualTo(lowNode);
              assertThat(Dra.get(client, low)).isNull();
            });
    assertThat(Dra.get(client, mid)).as("not a victim").isNotNull();
    // (the API server clears nominatedNodeName at the binding:
    // ClearingNominatedNodeNameAfterBinding)
    assertThat(events("Preempted"))
        .anySatisfy(
            e -> {
              assertThat(e.getInvolvedObject().getName()).isEqualTo("low");
              assertThat(e.getMessage())
                  .isEqualTo(
                      "Preempted by pod " + high.getMetadata().getUid() + " on node " + lowNode);
            });
    assertThat(events("Preempting"))
        .anySatisfy(
            e -> {
              assertThat(e.getInvolvedObject().getName()).isEqualTo("high");
              assertThat(e.getMessage())
                  .isEqualTo(
                      "Preempting "
                          + stack.namespace
                          + "/low on node "
                          + lowNode
                          + " to make room");
            });
  }

  @Test
  void aPdbProtectedPodIsSparedWhenAnotherVictimExists() {
    template();
    client
        .resource(
            new PodDisruptionBudgetBuilder()
                .withNewMetadata()
                .withName("batch")
                .withNamespace(stack.namespace)
                .endMetadata()
                .withNewSpec()
                .withMinAvailable(new IntOrString(1))
                .withNewSelector()
                .addToMatchLabels("tier", "batch")
                .endSelector()
                .endSpec()
                .build())
        .create();
    // the guarded pod has the lower priority: without its budget it would be the victim
    Pod guarded = create("guarded", "preemption-it-low", "tier", "batch");
    Pod other = create("other", "preemption-it-mid");
    gpusHeldBy(guarded, other);
    String otherNode = Dra.get(client, other).getSpec().getNodeName();

    Pod high = create("high", "preemption-it-high");

    await()
        .atMost(Duration.ofSeconds(120))
        .untilAsserted(
            () -> assertThat(Dra.get(client, high).getSpec().getNodeName()).isEqualTo(otherNode));
    assertThat(Dra.get(client, other)).isNull();
    assertThat(Dra.get(client, guarded)).isNotNull();
    assertThat(Dra.get(client, guarded).getMetadata().getDeletionTimestamp()).isNull();
  }

  @Test
  void aPodWithPreemptionPolicyNeverWaitsAndEvictsNothing() {
    template();
    Pod low = create("low", "preemption-it-low");
    Pod mid = create("mid", "preemption-it-mid");
    gpusHeldBy(low, mid);

    Pod patient = create("patient", "preemption-it-high-never");

    await()
        .atMost(Duration.ofSeconds(60))
        .untilAsserted(
            () -> {
              assertThat(Dra.get(client, patient).getStatus().getConditions())
                  .anySatisfy(
                      c -> {
                        assertThat(c.getType()).isEqualTo("PodScheduled");
                        assertThat(c.getStatus()).isEqualTo("False");
                        assertThat(c.getMessage())
                            .endsWith("preemption: not eligible due to preemptionPolicy=Never.");
                      });
            });
    assertThat(Dra.get(client, low).getMetadata().getDeletionTimestamp()).isNull();
    assertThat(Dra.get(client, mid).getMetadata().getDeletionTimestamp()).isNull();
    assertThat(Dra.get(client, patient).getSpec().getNodeName()).isNull();

    // it is placed as soon as a GPU is freed by its holder
    client.resource(low).delete();
    await()
        .atMost(Duration.ofSeconds(120))
        .untilAsserted(
            () -> assertThat(Dra.get(client, patient).getSpec().getNodeName()).isNotNull());
  }

  /**
   * A gang of two (disruptionMode all) holds both GPUs: a pod of higher priority evicts it whole,
   * and the PodGroup records it in upstream's DisruptionTarget condition (written to the API
   * server's status with its validation), which a restarted claim-controller reads back; once the
   * gang is placed again the condition goes back to False.
   */
  @Test
  void aGangIsEvictedWholeAndItsPodGroupRecordsThePreemption() {
    assumeThat(GangMembers.served()).as("the Workload API is served from 1.37 on").isTrue();
    template();
    GenericKubernetesResource group = GangMembers.podGroup(stack.namespace, "train", 2);
    @SuppressWarnings("unchecked")
    Map<String, Object> spec = new HashMap<>((Map<String, Object>) group.get("spec"));
    spec.put("disruptionMode", Map.of("all", Map.of()));
    group.setAdditionalProperty("spec", spec);
    client.resource(group).create();
    List<Pod> gang = new ArrayList<>();
    for (int i = 0; i < 2; i++) {
      Pod member = GangMembers.member(stack.namespace, "train", i, TEMPLATE);
      member.getSpec().setPriorityClassName("preemption-it-low");
      gang.add(client.resource(member).create());
    }
    gpusHeldBy(gang.get(0), gang.get(1));

    Pod high = create("high", "preemption-it-high");

    await()
        .atMost(Duration.ofSeconds(120))
        .untilAsserted(
            () -> {
              assertThat(Dra.get(client, high).getSpec().getNodeName()).isNotNull();
              assertThat(Dra.get(client, gang.get(0))).isNull();
              assertThat(Dra.get(client, gang.get(1))).isNull();
            });
    GenericKubernetesResource stored =
        GangMembers.podGroups(client, stack.namespace).withName("train").get();
    @SuppressWarnings("unchecked")
    List<Map<String, Object>> conditions =
        (List<Map<String, Object>>) stored.get("status", "conditions");
    assertThat(conditions)
        .anySatisfy(
            c -> {
              assertThat(c.get("type")).isEqualTo("DisruptionTarget");
              assertThat(c.get("status")).isEqualTo("True");
              assertThat(c.get("reason")).isEqualTo("PreemptionByScheduler");
              assertThat((String) c.get("message"))
                  .startsWith("Preempted by pod " + high.getMetadata().getUid() + " on node ");
            });

    // the preemptor goes, the gang comes back whole: the record goes back to False
    client.resource(high).delete();
    List<Pod> again = new ArrayList<>();
    for (int i = 2; i < 4; i++) {
      Pod member = GangMembers.member(stack.namespace, "train", i, TEMPLATE);
      member.getSpec().setPriorityClassName("preemption-it-low");
      again.add(client.resource(member).create());
    }
    gpusHeldBy(again.get(0), again.get(1));
    await()
        .atMost(Duration.ofSeconds(60))
        .untilAsserted(
            () -> {
              @SuppressWarnings("unchecked")
              List<Map<String, Object>> now =
                  (List<Map<String, Object>>)
                      GangMembers.podGroups(client, stack.namespace)
                          .withName("train")
                          .get()
                          .get("status", "conditions");
              assertThat(now)
                  .anySatisfy(
                      c -> {
                        assertThat(c.get("type")).isEqualTo("DisruptionTarget");
                        assertThat(c.get("status")).isEqualTo("False");
                        assertThat(c.get("reason")).isEqualTo("Rescheduled");
                      });
            });
  }
}
