package io.kdra.computeclassbridge.reconciler;

import static io.kdra.computeclassbridge.TestData.computeClass;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.fabric8.kubernetes.api.model.Condition;
import io.fabric8.kubernetes.api.model.GenericKubernetesResource;
import io.fabric8.kubernetes.api.model.apiextensions.v1.CustomResourceDefinitionBuilder;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.dsl.base.ResourceDefinitionContext;
import io.kdra.computeclassbridge.RetryOnConflict;
import io.kdra.computeclassbridge.model.ComputeClass;
import io.kdra.computeclassbridge.model.Priority;
import io.quarkus.test.junit.QuarkusTest;
import io.quarkus.test.junit.QuarkusTestProfile;
import io.quarkus.test.junit.TestProfile;
import io.quarkus.test.kubernetes.client.WithKubernetesTestServer;
import jakarta.inject.Inject;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import org.junit.jupiter.api.Test;

/**
 * Scale-out turned on, with Karpenter's NodePool CRD served: each ComputeClass gets weighted
 * NodePools that follow its edits and go with it.
 */
@QuarkusTest
@WithKubernetesTestServer(crud = true)
@TestProfile(ScaleOutReconcileTest.ScaleOutOn.class)
class ScaleOutReconcileTest {

  public static class ScaleOutOn implements QuarkusTestProfile {
    @Override
    public Map<String, String> getConfigOverrides() {
      return Map.of(
          "kdra.computeclass-bridge.scale-out.enabled",
          "true",
          "kdra.computeclass-bridge.scale-out.instance-types",
          "a100-40gb-x1=nvidia-tesla-a100:1,l4-x2=nvidia-l4:2");
    }
  }

  private static final Duration WAIT = Duration.ofMinutes(2);

  private static final ResourceDefinitionContext NODE_POOLS =
      new ResourceDefinitionContext.Builder()
          .withGroup("karpenter.sh")
          .withVersion("v1")
          .withKind("NodePool")
          .withPlural("nodepools")
          .withNamespaced(false)
          .build();

  @Inject KubernetesClient client;

  @Test
  void nodePoolsFollowTheComputeClassAndGoWithIt() {
    servedNodePools();
    ComputeClass cc =
        client
            .resource(
                computeClass(
                    "scale", Priority.gpu("nvidia-tesla-a100", 1), Priority.gpu("nvidia-l4", 2)))
            .create();
    await()
        .atMost(WAIT)
        .untilAsserted(
            () ->
                assertThat(weights())
                    .containsExactlyEntriesOf(
                        new TreeMap<>(
                            Map.of("scale-nvidia-l4-x2", 99, "scale-nvidia-tesla-a100-x1", 100))));
    assertThat(nodePool("scale-nvidia-l4-x2").getMetadata().getOwnerReferences())
        .singleElement()
        .satisfies(o -> assertThat(o.getUid()).isEqualTo(cc.getMetadata().getUid()));

    edit(
        Priority.gpu("nvidia-l4", 2),
        Priority.gpu("nvidia-tesla-a100", 1),
        Priority.gpu("nvidia-h100-80gb", 8));
    await()
        .atMost(WAIT)
        .untilAsserted(
            () -> {
              assertThat(weights())
                  .containsExactlyEntriesOf(
                      new TreeMap<>(
                          Map.of("scale-nvidia-l4-x2", 100, "scale-nvidia-tesla-a100-x1", 99)));
              assertThat(degraded().getStatus()).isEqualTo("True");
              assertThat(degraded().getMessage())
                  .contains(
                      "scale-out: spec.priorities[2]: no instance type has 8 x nvidia-h100-80gb");
            });

    client.resources(ComputeClass.class).withName("scale").delete();
    await().atMost(WAIT).untilAsserted(() -> assertThat(weights()).isEmpty());
  }

  private void servedNodePools() {
    client
        .apiextensions()
        .v1()
        .customResourceDefinitions()
        .resource(
            new CustomResourceDefinitionBuilder()
                .withNewMetadata()
                .withName("nodepools.karpenter.sh")
                .endMetadata()
                .withNewSpec()
                .withGroup("karpenter.sh")
                .withScope("Cluster")
                .withNewNames()
                .withKind("NodePool")
                .withPlural("nodepools")
                .withSingular("nodepool")
                .endNames()
                .addNewVersion()
                .withName("v1")
                .withServed(true)
                .withStorage(true)
                .endVersion()
                .endSpec()
                .build())
        .create();
  }

  private Map<String, Integer> weights() {
    Map<String, Integer> out = new TreeMap<>();
    for (GenericKubernetesResource np :
        client.genericKubernetesResources(NODE_POOLS).list().getItems()) {
      out.put(
          np.getMetadata().getName(),
          ((Number) ((Map<?, ?>) np.getAdditionalProperties().get("spec")).get("weight"))
              .intValue());
    }
    return out;
  }

  private GenericKubernetesResource nodePool(String name) {
    return client.genericKubernetesResources(NODE_POOLS).withName(name).get();
  }

  private Condition degraded() {
    return client
        .resources(ComputeClass.class)
        .withName("scale")
        .get()
        .getStatus()
        .getConditions()
        .stream()
        .filter(c -> "Degraded".equals(c.getType()))
        .findFirst()
        .orElseThrow();
  }

  private void edit(Priority... priorities) {
    RetryOnConflict.edit(
        client.resources(ComputeClass.class).withName("scale"),
        cc -> {
          cc.getSpec().setPriorities(new ArrayList<>(List.of(priorities)));
          return cc;
        });
  }
}
