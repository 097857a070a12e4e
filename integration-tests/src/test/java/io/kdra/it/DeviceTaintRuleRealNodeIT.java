package io.kdra.it;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.resource.v1.ResourceClaim;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.kdra.it.chart.KdraChart;
import io.kdra.it.controlplane.ControlPlane;
import io.kdra.it.nodes.RealNode;
import io.kdra.it.nodes.SimulatedNode;
import io.kdra.it.services.Dra;
import io.kdra.it.services.KdraStack;
import io.kdra.it.services.MaintenanceRule;
import io.kdra.it.services.RealPods;
import io.kdra.it.services.Stack;
import java.time.Duration;
import java.util.List;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * A DeviceTaintRule's maintenance story on a real node (the real kubelet and containerd, {@link
 * RealNode}; two L4s), the claim-controller in {@code own} mode: a running pod holds one device and
 * its container reads the device's attributes from the device-metadata file; a NoSchedule rule on
 * the node's pool keeps a second pod waiting (its message names the rule) while the first runs on;
 * the rule turned NoExecute evicts the first pod, whose device the real kubelet has our driver
 * unprepare, and the rule's status says so; deleting the rule lets the waiting pod run with a
 * device. Runs only from 1.37 on, the first version to serve the kind as v1.
 */
@ExtendWith(ControlPlane.class)
class DeviceTaintRuleRealNodeIT {

  private static final String NODE = "rn-t";
  private static final String RULE = "rn-t-maintenance";

  /** Where upstream's drivers (and ours) mount the metadata of claim "held", request "gpu". */
  private static final String HELD_METADATA =
      "/var/run/kubernetes.io/dra-device-attributes/resourceclaims/held/gpu/"
          + Stack.DRIVER
          + "-metadata.json";

  @RegisterExtension
  static final KdraStack STACK =
      KdraStack.realNodes(SimulatedNode.l4sWithDeviceNodes(NODE, "/dev/fuse", "/dev/vsock"));

  private static Stack stack;
  private static KubernetesClient client;
  private static MaintenanceRule rule;

  @BeforeAll
  static void slicesPublished() {
    MaintenanceRule.assumeServed();
    stack = STACK.get();
    client = stack.client;
    rule = new MaintenanceRule(client, RULE, NODE);
    await()
        .atMost(Duration.ofSeconds(60))
        .untilAsserted(() -> assertThat(Dra.publishedDevices(client, NODE)).isEqualTo(2));
  }

  /** The rule is cluster-wide; it selects only this class's pool, but must not outlive it. */
  @AfterAll
  static void ruleGone() {
    if (rule != null) {
      rule.delete();
    }
  }

  @Test
  void taintNoAllocationEvictionUntaintOnARealNode() {
    String ns = stack.namespace;
    ResourceClaim held = client.resource(Dra.claim(ns, "held", KdraChart.GPU_CLASS, 1)).create();
    Pod holder = client.resource(showingMetadata(Dra.podWithClaim(ns, "holder", "held"))).create();
    List<String> log = RealPods.awaitListed(stack, holder);
    ResourceClaim allocated = client.resource(held).get();
    String device = Dra.devices(allocated).get(0).substring(NODE.length() + 1);
    // the container reads its device's attributes as upstream's drivers publish them
    assertThat(log)
        .anyMatch(l -> l.contains("\"apiVersion\": \"metadata.resource.k8s.io/v1beta1\""))
        .anyMatch(l -> l.contains("\"name\": \"" + device + "\""))
        .anyMatch(l -> l.contains("\"string\": \"NVIDIA L4\""));
    assertThat(RealPods.spec(stack, NODE, allocated)).exists();
    // the 1.37 kubelet chose the device-health API v1 of the two the driver lists
    java.nio.file.Path driverLog = stack.services.process("device-driver-" + NODE).log;
    await()
        .atMost(Duration.ofSeconds(60))
        .untilAsserted(
            () ->
                assertThat(driverLog)
                    .content()
                    .contains("the kubelet opened a device-health stream (v1)")
                    .doesNotContain("device-health stream (v1alpha1)"));

    rule.create("NoSchedule");
    Pod waiting =
        client
            .resource(
                RealPods.showingDevices(
                    Dra.podWithClaim(
                        ns,
                        "waiter",
                        client
                            .resource(Dra.claim(ns, "waiting", KdraChart.GPU_CLASS, 1))
                            .create()
                            .getMetadata()
                            .getName())))
            .create();
    rule.awaitKeepsOut(waiting, RealPods.POD_TIMEOUT);
    // NoSchedule leaves the running pod alone
    Pod stillRunning = Dra.get(client, holder);
    assertThat(stillRunning.getMetadata().getDeletionTimestamp()).isNull();
    assertThat(stillRunning.getStatus().getPhase()).isEqualTo("Running");

    // NoExecute: the holder is evicted, the kubelet has the driver unprepare its device
    rule.turnNoExecute();
    await()
        .atMost(RealPods.POD_TIMEOUT)
        .untilAsserted(
            () -> {
              assertThat(client.resource(holder).get()).isNull();
              assertThat(RealPods.spec(stack, NODE, allocated)).doesNotExist();
            });
    rule.awaitOnePodEvicted();
    assertThat(Dra.get(client, waiting).getSpec().getNodeName()).isNull();

    // untaint: the waiting pod runs with a device
    rule.delete();
    List<String> waiterLog = RealPods.awaitListed(stack, waiting);
    assertThat(Dra.get(client, waiting).getSpec().getNodeName()).isEqualTo(NODE);
    assertThat(waiterLog).anyMatch(l -> l.matches("KDRA_DEVICE_0=gpu-[01]"));

    client.resource(Dra.get(client, waiting)).delete();
    client.resources(ResourceClaim.class).inNamespace(ns).delete();
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

  /** A busybox pod that prints its claim's device-metadata file, then {@link RealPods#LISTED}. */
  private static Pod showingMetadata(Pod pod) {
    Pod p = RealPods.showingDevices(pod);
    p.getSpec()
        .getContainers()
        .get(0)
        .setCommand(
            List.of(
                "sh",
                "-c",
                "cat "
                    + HELD_METADATA
                    + "; echo; echo "
                    + RealPods.LISTED
                    + "; exec sleep 2147483647"));
    return p;
  }
}
