package io.kdra.it;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.resource.v1.ResourceClaim;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.kdra.it.chart.KdraChart;
import io.kdra.it.controlplane.ControlPlane;
import io.kdra.it.nodes.SimulatedNode;
import io.kdra.it.services.Dra;
import io.kdra.it.services.KdraStack;
import io.kdra.it.services.RealPods;
import io.kdra.it.services.Stack;
import io.kdra.it.support.ServiceProcess;
import java.io.IOException;
import java.nio.file.Files;
import java.time.Duration;
import java.util.List;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * What a user meets on one Kubernetes version, {@link ControlPlane#VERSION}: its kube-apiserver and
 * a real node with its kubelet (the same minor, as the skew policy allows). The version matrix runs
 * this class once per supported minor, 1.34 on (integration-tests/pom.xml: a failsafe run of its
 * own per version; docs/dev/testing.md, "The version matrix").
 *
 * <p>Install: the chart's RBAC, classes and CRD, the four services, slices published. Allocate: a
 * pod's claim from a template, allocated by the claim-controller, the pod bound. Prepare: the
 * kubelet has our driver prepare the device; the container sees it. Clean up: the pod deleted, its
 * claim and CDI spec are gone. Throughout, no service fails: each stays up and ready, and none logs
 * an ERROR (what a service does with an API the server lacks shows up there first).
 */
@ExtendWith(ControlPlane.class)
class VersionSmokeIT {

  private static final String NODE = "rn-v";

  @RegisterExtension
  static final KdraStack STACK =
      KdraStack.realNodes(SimulatedNode.l4sWithDeviceNodes(NODE, "/dev/fuse", "/dev/vsock"))
          .named("VersionSmokeIT-" + ControlPlane.VERSION);

  private static final Pattern ERROR_LINE = Pattern.compile("^\\S+ \\S+ ERROR .*");

  @Test
  void installAllocatePrepareAndCleanUpOnThisVersion() throws IOException {
    Stack stack = STACK.get();
    KubernetesClient client = stack.client;
    String ns = stack.namespace;
    assertThat(client.getKubernetesVersion().getGitVersion())
        .as("the API server's version")
        .isEqualTo("v" + ControlPlane.VERSION);
    assertThat(client.nodes().withName(NODE).get().getStatus().getNodeInfo().getKubeletVersion())
        .as("the kubelet's version")
        .isEqualTo("v" + ControlPlane.VERSION);

    // install
    await()
        .atMost(Duration.ofSeconds(60))
        .untilAsserted(() -> assertThat(Dra.publishedDevices(client, NODE)).isEqualTo(2));

    // allocate and prepare
    client.resource(Dra.template(ns, "one-gpu", KdraChart.GPU_CLASS, 1)).create();
    Pod pod =
        client
            .resource(RealPods.showingDevices(Dra.podWithTemplate(ns, "smoke", "one-gpu")))
            .create();
    List<String> log = RealPods.awaitListed(stack, pod);
    ResourceClaim claim = Dra.claimOf(client, pod, "gpu");
    assertThat(Dra.get(client, pod).getSpec().getNodeName()).isEqualTo(NODE);
    assertThat(claim.getStatus().getReservedFor())
        .extracting(r -> r.getUid())
        .containsExactly(pod.getMetadata().getUid());
    int device = RealPods.deviceIndex(claim);
    assertThat(log)
        .contains(
            "KDRA_DEVICE_0=gpu-" + device,
            "SIMULATED_GPU_UUID=" + SimulatedNode.uuid(NODE, device));
    assertThat(RealPods.specFiles(stack, NODE))
        .containsExactly(RealPods.spec(stack, NODE, claim).getFileName().toString());

    // clean up
    client.resource(pod).delete();
    await()
        .atMost(RealPods.POD_TIMEOUT)
        .untilAsserted(
            () -> {
              assertThat(client.pods().inNamespace(ns).list().getItems()).isEmpty();
              assertThat(client.resources(ResourceClaim.class).inNamespace(ns).list().getItems())
                  .isEmpty();
              assertThat(RealPods.specFiles(stack, NODE)).isEmpty();
            });

    for (ServiceProcess service : stack.services.processList()) {
      assertThat(service.alive()).as(service.name + " runs").isTrue();
      assertThat(service.ready()).as(service.name + " is ready").isTrue();
      assertThat(
              Files.readAllLines(service.log).stream().filter(l -> ERROR_LINE.matcher(l).matches()))
          .as(service.name + "'s ERROR lines on Kubernetes " + ControlPlane.VERSION)
          .isEmpty();
    }
  }
}
