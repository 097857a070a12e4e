package io.kdra.it;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.PodSpec;
import io.fabric8.kubernetes.api.model.apps.Deployment;
import io.fabric8.kubernetes.api.model.resource.v1.ResourceClaim;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.kdra.it.chart.KdraChart;
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
 * The seed's Deployment story on a complete control plane and a real node (the real kubelet and
 * containerd, {@link RealNode}; two L4s): a Deployment whose pods do not name our scheduler and
 * take a device each through a ResourceClaimTemplate. kube-controller-manager creates the
 * ReplicaSet, the pods and their claims; kube-scheduler allocates the claims from our driver's
 * ResourceSlices and binds the pods; the real kubelet has our driver prepare them and starts the
 * containers, which see their devices; the Deployment becomes available. Scaled to zero, the pods
 * go, the claims are deleted and the driver's CDI specs are removed.
 */
@ExtendWith(ControlPlane.class)
class FullControlPlaneRealNodeIT {

  private static final String NODE = "rn-f";

  @RegisterExtension
  static final KdraStack STACK =
      KdraStack.realNodes(SimulatedNode.l4sWithDeviceNodes(NODE, "/dev/fuse", "/dev/vsock"))
          .fullControlPlane();

  private static Stack stack;
  private static KubernetesClient client;

  @BeforeAll
  static void slicesPublished() {
    stack = STACK.get();
    client = stack.client;
    await()
        .atMost(Duration.ofSeconds(60))
        .untilAsserted(() -> assertThat(Dra.publishedDevices(client, NODE)).isEqualTo(2));
  }

  @Test
  void aDeploymentScheduledByKubeSchedulerRunsWithADevicePerReplicaAndScalingDownFreesThem() {
    String ns = stack.namespace;
    client.resource(Dra.template(ns, "one-gpu", KdraChart.GPU_CLASS, 1)).create();
    Pod template = RealPods.showingDevices(Dra.podWithTemplate(ns, "x", "one-gpu"));
    PodSpec spec = template.getSpec();
    spec.setSchedulerName(null);
    Deployment deployment = Dra.deployment(ns, "trainer", 2, spec);
    client.resource(deployment).create();

    await()
        .atMost(RealPods.POD_TIMEOUT)
        .untilAsserted(
            () ->
                assertThat(
                        client
                            .apps()
                            .deployments()
                            .inNamespace(ns)
                            .withName("trainer")
                            .get()
                            .getStatus()
                            .getAvailableReplicas())
                    .isEqualTo(2));
    List<Pod> pods = client.pods().inNamespace(ns).withLabel("app", "trainer").list().getItems();
    assertThat(pods).hasSize(2);
    List<String> devices =
        pods.stream()
            .flatMap(
                p -> {
                  assertThat(p.getSpec().getSchedulerName()).isEqualTo("default-scheduler");
                  assertThat(p.getSpec().getNodeName()).isEqualTo(NODE);
                  ResourceClaim claim = Dra.claimOf(client, p, "gpu");
                  assertThat(claim.getStatus().getReservedFor())
                      .extracting(r -> r.getUid())
                      .containsExactly(p.getMetadata().getUid());
                  List<String> log = RealPods.awaitListed(stack, p);
                  assertThat(log).contains("KDRA_DEVICE_0=gpu-" + RealPods.deviceIndex(claim));
                  return Dra.devices(claim).stream();
                })
            .toList();
    assertThat(devices).containsExactlyInAnyOrder(NODE + "/gpu-0", NODE + "/gpu-1");
    assertThat(RealPods.specFiles(stack, NODE)).hasSize(2);

    client.apps().deployments().inNamespace(ns).withName("trainer").scale(0);
    await()
        .atMost(RealPods.POD_TIMEOUT)
        .untilAsserted(
            () -> {
              assertThat(
                      client.pods().inNamespace(ns).withLabel("app", "trainer").list().getItems())
                  .isEmpty();
              assertThat(client.resources(ResourceClaim.class).inNamespace(ns).list().getItems())
                  .isEmpty();
              assertThat(RealPods.specFiles(stack, NODE)).isEmpty();
            });
  }
}
