package io.kdra.it;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.resource.v1.ResourceClaim;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.kdra.it.controlplane.ControlPlane;
import io.kdra.it.nodes.RealNode;
import io.kdra.it.nodes.SimulatedNode;
import io.kdra.it.services.Dra;
import io.kdra.it.services.KdraStack;
import io.kdra.it.services.RealPods;
import io.kdra.it.services.Stack;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * The real kubelet ({@link RealNode}) restarts while one pod with a prepared claim runs and while
 * the driver holds another claim's NodePrepareResources call ({@code
 * kdra.device-driver.test-only.prepare-delay}: between the claim's CDI spec and its checkpoint
 * entry). The kubelet's call is cut, the driver finishes the preparation once, the restarted
 * kubelet registers the plugin again and prepares the second pod's claim from the driver's
 * checkpoint (the same spec): the second pod runs with the other device, the first keeps its
 * container, and once both are deleted no spec or checkpoint entry is left. {@link RealNodeIT}
 * restarts the kubelet with no call in flight.
 */
@ExtendWith(ControlPlane.class)
class KubeletRestartRealNodeIT {

  private static final String NODE = "rn-k";
  private static final String CLASS = "restart-l4";

  /** Device nodes of this machine standing in for the two simulated L4s' nodes. */
  private static final List<String> DEVICE_NODES = List.of("/dev/fuse", "/dev/vsock");

  /** Long enough to see the spec and stop the kubelet while the call is held. */
  private static final Duration PREPARE_DELAY = Duration.ofSeconds(8);

  @RegisterExtension
  static final KdraStack STACK =
      KdraStack.realNodes(
              SimulatedNode.l4sWithDeviceNodes(NODE, DEVICE_NODES.toArray(String[]::new)))
          .withProperties(
              Map.of(
                  "kdra.device-driver.test-only.prepare-delay", PREPARE_DELAY.toSeconds() + "s"));

  private static Stack stack;
  private static KubernetesClient client;

  @BeforeAll
  static void slicesPublished() {
    stack = STACK.get();
    client = stack.client;
    await()
        .atMost(Duration.ofSeconds(60))
        .untilAsserted(() -> assertThat(Dra.publishedDevices(client, NODE)).isEqualTo(2));
    stack.createClusterScoped(
        Dra.gpuClass(
            CLASS, "device.attributes[\"" + Stack.DRIVER + "\"].productName == \"NVIDIA L4\""));
  }

  @Test
  void aKubeletRestartedWithAPodRunningAndAPrepareInFlightLosesAndDoublesNothing()
      throws Exception {
    String ns = stack.namespace;
    RealNode node = stack.nodes.realNode(NODE);
    client.resource(Dra.template(ns, "one-gpu", CLASS, 1)).create();

    Pod running =
        client
            .resource(RealPods.showingDevices(Dra.podWithTemplate(ns, "running", "one-gpu")))
            .create();
    RealPods.awaitListed(stack, running);
    String container = containerId(running);
    ResourceClaim runningClaim = Dra.claimOf(client, running, "gpu");
    String runningUid = runningClaim.getMetadata().getUid();
    String runningSpec = Files.readString(RealPods.spec(stack, NODE, runningClaim));
    long registrations = acceptedRegistrations();

    // the second pod's prepare is held between its spec and its checkpoint entry ...
    Pod inFlight =
        client
            .resource(RealPods.showingDevices(Dra.podWithTemplate(ns, "in-flight", "one-gpu")))
            .create();
    await()
        .atMost(RealPods.POD_TIMEOUT)
        .pollInterval(Duration.ofMillis(20))
        .until(() -> RealPods.specFiles(stack, NODE).size() == 2);
    ResourceClaim inFlightClaim = Dra.claimOf(client, inFlight, "gpu");
    String inFlightUid = inFlightClaim.getMetadata().getUid();
    Path inFlightSpecFile = RealPods.spec(stack, NODE, inFlightClaim);
    String inFlightSpec = Files.readString(inFlightSpecFile);
    // ... when the kubelet stops (SIGTERM, as systemd stops it): its call is cut
    node.stopKubelet();
    assertThat(checkpointClaims())
        .as("the driver still holds the prepare the kubelet left")
        .containsExactly(runningUid);

    // the driver finishes the preparation it held, once
    await()
        .atMost(PREPARE_DELAY.multipliedBy(3))
        .untilAsserted(
            () ->
                assertThat(checkpointClaims()).containsExactlyInAnyOrder(runningUid, inFlightUid));

    node.startKubelet();
    node.awaitKubeletReady();
    await()
        .alias("the restarted kubelet registers the plugin again")
        .atMost(RealPods.POD_TIMEOUT)
        .until(() -> acceptedRegistrations() > registrations);

    // the restarted kubelet prepares the claim again: answered from the checkpoint
    List<String> log = RealPods.awaitListed(stack, inFlight);
    int device = RealPods.deviceIndex(inFlightClaim);
    assertThat(device).isEqualTo(1 - RealPods.deviceIndex(runningClaim));
    assertThat(log).contains("KDRA_DEVICE_0=gpu-" + device);
    assertThat(Files.readString(inFlightSpecFile)).isEqualTo(inFlightSpec);
    assertThat(containerId(running)).as("the running pod's container").isEqualTo(container);
    assertThat(Files.readString(RealPods.spec(stack, NODE, runningClaim))).isEqualTo(runningSpec);
    assertThat(RealPods.specFiles(stack, NODE)).hasSize(2);
    assertThat(checkpointClaims()).containsExactlyInAnyOrder(runningUid, inFlightUid);
    // planned once each: the repeated call was answered without planning (the delay holds only
    // a claim being planned)
    assertThat(driverLogLines("holding " + ns + "/in-flight-")).isEqualTo(1);
    assertThat(driverLogLines("holding " + ns + "/running-")).isEqualTo(1);

    // and nothing is left once both are gone
    client.resource(running).delete();
    client.resource(inFlight).delete();
    await()
        .atMost(RealPods.POD_TIMEOUT)
        .untilAsserted(
            () -> {
              assertThat(Dra.get(client, running)).isNull();
              assertThat(Dra.get(client, inFlight)).isNull();
              assertThat(RealPods.specFiles(stack, NODE)).isEmpty();
              assertThat(checkpointClaims()).isEmpty();
            });
  }

  /** The id of the pod's running container; it never restarted. */
  private static String containerId(Pod pod) {
    var statuses = Dra.get(client, pod).getStatus().getContainerStatuses();
    assertThat(statuses)
        .singleElement()
        .satisfies(
            s -> {
              assertThat(s.getState().getRunning()).isNotNull();
              assertThat(s.getRestartCount()).isZero();
            });
    return statuses.get(0).getContainerID();
  }

  /** How often a kubelet accepted the node's driver's registration (its log). */
  private static long acceptedRegistrations() throws Exception {
    return driverLogLines("kubelet accepted plugin " + Stack.DRIVER);
  }

  /** Lines of the node's driver's log that contain {@code text}. */
  private static long driverLogLines(String text) throws Exception {
    Path log = stack.services.process("device-driver-" + NODE).log;
    // decoded leniently: a log line is no reason to fail
    String all = new String(Files.readAllBytes(log), java.nio.charset.StandardCharsets.UTF_8);
    return all.lines().filter(l -> l.contains(text)).count();
  }

  private static java.util.Set<String> checkpointClaims() {
    return stack.nodes.checkpointClaims(NODE);
  }
}
