package io.kdra.it;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.PodBuilder;
import io.fabric8.kubernetes.api.model.Quantity;
import io.fabric8.kubernetes.api.model.resource.v1.DeviceClassBuilder;
import io.fabric8.kubernetes.api.model.resource.v1.ResourceClaim;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.kdra.it.controlplane.ControlPlane;
import io.kdra.it.nodes.RealNode;
import io.kdra.it.nodes.SimulatedNode;
import io.kdra.it.services.Dra;
import io.kdra.it.services.KdraStack;
import io.kdra.it.services.RealPods;
import io.kdra.it.services.Stack;
import java.time.Duration;
import java.util.List;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * Extended resources served by DRA on a real node (the real kubelet 1.37 and containerd, {@link
 * RealNode}; two L4s): a device-plugin-style pod ({@code resources.limits: {gpu.kdra.io/gpu: 2}},
 * no resource claims) scheduled by our controller runs, and its container sees both devices through
 * the CDI edits of the claim the kubelet found in {@code status.extendedResourceClaimStatus}.
 * Deleted, the pod's claim goes and the driver's CDI spec with it.
 */
@ExtendWith(ControlPlane.class)
class ExtendedResourceRealNodeIT {

  private static final String NODE = "rn-x";
  private static final String RESOURCE = "gpu.kdra.io/gpu";

  @RegisterExtension
  static final KdraStack STACK =
      KdraStack.realNodes(SimulatedNode.l4sWithDeviceNodes(NODE, "/dev/fuse", "/dev/vsock"));

  private static Stack stack;
  private static KubernetesClient client;

  @BeforeAll
  static void slicesPublished() {
    stack = STACK.get();
    client = stack.client;
    stack.createClusterScoped(
        new DeviceClassBuilder(Dra.gpuClass("gpu-extended-rn", null))
            .editSpec()
            .withExtendedResourceName(RESOURCE)
            .endSpec()
            .build());
    await()
        .atMost(Duration.ofSeconds(60))
        .untilAsserted(() -> assertThat(Dra.publishedDevices(client, NODE)).isEqualTo(2));
  }

  @Test
  void theContainerOfADevicePluginStylePodSeesBothDevicesThroughCdi() {
    String ns = stack.namespace;
    Pod pod =
        RealPods.showingDevices(
            new PodBuilder()
                .withNewMetadata()
                .withName("train")
                .withNamespace(ns)
                .endMetadata()
                .withNewSpec()
                .withSchedulerName(Stack.SCHEDULER)
                .addNewContainer()
                .withName("app")
                .withNewResources()
                .addToLimits(RESOURCE, new Quantity("2"))
                .endResources()
                .endContainer()
                .endSpec()
                .build());
    Pod created = client.resource(pod).create();

    List<String> log = RealPods.awaitListed(stack, created);
    Pod running = Dra.get(client, created);
    assertThat(running.getSpec().getResourceClaims()).isEmpty();
    String claimName = running.getStatus().getExtendedResourceClaimStatus().getResourceClaimName();
    ResourceClaim claim =
        client.resources(ResourceClaim.class).inNamespace(ns).withName(claimName).get();
    assertThat(Dra.devices(claim)).containsExactlyInAnyOrder(NODE + "/gpu-0", NODE + "/gpu-1");
    assertThat(log)
        .anyMatch(l -> l.startsWith("KDRA_DEVICE_0=gpu-"))
        .anyMatch(l -> l.startsWith("KDRA_DEVICE_1=gpu-"));
    assertThat(log).contains("fuse", "vsock");
    assertThat(RealPods.spec(stack, NODE, claim)).exists();

    client.resource(running).delete();
    await()
        .atMost(RealPods.POD_TIMEOUT)
        .untilAsserted(
            () -> {
              assertThat(client.pods().inNamespace(ns).list().getItems()).isEmpty();
              assertThat(client.resources(ResourceClaim.class).inNamespace(ns).list().getItems())
                  .isEmpty();
              assertThat(RealPods.specFiles(stack, NODE)).isEmpty();
            });
  }
}
