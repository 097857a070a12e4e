package io.kdra.it;

import static io.kdra.it.nodes.SimulatedNode.oneA100;
import static io.kdra.it.nodes.SimulatedNode.twoL4s;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.resource.v1.ResourceClaim;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.kdra.devicedriver.kubelet.drahealth.v1alpha1.DeviceHealth;
import io.kdra.devicedriver.kubelet.drahealth.v1alpha1.HealthStatus;
import io.kdra.it.controlplane.ControlPlane;
import io.kdra.it.nodes.TestKubelet;
import io.kdra.it.services.Dra;
import io.kdra.it.services.KdraStack;
import io.kdra.it.services.Stack;
import io.kdra.it.support.ServiceProcess;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import java.util.stream.Stream;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * Scenario 7: the device-driver of node-a (two L4s) crashes (SIGKILL) while a NodePrepareResources
 * call is in flight, and is started again on the same socket, CDI and checkpoint directories. The
 * driver runs with {@code kdra.device-driver.test-only.prepare-delay}, which holds every prepare
 * between the claim's CDI spec and its checkpoint entry: the kill lands exactly there, the one
 * window in which half a preparation exists. The successor removes the orphaned spec at startup,
 * the kubelet's retry prepares the claim once, a repeated prepare returns the same CDI ids, and
 * both claims unprepare: never a lost, duplicated or leftover preparation. node-b (an A100 the
 * class excludes) proves that the specs land on node-a only. The kubelet's device-health stream
 * (KEP-4680) ends with each crash and, reopened, reaches the new driver, which reports a GPU marked
 * unhealthy in its inventory.
 */
@ExtendWith(ControlPlane.class)
class DriverRestartIT {

  private static final String NODE = "node-a";
  private static final String OTHER = "node-b";

  /** Long enough to see the spec and kill the driver; every prepare pays it, also the retry. */
  private static final Duration PREPARE_DELAY = Duration.ofSeconds(3);

  private static final Duration DISCONNECT_GRACE = Duration.ofSeconds(5);
  private static final String TAINT = "kdra.io/driver-unresponsive=disconnected:NoSchedule";

  @RegisterExtension
  static final KdraStack STACK =
      KdraStack.nodes(twoL4s(NODE), oneA100(OTHER))
          .withProperties(
              Map.of(
                  "kdra.device-driver.test-only.prepare-delay",
                  PREPARE_DELAY.toSeconds() + "s",
                  // shorter than the chart's 20 s, so that the dead-driver test is quick; long
                  // enough
                  // for node-a's restarts not to count as death
                  "kdra.slice-publisher.stale.disconnected-taint-after",
                  DISCONNECT_GRACE.toSeconds() + "s"));

  private static Stack stack;
  private static KubernetesClient client;

  @BeforeAll
  static void slicesPublished() {
    stack = STACK.get();
    client = stack.client;
    await()
        .atMost(Duration.ofSeconds(60))
        .untilAsserted(() -> assertThat(Dra.publishedDevices(client, NODE)).isEqualTo(2));
    await()
        .atMost(Duration.ofSeconds(60))
        .untilAsserted(() -> assertThat(Dra.publishedDevices(client, OTHER)).isEqualTo(1));
  }

  @Test
  void aRestartedDriverKeepsEveryPreparationExactlyOnce() throws Exception {
    String ns = stack.namespace;
    TestKubelet kubelet = stack.nodes.kubelet(NODE);
    awaitHealth(kubelet, Map.of("gpu-0", HealthStatus.HEALTHY, "gpu-1", HealthStatus.HEALTHY));
    // scenario-specific, not the chart's class: only node-a's L4s, so node-b's A100 stays out
    stack.createClusterScoped(
        Dra.gpuClass(
            "restart-gpu",
            "device.attributes[\"" + Stack.DRIVER + "\"].productName == \"NVIDIA L4\""));
    client.resource(Dra.template(ns, "one-gpu", "restart-gpu", 1)).create();

    // first claim: prepared before the crash
    Pod first = client.resource(Dra.podWithTemplate(ns, "first", "one-gpu")).create();
    await()
        .atMost(Duration.ofSeconds(60))
        .untilAsserted(() -> assertThat(kubelet.prepared(first)).isNotNull());
    String firstUid = Dra.claimOf(client, first, "gpu").getMetadata().getUid();
    List<String> firstIds = kubelet.prepared(first).cdiIds();
    assertThat(kubelet.prepared(first).deviceCdiIds())
        .singleElement()
        .asString()
        .startsWith("k8s.gpu.kdra.io/claim=" + firstUid + "-");
    assertThat(specFiles()).containsExactly(spec(firstUid));
    assertThat(checkpointClaims()).containsExactly(firstUid);
    String firstSpec = Files.readString(stack.nodes.cdiDir(NODE).resolve(spec(firstUid)));

    // second claim: the driver is killed (SIGKILL) while the kubelet's NodePrepareResources call
    // is in flight, after the claim's CDI spec is written and before its checkpoint entry
    Pod second = client.resource(Dra.podWithTemplate(ns, "second", "one-gpu")).create();
    await()
        .atMost(Duration.ofSeconds(60))
        .pollInterval(Duration.ofMillis(20))
        .until(() -> specFiles().size() == 2);
    String secondUid = Dra.claimOf(client, second, "gpu").getMetadata().getUid();
    assertThat(specFiles()).containsExactlyInAnyOrder(spec(firstUid), spec(secondUid));
    assertThat(checkpointClaims())
        .as("checkpoint while the prepare is held")
        .containsExactly(firstUid);
    assertThat(kubelet.prepared(second)).as("the kubelet's call has not returned").isNull();
    String driver = "device-driver-" + NODE;
    long restart = System.nanoTime();
    stack.services.crash(driver);
    // the crash left half a preparation: a spec without a checkpoint entry
    assertThat(specFiles()).containsExactlyInAnyOrder(spec(firstUid), spec(secondUid));
    assertThat(checkpointClaims()).containsExactly(firstUid);
    assertThat(kubelet.prepared(second)).isNull();
    // the call in flight failed with the connection, as a kubelet's would
    await()
        .atMost(Duration.ofSeconds(90))
        .until(() -> String.valueOf(kubelet.lastError(second)).contains("UNAVAILABLE"));
    stack.services.restart(driver);
    System.out.printf(
        "[it] %s killed mid-prepare and ready again in %d ms%n",
        driver, (System.nanoTime() - restart) / 1_000_000);

    // the kubelet's retries reach the new driver, which prepares the second claim once
    await()
        .atMost(Duration.ofSeconds(60))
        .untilAsserted(() -> assertThat(kubelet.prepared(second)).isNotNull());
    List<String> secondIds = kubelet.prepared(second).cdiIds();
    assertThat(kubelet.prepared(second).deviceCdiIds())
        .singleElement()
        .asString()
        .startsWith("k8s.gpu.kdra.io/claim=" + secondUid + "-");

    // a repeated prepare of both (as a restarted kubelet does) is answered from the checkpoint:
    // the same CDI ids, the same spec, nothing new on disk
    assertThat(kubelet.prepareAgain(first).cdiIds()).isEqualTo(firstIds);
    assertThat(kubelet.prepareAgain(second).cdiIds()).isEqualTo(secondIds);
    assertThat(Files.readString(stack.nodes.cdiDir(NODE).resolve(spec(firstUid))))
        .isEqualTo(firstSpec);
    assertThat(specFiles()).containsExactlyInAnyOrder(spec(firstUid), spec(secondUid));
    assertThat(checkpointClaims()).containsExactlyInAnyOrder(firstUid, secondUid);
    assertThat(allCdiFiles(OTHER)).as("nothing prepared on " + OTHER).isEmpty();
    // two claims, two distinct devices
    List<String> devices = new ArrayList<>();
    devices.addAll(Dra.devices(Dra.claimOf(client, first, "gpu")));
    devices.addAll(Dra.devices(Dra.claimOf(client, second, "gpu")));
    assertThat(devices).doesNotHaveDuplicates().hasSize(2);

    // a second crash with both prepared, then unprepare through the new driver
    stack.services.crashAndRestart(driver);
    // the health stream, ended by the crash, reopens (that it reaches the new driver, the last
    // step shows: only the new driver can report the change made there)
    awaitHealth(kubelet, Map.of("gpu-0", HealthStatus.HEALTHY, "gpu-1", HealthStatus.HEALTHY));
    assertThat(kubelet.prepareAgain(first).cdiIds()).isEqualTo(firstIds);
    client.resource(first).delete();
    client.resource(second).delete();
    await()
        .atMost(Duration.ofSeconds(60))
        .untilAsserted(
            () -> {
              assertThat(Dra.get(client, first)).isNull();
              assertThat(Dra.get(client, second)).isNull();
              assertThat(client.resources(ResourceClaim.class).inNamespace(ns).list().getItems())
                  .isEmpty();
              assertThat(specFiles()).isEmpty();
              assertThat(checkpointClaims()).isEmpty();
            });
    assertThat(kubelet.prepared()).isEmpty();
    assertThat(allCdiFiles()).isEmpty();

    // the last device of the inventory turns unhealthy: the next discovery pass tells the kubelet
    Files.writeString(
        stack.nodes.nodeDir(NODE).resolve("inventory.yaml"),
        twoL4s(NODE).inventory()
            + "  health: Unhealthy\n  healthMessage: \"XID 79: GPU has fallen off the bus\"\n");
    awaitHealth(kubelet, Map.of("gpu-0", HealthStatus.HEALTHY, "gpu-1", HealthStatus.UNHEALTHY));
    assertThat(kubelet.deviceHealth().get("gpu-1").getMessage())
        .isEqualTo("XID 79: GPU has fallen off the bus");
  }

  /**
   * A dead driver (SIGKILL, not restarted): once the disconnect grace has passed, node-b's A100
   * carries the stale taint valued "disconnected", and a new pod that needs an A100 is not placed
   * there (it would be bound and never prepared) but stays Pending with a message naming the taint;
   * the publisher counts the pool in kdra_publisher_stale_pools. The driver back, the taint goes
   * and the pod runs.
   */
  @Test
  void aDeadDriversDevicesGetNoNewPodsAndThePendingPodSaysWhy() {
    String ns = stack.namespace;
    String driver = "device-driver-" + OTHER;
    stack.services.crash(driver);
    await()
        .atMost(Duration.ofSeconds(90))
        .untilAsserted(() -> assertThat(taints(OTHER)).containsExactly(TAINT));
    ServiceProcess publisher = stack.services.process("slice-publisher");
    await()
        .atMost(Duration.ofSeconds(90))
        .untilAsserted(
            () ->
                assertThat(publisher.metric("kdra_publisher_stale_pools{reason=\"disconnected\"}"))
                    .as("the publisher's count of tainted pools")
                    .isEqualTo(1.0));

    stack.createClusterScoped(
        Dra.gpuClass(
            "dead-a100",
            "device.attributes[\""
                + Stack.DRIVER
                + "\"].productName == \"NVIDIA A100-SXM4-40GB\""));
    client.resource(Dra.template(ns, "one-a100", "dead-a100", 1)).create();
    Pod pod = client.resource(Dra.podWithTemplate(ns, "needs-a100", "one-a100")).create();
    await()
        .atMost(Duration.ofSeconds(90))
        .untilAsserted(
            () -> {
              Pod current = Dra.get(client, pod);
              assertThat(current.getSpec().getNodeName()).isNull();
              var scheduled =
                  current.getStatus().getConditions().stream()
                      .filter(c -> c.getType().equals("PodScheduled"))
                      .findFirst()
                      .orElseThrow(() -> new AssertionError("no PodScheduled condition yet"));
              assertThat(scheduled.getReason()).isEqualTo("Unschedulable");
              assertThat(scheduled.getMessage()).contains("1 tainted, e.g. " + TAINT);
            });

    stack.services.restart(driver);
    await()
        .atMost(Duration.ofSeconds(90))
        .untilAsserted(() -> assertThat(taints(OTHER)).containsExactly(""));
    await()
        .atMost(Duration.ofSeconds(90))
        .untilAsserted(
            () ->
                assertThat(publisher.metric("kdra_publisher_stale_pools{reason=\"disconnected\"}"))
                    .isEqualTo(0.0));
    await()
        .atMost(Duration.ofSeconds(90))
        .untilAsserted(
            () ->
                assertThat(stack.nodes.kubelet(OTHER).prepared(Dra.get(client, pod))).isNotNull());
    assertThat(Dra.get(client, pod).getSpec().getNodeName()).isEqualTo(OTHER);
    client.resource(pod).delete();
    await()
        .atMost(Duration.ofSeconds(90))
        .untilAsserted(
            () -> {
              assertThat(Dra.get(client, pod)).isNull();
              assertThat(allCdiFiles(OTHER)).isEmpty();
            });
  }

  /** Per published device of the node, its taints as key=value:effect, "" for none. */
  private static List<String> taints(String node) {
    return client
        .resources(io.fabric8.kubernetes.api.model.resource.v1.ResourceSlice.class)
        .list()
        .getItems()
        .stream()
        .filter(
            s ->
                Stack.DRIVER.equals(s.getSpec().getDriver())
                    && node.equals(s.getSpec().getNodeName()))
        .flatMap(s -> s.getSpec().getDevices().stream())
        .map(
            d ->
                d.getTaints() == null
                    ? ""
                    : String.join(
                        ",",
                        d.getTaints().stream()
                            .map(t -> t.getKey() + "=" + t.getValue() + ":" + t.getEffect())
                            .toList()))
        .toList();
  }

  /** Waits until the kubelet's health cache shows exactly these states, all in node-a's pool. */
  private static void awaitHealth(TestKubelet kubelet, Map<String, HealthStatus> want) {
    await()
        .atMost(Duration.ofSeconds(60))
        .untilAsserted(
            () -> {
              Map<String, DeviceHealth> health = kubelet.deviceHealth();
              assertThat(health).hasSameSizeAs(want);
              want.forEach(
                  (device, state) -> {
                    assertThat(health.get(device)).as(device).isNotNull();
                    assertThat(health.get(device).getHealth()).as(device).isEqualTo(state);
                    assertThat(health.get(device).getDevice().getPoolName()).isEqualTo(NODE);
                  });
            });
  }

  private static String spec(String uid) {
    return "k8s.gpu.kdra.io-claim_" + uid + ".json";
  }

  /** CDI spec files of the node's directory. */
  private static List<String> specFiles() throws Exception {
    return allCdiFiles().stream().filter(f -> f.endsWith(".json")).toList();
  }

  /** Every file in the node's CDI directory (also temporary files a crash could leave). */
  private static List<String> allCdiFiles() throws Exception {
    return allCdiFiles(NODE);
  }

  private static List<String> allCdiFiles(String node) throws Exception {
    Path dir = stack.nodes.cdiDir(node);
    if (!Files.isDirectory(dir)) {
      return List.of();
    }
    try (Stream<Path> files = Files.list(dir)) {
      return files.map(f -> f.getFileName().toString()).sorted().toList();
    }
  }

  /** UIDs of the claims in the driver's checkpoint file. */
  private static Set<String> checkpointClaims() throws Exception {
    Path file = stack.nodes.nodeDir(NODE).resolve("plugins/checkpoint.json");
    Set<String> uids = new TreeSet<>();
    if (Files.exists(file)) {
      JsonNode root = new ObjectMapper().readTree(file.toFile());
      assertThat(root.path("apiVersion").asText()).isEqualTo("checkpoint.kdra.io/v1");
      root.path("preparedClaims").fieldNames().forEachRemaining(uids::add);
    }
    return uids;
  }
}
