package io.kdra.it;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.resource.v1.DeviceRequestAllocationResult;
import io.fabric8.kubernetes.api.model.resource.v1.ResourceClaim;
import io.fabric8.kubernetes.api.model.resource.v1.ResourceSlice;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.kdra.core.model.NewerFields;
import io.kdra.core.model.Semver;
import io.kdra.it.chart.KdraChart;
import io.kdra.it.controlplane.ControlPlane;
import io.kdra.it.nodes.RealNode;
import io.kdra.it.nodes.SimulatedNode;
import io.kdra.it.services.Dra;
import io.kdra.it.services.KdraStack;
import io.kdra.it.services.RealPods;
import io.kdra.it.services.Stack;
import io.kdra.it.support.ServiceProcess;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.OptionalLong;
import java.util.Set;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.condition.EnabledIf;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * Devices without a node step (issue 38, Kubernetes 1.37's {@code DRAOptionalNodeOperations},
 * alpha) on a real node ({@link RealNode}: the real kubelet and containerd; two L4s backed by two
 * device nodes of this machine): the driver declares {@code skip-node-operations: *}, the publisher
 * writes it on the node's slice, the claim-controller's allocator (the gate on, in {@code own}
 * mode) copies it into the allocation because the node's kubelet declares the feature, and the
 * kubelet then never calls the driver: the pod runs without the device's CDI edits (no device node,
 * no environment), and the driver's metrics, checkpoint and CDI directory show no prepare, nor an
 * unprepare after the pod is gone.
 *
 * <p>The stack has a control plane of its own ({@link KdraStack#withClusterFeatureGates}): the gate
 * is on in its kube-apiserver (else the field is dropped from slices and results) and in the
 * kubelet's configuration (else the kubelet neither declares the feature nor skips); the suite's
 * shared API server keeps its gates. The control, the same driver and node kind without the
 * setting, is {@link RealNodeIT} and {@link DeviceTaintRuleRealNodeIT}: there every claim is
 * prepared, seen by the same probes (the CDI spec, the device node and {@code KDRA_DEVICE_0} in the
 * container, the prepare metric, the checkpoint). Runs from 1.37 on, the first version with the
 * gate.
 */
@EnabledIf("gateKnown")
class SkipNodeOperationsRealNodeIT {

  private static final String NODE = "rn-s";
  private static final String GATE = "DRAOptionalNodeOperations";

  /** Device nodes of this machine standing in for the two simulated L4s' nodes. */
  private static final List<String> DEVICE_NODES = List.of("/dev/fuse", "/dev/vsock");

  @RegisterExtension
  static final KdraStack STACK =
      KdraStack.realNodes(
              SimulatedNode.l4sWithDeviceNodes(NODE, DEVICE_NODES.toArray(String[]::new)))
          .withClusterFeatureGates(Map.of(GATE, true))
          .withProperties(
              Map.of(
                  "kdra.claim-controller.allocator.feature-gates",
                  GATE + "=true",
                  "kdra.device-driver.skip-node-operations",
                  "*"));

  private static Stack stack;
  private static KubernetesClient client;

  /** The gate exists from 1.37 on; an API server or kubelet refuses an unknown one. */
  static boolean gateKnown() {
    return Semver.parse(ControlPlane.VERSION).compareTo(Semver.parse("1.37.0")) >= 0;
  }

  @BeforeAll
  static void slicesPublishedWithTheSkip() {
    stack = STACK.get();
    client = stack.client;
    await()
        .atMost(Duration.ofSeconds(60))
        .untilAsserted(
            () -> {
              assertThat(Dra.publishedDevices(client, NODE)).isEqualTo(2);
              // kept by this API server (its gate on), not dropped as the shared one would
              assertThat(
                      client.resources(ResourceSlice.class).list().getItems().stream()
                          .filter(s -> Stack.DRIVER.equals(s.getSpec().getDriver()))
                          .filter(s -> NODE.equals(s.getSpec().getNodeName()))
                          .filter(s -> !s.getSpec().getDevices().isEmpty())
                          .map(s -> NewerFields.skipNodeOperations(s.getSpec()))
                          .toList())
                  .isNotEmpty()
                  .allSatisfy(ops -> assertThat(ops).containsExactly("*"));
            });
  }

  @Test
  void aDeviceWithoutANodeStepRunsItsPodWithoutTheDriverAndLeavesNothing() throws Exception {
    // the kubelet with the gate on declares the feature, which the allocator requires
    assertThat(NewerFields.declaredFeatures(client.nodes().withName(NODE).get())).contains(GATE);
    // the series exist from the driver's start, at zero: a missing series cannot pass for none
    assertThat(driverClaimOperations("prepare")).hasValue(0);
    assertThat(driverClaimOperations("unprepare")).hasValue(0);

    String ns = stack.namespace;
    ResourceClaim claim =
        client.resource(Dra.claim(ns, "no-node-step", KdraChart.GPU_CLASS, 1)).create();
    Pod pod =
        client
            .resource(RealPods.showingDevices(Dra.podWithClaim(ns, "runner", "no-node-step")))
            .create();
    List<String> log = RealPods.awaitListed(stack, pod);
    assertThat(Dra.get(client, pod).getSpec().getNodeName()).isEqualTo(NODE);

    ResourceClaim allocated = client.resource(claim).get();
    List<DeviceRequestAllocationResult> results =
        allocated.getStatus().getAllocation().getDevices().getResults();
    assertThat(results)
        .singleElement()
        .satisfies(
            r -> {
              assertThat(r.getDriver()).isEqualTo(Stack.DRIVER);
              assertThat(NewerFields.skipNodeOperations(r)).containsExactly("*");
            });

    // no NodePrepareResources: the container has none of the CDI spec's edits ...
    assertThat(log)
        .noneMatch(l -> l.startsWith("KDRA_"))
        .doesNotContain(deviceNodeName(0), deviceNodeName(1));
    // ... and the driver never saw the claim
    assertThat(RealPods.spec(stack, NODE, allocated)).doesNotExist();
    assertThat(RealPods.specFiles(stack, NODE)).isEmpty();
    assertThat(checkpointClaims()).isEmpty();
    assertThat(driverClaimOperations("prepare")).hasValue(0);

    client.resource(Dra.get(client, pod)).delete();
    client.resources(ResourceClaim.class).inNamespace(ns).withName("no-node-step").delete();
    await()
        .atMost(RealPods.POD_TIMEOUT)
        .untilAsserted(
            () -> {
              assertThat(client.pods().inNamespace(ns).list().getItems()).isEmpty();
              assertThat(client.resources(ResourceClaim.class).inNamespace(ns).list().getItems())
                  .isEmpty();
            });
    // no NodeUnprepareResources either (the kubelet makes that call before it lets the pod's
    // object go), and nothing on the node
    assertThat(driverClaimOperations("unprepare")).hasValue(0);
    assertThat(driverClaimOperations("prepare")).hasValue(0);
    assertThat(RealPods.specFiles(stack, NODE)).isEmpty();
    assertThat(checkpointClaims()).isEmpty();
  }

  /**
   * The claims the node's driver answered for {@code operation} (prepare, unprepare), successes and
   * errors, from its metrics; empty when the driver publishes no such series.
   */
  private static OptionalLong driverClaimOperations(String operation) throws Exception {
    ServiceProcess driver = stack.services.process("device-driver-" + NODE);
    String body =
        HttpClient.newHttpClient()
            .send(
                HttpRequest.newBuilder(
                        URI.create("http://127.0.0.1:" + driver.httpPort + "/q/metrics"))
                    .build(),
                HttpResponse.BodyHandlers.ofString())
            .body();
    List<Long> counts =
        body.lines()
            .filter(l -> l.startsWith("kdra_driver_claim_operation_seconds_count{"))
            .filter(l -> l.contains("operation=\"" + operation + "\""))
            .map(l -> (long) Double.parseDouble(l.substring(l.lastIndexOf(' ') + 1)))
            .toList();
    return counts.isEmpty()
        ? OptionalLong.empty()
        : OptionalLong.of(counts.stream().mapToLong(Long::longValue).sum());
  }

  /** UIDs of the claims in the driver's checkpoint. */
  private static Set<String> checkpointClaims() {
    return stack.nodes.checkpointClaims(NODE);
  }

  /** The name {@code ls /dev} prints for the device node of GPU {@code index}. */
  private static String deviceNodeName(int index) {
    return Path.of(DEVICE_NODES.get(index)).getFileName().toString();
  }
}
