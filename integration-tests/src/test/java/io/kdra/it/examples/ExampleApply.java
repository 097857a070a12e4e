package io.kdra.it.examples;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import com.fasterxml.jackson.databind.JsonNode;
import io.fabric8.kubernetes.api.model.DeletionPropagation;
import io.fabric8.kubernetes.api.model.GenericKubernetesResource;
import io.fabric8.kubernetes.api.model.HasMetadata;
import io.fabric8.kubernetes.api.model.ManagedFieldsEntry;
import io.fabric8.kubernetes.api.model.ObjectMetaBuilder;
import io.fabric8.kubernetes.api.model.OwnerReference;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.PodCondition;
import io.fabric8.kubernetes.api.model.PodResourceClaimStatus;
import io.fabric8.kubernetes.api.model.apps.ReplicaSet;
import io.fabric8.kubernetes.api.model.resource.v1.DeviceClass;
import io.fabric8.kubernetes.api.model.resource.v1.ResourceClaim;
import io.fabric8.kubernetes.api.model.resource.v1.ResourceClaimBuilder;
import io.fabric8.kubernetes.api.model.resource.v1.ResourceClaimTemplate;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.kdra.alloc.cli.Summary;
import io.kdra.alloc.cli.WorkloadPods;
import io.kdra.it.nodes.NodeRegistration;
import io.kdra.it.services.Stack;
import java.io.IOException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.function.Supplier;

/**
 * Applies one example folder to a stack that runs kube-controller-manager, as {@code kubectl apply
 * -f examples/<example>/} does: each object created as written, in file order, in the stack's
 * namespace instead of the example's (and a DeviceClass it defines labelled, for removal with the
 * stack). One thing is added, said in {@code ExamplesIT}: after a pod or a workload, its pods are
 * awaited bound before the next object (dra-alloc places pods in input order). Reads back the
 * summary lines of the claims the example allocated, under the names dra-alloc prints, a workload's
 * template claims for any replica ({@link ReplicaNames}).
 */
public final class ExampleApply {

  private static final Duration BOUND = Duration.ofSeconds(120);
  private static final Duration GONE = Duration.ofSeconds(90);

  private final Stack stack;
  private final KubernetesClient client;

  /** The example's workloads by uid: their names. */
  private final Map<String, String> workloads = new HashMap<>();

  private String exampleNamespace;

  private ExampleApply(Stack stack) {
    this.stack = stack;
    this.client = stack.client;
  }

  /**
   * Applies {@code example} and returns the summary line of every claim it allocated, as dra-alloc
   * prints them for the example's namespace, a workload's template claims named for any replica.
   */
  public static List<String> outcome(Stack stack, ExampleFolder example) throws IOException {
    ExampleApply apply = new ExampleApply(stack);
    for (JsonNode doc : example.docsWithTheBridgesObjects()) {
      apply.apply(doc);
    }
    return apply.outcome();
  }

  private void apply(JsonNode doc) {
    HasMetadata object = client.getKubernetesSerialization().unmarshal(doc.toString());
    if (ExampleFolder.COMPUTE_CLASS.equals(object.getKind())) {
      client
          .genericKubernetesResources(doc.path("apiVersion").asText(), object.getKind())
          .resource((GenericKubernetesResource) object)
          .create();
      return;
    }
    if (ExampleFolder.isTheBridges(doc)) {
      awaitTheBridges(object);
      return;
    }
    if (object instanceof DeviceClass dc) {
      // an example uses the chart's classes (its cluster file holds them for dra-alloc) and never
      // defines one: kubectl apply would take it over from the Helm release
      assertThat(client.resource(dc).get())
          .as("DeviceClass %s exists already (the chart's?)", dc.getMetadata().getName())
          .isNull();
      stack.createClusterScoped(dc);
      return;
    }
    exampleNamespace = object.getMetadata().getNamespace();
    object.getMetadata().setNamespace(stack.namespace);
    if (object instanceof Pod pod) {
      String name = client.resource(pod).create().getMetadata().getName();
      awaitBound("pod " + name, 1, () -> List.of(client.resource(pod).get()));
    } else if (WorkloadPods.KINDS.contains(object.getKind())) {
      HasMetadata created = client.resource(object).create();
      String name = created.getMetadata().getName();
      workloads.put(created.getMetadata().getUid(), name);
      awaitBound(
          "the pods of %s %s".formatted(object.getKind(), name),
          WorkloadPods.expand(doc).size(),
          () -> podsOf(name));
    } else if (object instanceof ResourceClaimTemplate || object instanceof ResourceClaim) {
      client.resource(object).create();
    } else {
      throw new AssertionError("no rule to apply a " + object.getKind() + " here");
    }
  }

  /**
   * Waits until there are {@code count} pods and each is bound; a pod left unbound is named with
   * its {@code PodScheduled} condition, which says why.
   */
  private void awaitBound(String what, int count, Supplier<List<Pod>> pods) {
    await()
        .atMost(BOUND)
        .untilAsserted(
            () -> {
              List<Pod> current = pods.get();
              assertThat(current).as(what).hasSize(count);
              for (Pod p : current) {
                assertThat(p.getSpec().getNodeName())
                    .as("pod %s bound (PodScheduled: %s)", p.getMetadata().getName(), scheduled(p))
                    .isNotNull();
              }
            });
  }

  private static String scheduled(Pod pod) {
    if (pod.getStatus() == null || pod.getStatus().getConditions() == null) {
      return "no condition";
    }
    return pod.getStatus().getConditions().stream()
        .filter(c -> "PodScheduled".equals(c.getType()))
        .map(ExampleApply::words)
        .findFirst()
        .orElse("no condition");
  }

  private static String words(PodCondition c) {
    return c.getStatus() + " " + c.getReason() + ": " + c.getMessage();
  }

  /** The stack's pods that workload {@code name} of this example runs. */
  private List<Pod> podsOf(String name) {
    return client.pods().inNamespace(stack.namespace).list().getItems().stream()
        .filter(p -> name.equals(workloadOf(p)))
        .toList();
  }

  /**
   * The example's workload that runs {@code pod}, through its controller references (a Deployment's
   * pods through their ReplicaSet); null for a pod of none.
   */
  private String workloadOf(Pod pod) {
    OwnerReference owner = controllerOf(pod);
    if (owner == null) {
      return null;
    }
    if (workloads.containsKey(owner.getUid())) {
      return workloads.get(owner.getUid());
    }
    if ("ReplicaSet".equals(owner.getKind())) {
      ReplicaSet set =
          client.apps().replicaSets().inNamespace(stack.namespace).withName(owner.getName()).get();
      OwnerReference deployment = set == null ? null : controllerOf(set);
      return deployment == null ? null : workloads.get(deployment.getUid());
    }
    return null;
  }

  private static OwnerReference controllerOf(HasMetadata object) {
    return object.getMetadata().getOwnerReferences().stream()
        .filter(o -> Boolean.TRUE.equals(o.getController()))
        .findFirst()
        .orElse(null);
  }

  /**
   * Every allocated claim's summary line, named as dra-alloc names it: kube-controller-manager's
   * claims of a pod's template entries {@code <pod>-<entry>} (from the pods' status), with a
   * workload's pods as {@link ReplicaNames#anyReplicaOf any replica}; in the example's namespace.
   */
  private List<String> outcome() {
    Map<String, String> names = new HashMap<>();
    for (Pod pod : client.pods().inNamespace(stack.namespace).list().getItems()) {
      if (pod.getStatus() == null || pod.getStatus().getResourceClaimStatuses() == null) {
        continue;
      }
      String workload = workloadOf(pod);
      String podName =
          workload == null ? pod.getMetadata().getName() : ReplicaNames.anyReplicaOf(workload);
      for (PodResourceClaimStatus s : pod.getStatus().getResourceClaimStatuses()) {
        if (s.getResourceClaimName() != null) {
          assertMadeByKubeControllerManager(s.getResourceClaimName());
          names.put(s.getResourceClaimName(), ReplicaNames.templateClaim(podName, s.getName()));
        }
      }
    }
    List<String> lines = new ArrayList<>();
    for (ResourceClaim claim :
        client.resources(ResourceClaim.class).inNamespace(stack.namespace).list().getItems()) {
      String name = claim.getMetadata().getName();
      ResourceClaim asNamed =
          new ResourceClaimBuilder(claim)
              .withMetadata(
                  new ObjectMetaBuilder()
                      .withName(names.getOrDefault(name, name))
                      .withNamespace(exampleNamespace)
                      .build())
              .build();
      Summary.line(asNamed).ifPresent(lines::add);
    }
    return lines;
  }

  /**
   * The template claim was created by kube-controller-manager's resourceclaim controller, as on a
   * cluster, not by the claim-controller: the manager that owns its spec (managedFields are sorted
   * by operation and time, so the creator is not always the first entry).
   */
  private void assertMadeByKubeControllerManager(String claim) {
    ResourceClaim c =
        client.resources(ResourceClaim.class).inNamespace(stack.namespace).withName(claim).get();
    assertThat(c.getMetadata().getManagedFields())
        .as("who created claim %s", claim)
        .filteredOn(m -> m.getFieldsV1().getAdditionalProperties().containsKey("f:spec"))
        .extracting(ManagedFieldsEntry::getManager)
        .singleElement()
        .asString()
        .startsWith("kube-controller-manager");
  }

  /**
   * An object the example shows as the computeclass-bridge writes it: the bridge's is awaited and
   * must be the same (DeviceClass selectors, template spec).
   */
  private void awaitTheBridges(HasMetadata shown) {
    await()
        .atMost(BOUND)
        .untilAsserted(
            () -> {
              if (shown instanceof DeviceClass dc) {
                DeviceClass written = client.resource(dc).get();
                assertThat(written)
                    .as("the bridge's DeviceClass " + dc.getMetadata().getName())
                    .isNotNull();
                assertThat(written.getSpec().getSelectors()).isEqualTo(dc.getSpec().getSelectors());
              } else if (shown instanceof ResourceClaimTemplate t) {
                ResourceClaimTemplate written =
                    client
                        .resources(ResourceClaimTemplate.class)
                        .inNamespace(stack.namespace)
                        .withName(t.getMetadata().getName())
                        .get();
                assertThat(written)
                    .as("the bridge's template " + t.getMetadata().getName())
                    .isNotNull();
                assertThat(written.getSpec().getSpec()).isEqualTo(t.getSpec().getSpec());
              } else {
                throw new AssertionError("the bridge writes no " + shown.getKind());
              }
            });
  }

  /**
   * Every object of the example gone, and the classes it created: the workloads first (their
   * controllers would make their pods again), then the pods, templates and claims.
   */
  public static void cleanUp(Stack stack) {
    KubernetesClient client = stack.client;
    String ns = stack.namespace;
    var background = DeletionPropagation.BACKGROUND;
    client.apps().deployments().inNamespace(ns).withPropagationPolicy(background).delete();
    client.apps().statefulSets().inNamespace(ns).withPropagationPolicy(background).delete();
    client.apps().replicaSets().inNamespace(ns).withPropagationPolicy(background).delete();
    client.batch().v1().jobs().inNamespace(ns).withPropagationPolicy(background).delete();
    awaitGone(
        "workloads",
        () ->
            client.apps().replicaSets().inNamespace(ns).list().getItems().size()
                + client.apps().statefulSets().inNamespace(ns).list().getItems().size()
                + client.batch().v1().jobs().inNamespace(ns).list().getItems().size());
    if (client
            .apiextensions()
            .v1()
            .customResourceDefinitions()
            .withName("computeclasses.cloud.google.com")
            .get()
        != null) {
      client
          .genericKubernetesResources("cloud.google.com/v1", ExampleFolder.COMPUTE_CLASS)
          .delete();
    }
    client.pods().inNamespace(ns).delete();
    client.resources(ResourceClaimTemplate.class).inNamespace(ns).delete();
    awaitGone("pods", () -> client.pods().inNamespace(ns).list().getItems().size());
    client.resources(ResourceClaim.class).inNamespace(ns).delete();
    awaitGone(
        "claims",
        () -> client.resources(ResourceClaim.class).inNamespace(ns).list().getItems().size());
    client.resources(DeviceClass.class).withLabel(NodeRegistration.TEST_LABEL, ns).delete();
  }

  private static void awaitGone(String what, Supplier<Integer> left) {
    await().atMost(GONE).untilAsserted(() -> assertThat(left.get()).as("%s left", what).isZero());
  }
}
