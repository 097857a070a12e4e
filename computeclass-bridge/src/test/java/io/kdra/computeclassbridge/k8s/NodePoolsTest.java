package io.kdra.computeclassbridge.k8s;

import static io.kdra.computeclassbridge.TestData.computeClass;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.catchThrowableOfType;

import io.fabric8.kubernetes.api.model.GenericKubernetesResource;
import io.fabric8.kubernetes.api.model.GenericKubernetesResourceBuilder;
import io.fabric8.kubernetes.api.model.apiextensions.v1.CustomResourceDefinitionBuilder;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientException;
import io.fabric8.kubernetes.client.server.mock.EnableKubernetesMockClient;
import io.kdra.computeclassbridge.model.ComputeClass;
import io.kdra.computeclassbridge.model.Priority;
import io.kdra.computeclassbridge.scaleout.InstanceType;
import io.kdra.computeclassbridge.scaleout.NodePoolMapper;
import io.kdra.computeclassbridge.scaleout.ScaleOutSettings;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import org.junit.jupiter.api.Test;

/** The NodePool writer against the fabric8 mock API server (CRUD mode, no garbage collector). */
@EnableKubernetesMockClient(crud = true)
class NodePoolsTest {

  KubernetesClient client;

  private static final NodePoolMapper MAPPER =
      new NodePoolMapper(
          new ScaleOutSettings(
              InstanceType.parse(List.of("a100-40gb-x1=nvidia-tesla-a100:1", "l4-x2=nvidia-l4:2")),
              "karpenter.kwok.sh",
              "KWOKNodeClass",
              "default"));

  private static final ComputeClass SEED =
      computeClass("seed", Priority.gpu("nvidia-tesla-a100", 1), Priority.gpu("nvidia-l4", 2));

  private List<GenericKubernetesResource> live() {
    return client.genericKubernetesResources(NodePools.NODE_POOLS).list().getItems();
  }

  private GenericKubernetesResource live(String name) {
    return client.genericKubernetesResources(NodePools.NODE_POOLS).withName(name).get();
  }

  private static int weight(GenericKubernetesResource np) {
    return ((Number) ((Map<?, ?>) np.getAdditionalProperties().get("spec")).get("weight"))
        .intValue();
  }

  @Test
  void createsTheNodePoolsThenWritesNothingMore() {
    NodePools nodePools = new NodePools(client);
    ApplyReport first = nodePools.apply(SEED, MAPPER.plan(SEED).nodePools());
    assertThat(first.changes())
        .containsExactly(
            "created NodePool seed-nvidia-l4-x2", "created NodePool seed-nvidia-tesla-a100-x1");
    assertThat(live("seed-nvidia-tesla-a100-x1")).extracting(NodePoolsTest::weight).isEqualTo(100);
    assertThat(live("seed-nvidia-l4-x2")).extracting(NodePoolsTest::weight).isEqualTo(99);

    assertThat(nodePools.apply(SEED, MAPPER.plan(SEED).nodePools()).changes()).isEmpty();
  }

  @Test
  void aReorderUpdatesWeightsKeepingWhatOthersAdded() {
    NodePools nodePools = new NodePools(client);
    nodePools.apply(SEED, MAPPER.plan(SEED).nodePools());
    client
        .genericKubernetesResources(NodePools.NODE_POOLS)
        .withName("seed-nvidia-l4-x2")
        .edit(
            np ->
                new GenericKubernetesResourceBuilder(np)
                    .editMetadata()
                    .addToAnnotations("karpenter.sh/nodepool-hash", "123")
                    .endMetadata()
                    .build());

    ComputeClass reordered =
        computeClass("seed", Priority.gpu("nvidia-l4", 2), Priority.gpu("nvidia-tesla-a100", 1));
    ApplyReport report = nodePools.apply(reordered, MAPPER.plan(reordered).nodePools());

    assertThat(report.changes())
        .containsExactlyInAnyOrder(
            "updated NodePool seed-nvidia-l4-x2", "updated NodePool seed-nvidia-tesla-a100-x1");
    assertThat(live("seed-nvidia-l4-x2")).extracting(NodePoolsTest::weight).isEqualTo(100);
    assertThat(live("seed-nvidia-tesla-a100-x1")).extracting(NodePoolsTest::weight).isEqualTo(99);
    assertThat(live("seed-nvidia-l4-x2").getMetadata().getAnnotations())
        .containsEntry("karpenter.sh/nodepool-hash", "123");
  }

  @Test
  void aPriorityRemovedDeletesItsNodePoolAndAnEmptySetDeletesAll() {
    NodePools nodePools = new NodePools(client);
    nodePools.apply(SEED, MAPPER.plan(SEED).nodePools());
    ComputeClass shorter = computeClass("seed", Priority.gpu("nvidia-l4", 2));
    assertThat(nodePools.apply(shorter, MAPPER.plan(shorter).nodePools()).changes())
        .containsExactly(
            "updated NodePool seed-nvidia-l4-x2", "deleted NodePool seed-nvidia-tesla-a100-x1");

    assertThat(nodePools.apply(shorter, List.of()).changes())
        .containsExactly("deleted NodePool seed-nvidia-l4-x2");
    assertThat(live()).isEmpty();
  }

  @Test
  void aNodePoolOfTheSameNameNotMadeByTheBridgeIsAConflictAndLeftAlone() {
    client
        .genericKubernetesResources(NodePools.NODE_POOLS)
        .resource(
            new GenericKubernetesResourceBuilder()
                .withApiVersion("karpenter.sh/v1")
                .withKind("NodePool")
                .withNewMetadata()
                .withName("seed-nvidia-l4-x2")
                .endMetadata()
                .withAdditionalProperties(Map.of("spec", Map.of("weight", 7)))
                .build())
        .create();
    ApplyReport report = new NodePools(client).apply(SEED, MAPPER.plan(SEED).nodePools());
    assertThat(report.conflicts())
        .containsExactly(
            "NodePool seed-nvidia-l4-x2 already exists and was not generated by the bridge;"
                + " left as it is");
    assertThat(live("seed-nvidia-l4-x2")).extracting(NodePoolsTest::weight).isEqualTo(7);
    assertThat(new NodePools(client).apply(SEED, List.of()).changes())
        .containsExactly("deleted NodePool seed-nvidia-tesla-a100-x1");
    assertThat(live("seed-nvidia-l4-x2")).isNotNull();
  }

  /** The update carries the version it read: a write in between makes it fail, not overwrite. */
  @Test
  void anUpdateBasedOnAStaleReadConflicts() {
    NodePools nodePools = new NodePools(client);
    nodePools.apply(SEED, MAPPER.plan(SEED).nodePools());
    GenericKubernetesResource read = live("seed-nvidia-l4-x2");
    client
        .genericKubernetesResources(NodePools.NODE_POOLS)
        .withName("seed-nvidia-l4-x2")
        .edit(
            np ->
                new GenericKubernetesResourceBuilder(np)
                    .editMetadata()
                    .addToAnnotations("meanwhile", "x")
                    .endMetadata()
                    .build());
    ComputeClass reordered =
        computeClass("seed", Priority.gpu("nvidia-l4", 2), Priority.gpu("nvidia-tesla-a100", 1));
    GenericKubernetesResource desired =
        MAPPER.plan(reordered).nodePools().stream()
            .filter(np -> np.getMetadata().getName().equals("seed-nvidia-l4-x2"))
            .findFirst()
            .orElseThrow();

    KubernetesClientException e =
        catchThrowableOfType(
            KubernetesClientException.class,
            () ->
                client
                    .genericKubernetesResources(NodePools.NODE_POOLS)
                    .resource(NodePools.updated(read, desired))
                    .update());
    assertThat(e.getCode()).isEqualTo(409);
  }

  @Test
  void servedOnlyOnceTheApiServerListsNodePools() {
    NodePools nodePools = new NodePools(client);
    assertThat(nodePools.served()).isFalse();
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
    assertThat(nodePools.served()).isTrue();
  }

  @Test
  void turnedOffItWritesNothing() {
    ScaleOut off = new ScaleOut(Optional.empty(), new NodePools(client));
    assertThat(off.apply(SEED).changes()).isEmpty();
    assertThat(live()).isEmpty();
  }

  @Test
  void onWithoutTheCrdItWritesNothing() {
    ScaleOut on = new ScaleOut(Optional.of(MAPPER), new NodePools(client));
    assertThat(on.apply(SEED).changes()).isEmpty();
    assertThat(live()).isEmpty();
  }
}
