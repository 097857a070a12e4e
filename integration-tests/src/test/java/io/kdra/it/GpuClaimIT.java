package io.kdra.it;

import static io.kdra.it.SimulatedNode.oneA100;
import static io.kdra.it.SimulatedNode.twoL4s;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.resource.v1.ResourceClaim;
import io.fabric8.kubernetes.client.KubernetesClient;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * Scenario 1: a DeviceClass for GPUs with at least 40Gi and a pod with a claim template for one.
 * Only node-b's A100 qualifies: the claim is allocated there, the pod bound there, and only
 * node-b's driver writes a CDI spec.
 */
@ExtendWith(ControlPlane.class)
class GpuClaimIT {

  @RegisterExtension
  static final KdraStack STACK = KdraStack.nodes(twoL4s("node-a"), oneA100("node-b"));

  private static Stack stack;
  private static KubernetesClient client;

  @BeforeAll
  static void slicesPublished() {
    stack = STACK.get();
    client = stack.client;
    await().atMost(Duration.ofSeconds(60)).untilAsserted(() -> {
      assertThat(Dra.publishedDevices(client, "node-a")).isEqualTo(2);
      assertThat(Dra.publishedDevices(client, "node-b")).isEqualTo(1);
    });
  }

  @Test
  void aGpuWithAtLeast40GiIsAllocatedOnTheNodeWithTheA100() throws Exception {
    String ns = stack.namespace;
    stack.createClusterScoped(Dra.gpuClass("gpu-40gi", "device.capacity[\"" + Stack.DRIVER
        + "\"].memory.compareTo(quantity(\"40Gi\")) >= 0"));
    client.resource(Dra.template(ns, "big-gpu", "gpu-40gi", 1)).create();
    Pod pod = client.resource(Dra.podWithTemplate(ns, "trainer", "big-gpu")).create();

    await().atMost(Duration.ofSeconds(60)).untilAsserted(() ->
        assertThat(Dra.get(client, pod).getSpec().getNodeName()).isEqualTo("node-b"));
    ResourceClaim claim = Dra.claimOf(client, pod, "gpu");
    assertThat(Dra.devices(claim)).containsExactly("node-b/gpu-0");
    assertThat(claim.getStatus().getReservedFor()).extracting(r -> r.getName())
        .containsExactly("trainer");

    String uid = claim.getMetadata().getUid();
    await().atMost(Duration.ofSeconds(30)).untilAsserted(() ->
        assertThat(stack.kubelet("node-b").prepared(pod)).isNotNull());
    assertThat(stack.kubelet("node-b").prepared(pod).cdiIds())
        .containsExactly("k8s.gpu.kdra.io/claim=" + uid + "-gpu-0");
    Path spec = stack.cdiDir("node-b").resolve("k8s.gpu.kdra.io-claim_" + uid + ".json");
    assertThat(spec).exists();
    assertThat(Files.readString(spec)).contains(uid + "-gpu-0");
    assertThat(cdiFiles("node-a")).isEmpty();
    assertThat(stack.kubelet("node-a").prepared()).isEmpty();
  }

  private static List<Path> cdiFiles(String node) throws Exception {
    Path dir = stack.cdiDir(node);
    if (!Files.isDirectory(dir)) {
      return List.of();
    }
    try (var files = Files.list(dir)) {
      return files.filter(f -> f.getFileName().toString().endsWith(".json")).toList();
    }
  }
}
