package io.kdra.it;

import static io.kdra.it.nodes.SimulatedNode.oneA100;
import static io.kdra.it.nodes.SimulatedNode.twoL4s;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.fabric8.kubernetes.api.model.Event;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.PodCondition;
import io.fabric8.kubernetes.api.model.resource.v1.ResourceClaim;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.kdra.it.chart.KdraChart;
import io.kdra.it.controlplane.ControlPlane;
import io.kdra.it.services.Dra;
import io.kdra.it.services.KdraStack;
import io.kdra.it.services.Stack;
import io.kdra.it.support.ServiceProcess;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * Claims made from templates, end to end, on node-a (two L4s, 24Gi) and node-b (one A100, 40Gi):
 * scenario 1 (a class only the A100 satisfies), 2 (one template, three pods) and 5 (impossible
 * claims). One stack for the class; every test leaves no pod and no claim behind.
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
    await()
        .atMost(Duration.ofSeconds(60))
        .untilAsserted(
            () -> {
              assertThat(Dra.publishedDevices(client, "node-a")).isEqualTo(2);
              assertThat(Dra.publishedDevices(client, "node-b")).isEqualTo(1);
            });
  }

  @AfterEach
  void noPodsLeft() {
    stack.deletePodsAndAwaitClaimsGone();
  }

  @Test
  void aGpuWithAtLeast40GiIsAllocatedOnTheNodeWithTheA100() throws Exception {
    String ns = stack.namespace;
    // scenario-specific, as a platform admin would add it: the chart's class takes any GPU
    stack.createClusterScoped(
        Dra.gpuClass(
            "gpu-40gi",
            "device.capacity[\"" + Stack.DRIVER + "\"].memory.compareTo(quantity(\"40Gi\")) >= 0"));
    client.resource(Dra.template(ns, "big-gpu", "gpu-40gi", 1)).create();
    Pod pod = client.resource(Dra.podWithTemplate(ns, "trainer", "big-gpu")).create();

    await()
        .atMost(Duration.ofSeconds(60))
        .untilAsserted(
            () -> assertThat(Dra.get(client, pod).getSpec().getNodeName()).isEqualTo("node-b"));
    ResourceClaim claim = Dra.claimOf(client, pod, "gpu");
    assertThat(Dra.devices(claim)).containsExactly("node-b/gpu-0");
    assertThat(claim.getStatus().getReservedFor())
        .extracting(r -> r.getName())
        .containsExactly("trainer");

    String uid = claim.getMetadata().getUid();
    await()
        .atMost(Duration.ofSeconds(90))
        .untilAsserted(() -> assertThat(stack.nodes.kubelet("node-b").prepared(pod)).isNotNull());
    // the device, and the device-metadata file of its request, as upstream's drivers mount it
    assertThat(stack.nodes.kubelet("node-b").prepared(pod).cdiIds())
        .containsExactly(
            "k8s.gpu.kdra.io/claim=" + uid + "-gpu-0",
            "k8s.gpu.kdra.io/claim=" + uid + "_metadata_gpu");
    Path spec = stack.nodes.cdiDir("node-b").resolve("k8s.gpu.kdra.io-claim_" + uid + ".json");
    assertThat(spec).exists();
    assertThat(Files.readString(spec)).contains(uid + "-gpu-0");
    assertThat(cdiFiles("node-a")).isEmpty();
    assertThat(stack.nodes.kubelet("node-a").prepared()).isEmpty();
    // the driver reports the prepared device in the claim's status (ResourceClaim device status,
    // written under the chart's per-driver, own-node grant)
    await()
        .atMost(Duration.ofSeconds(60))
        .untilAsserted(
            () ->
                assertThat(client.resource(claim).get().getStatus().getDevices())
                    .singleElement()
                    .satisfies(
                        d -> {
                          assertThat(List.of(d.getDriver(), d.getPool(), d.getDevice()))
                              .containsExactly(Stack.DRIVER, "node-b", "gpu-0");
                          assertThat(d.getConditions())
                              .singleElement()
                              .satisfies(
                                  c -> {
                                    assertThat(c.getType()).isEqualTo("Ready");
                                    assertThat(c.getStatus()).isEqualTo("True");
                                  });
                        }));
  }

  /**
   * Scenario 2: three pods from one template get three claims with three distinct devices (all the
   * cluster has), each prepared on its pod's node; deleting a pod unprepares and deletes its claim,
   * and the freed device goes to the next pod.
   */
  @Test
  void oneTemplateThreePodsThreeDistinctDevicesFreedWithTheirPods() throws Exception {
    String ns = stack.namespace;
    client.resource(Dra.template(ns, "one-gpu", KdraChart.GPU_CLASS, 1)).create();
    List<Pod> pods = new ArrayList<>();
    for (int i = 1; i <= 3; i++) {
      pods.add(client.resource(Dra.podWithTemplate(ns, "worker-" + i, "one-gpu")).create());
    }
    await()
        .atMost(Duration.ofSeconds(60))
        .untilAsserted(
            () -> {
              for (Pod pod : pods) {
                assertThat(Dra.get(client, pod).getSpec().getNodeName()).isNotNull();
                assertThat(
                        stack
                            .nodes
                            .kubelet(Dra.get(client, pod).getSpec().getNodeName())
                            .prepared(pod))
                    .isNotNull();
              }
            });
    Map<String, ResourceClaim> claims = new HashMap<>();
    for (Pod pod : pods) {
      ResourceClaim claim = Dra.claimOf(client, pod, "gpu");
      claims.put(pod.getMetadata().getName(), claim);
      // the device is on the node the pod is bound to
      assertThat(Dra.devices(claim))
          .singleElement()
          .asString()
          .startsWith(Dra.get(client, pod).getSpec().getNodeName() + "/");
    }
    assertThat(claims.values().stream().flatMap(c -> Dra.devices(c).stream()))
        .containsExactlyInAnyOrder("node-a/gpu-0", "node-a/gpu-1", "node-b/gpu-0");
    assertThat(claims.values().stream().map(c -> c.getMetadata().getName()).distinct()).hasSize(3);

    // a fourth pod waits: every device is taken
    Pod fourth = client.resource(Dra.podWithTemplate(ns, "worker-4", "one-gpu")).create();
    await()
        .atMost(Duration.ofSeconds(90))
        .untilAsserted(() -> assertThat(scheduledCondition(fourth)).isEqualTo("False"));

    // deleting worker-1 unprepares its claim on its node, deletes the claim, frees its device
    Pod first = pods.get(0);
    ResourceClaim firstClaim = claims.get("worker-1");
    String firstNode = Dra.get(client, first).getSpec().getNodeName();
    String firstDevice = Dra.devices(firstClaim).get(0);
    Path spec =
        stack
            .nodes
            .cdiDir(firstNode)
            .resolve("k8s.gpu.kdra.io-claim_" + firstClaim.getMetadata().getUid() + ".json");
    assertThat(spec).exists();
    client.resource(first).delete();
    await()
        .atMost(Duration.ofSeconds(60))
        .untilAsserted(
            () -> {
              assertThat(Dra.get(client, first)).isNull();
              assertThat(client.resource(firstClaim).get()).isNull();
              assertThat(spec).doesNotExist();
            });
    await()
        .atMost(Duration.ofSeconds(60))
        .untilAsserted(
            () ->
                assertThat(Dra.devices(Dra.claimOf(client, fourth, "gpu")))
                    .containsExactly(firstDevice));
    await()
        .atMost(Duration.ofSeconds(90))
        .untilAsserted(
            () -> assertThat(stack.nodes.kubelet(firstNode).prepared(fourth)).isNotNull());
    // the other claims were left alone
    for (String name : List.of("worker-2", "worker-3")) {
      assertThat(Dra.devices(client.resource(claims.get(name)).get()))
          .isEqualTo(Dra.devices(claims.get(name)));
    }
  }

  /**
   * Scenario 3: one ResourceClaim shared by two pods: one device, both pods in reservedFor and on
   * its node, prepared once per node; it stays allocated (and prepared) while one pod remains and
   * is deallocated, its CDI spec removed, only after both have ended.
   */
  @Test
  void oneClaimSharedByTwoPodsIsDeallocatedAfterBoth() {
    String ns = stack.namespace;
    ResourceClaim shared =
        client.resource(Dra.claim(ns, "shared", KdraChart.GPU_CLASS, 1)).create();
    Pod one = client.resource(Dra.podWithClaim(ns, "reader-1", "shared")).create();
    Pod two = client.resource(Dra.podWithClaim(ns, "reader-2", "shared")).create();

    await()
        .atMost(Duration.ofSeconds(60))
        .untilAsserted(
            () -> {
              for (Pod pod : List.of(one, two)) {
                String node = Dra.get(client, pod).getSpec().getNodeName();
                assertThat(node).isNotNull();
                assertThat(stack.nodes.kubelet(node).prepared(pod)).isNotNull();
              }
            });
    ResourceClaim claim = client.resource(shared).get();
    assertThat(Dra.devices(claim)).hasSize(1);
    String node = Dra.devices(claim).get(0).split("/")[0];
    assertThat(Dra.get(client, one).getSpec().getNodeName()).isEqualTo(node);
    assertThat(Dra.get(client, two).getSpec().getNodeName()).isEqualTo(node);
    assertThat(claim.getStatus().getReservedFor())
        .extracting(r -> r.getName())
        .containsExactlyInAnyOrder("reader-1", "reader-2");
    Path spec =
        stack
            .nodes
            .cdiDir(node)
            .resolve("k8s.gpu.kdra.io-claim_" + claim.getMetadata().getUid() + ".json");
    assertThat(spec).exists();

    client.resource(one).delete();
    await()
        .atMost(Duration.ofSeconds(60))
        .untilAsserted(
            () -> {
              assertThat(Dra.get(client, one)).isNull();
              assertThat(client.resource(shared).get().getStatus().getReservedFor())
                  .extracting(r -> r.getName())
                  .containsExactly("reader-2");
            });
    assertThat(Dra.devices(client.resource(shared).get())).isEqualTo(Dra.devices(claim));
    assertThat(spec).exists();

    client.resource(two).delete();
    await()
        .atMost(Duration.ofSeconds(60))
        .untilAsserted(
            () -> {
              ResourceClaim current = client.resource(shared).get();
              assertThat(current).isNotNull();
              assertThat(current.getStatus() == null ? null : current.getStatus().getAllocation())
                  .isNull();
              assertThat(spec).doesNotExist();
            });
    client.resource(shared).delete();
  }

  /**
   * A claim with opaque parameters whose keys are not in the order fabric8 writes them (kind before
   * apiVersion, as a hand-written manifest may have them) is reserved and prepared: the finalizer
   * goes on with a patch, not a PUT of the whole claim, which the API server refused as a change of
   * the immutable spec.
   */
  @Test
  void aClaimWithOpaqueParametersInAnyKeyOrderIsScheduledAndPrepared() {
    String ns = stack.namespace;
    ResourceClaim claim = Dra.claim(ns, "configured", KdraChart.GPU_CLASS, 1);
    Map<String, Object> parameters = new java.util.LinkedHashMap<>();
    parameters.put("kind", "GpuConfig");
    parameters.put("apiVersion", "resource.kdra.io/v1alpha1");
    claim
        .getSpec()
        .getDevices()
        .setConfig(
            List.of(
                new io.fabric8.kubernetes.api.model.resource.v1.DeviceClaimConfigurationBuilder()
                    .withRequests("gpu")
                    .withNewOpaque()
                    .withDriver(Stack.DRIVER)
                    .withParameters(parameters)
                    .endOpaque()
                    .build()));
    client.resource(claim).create();
    Pod pod = client.resource(Dra.podWithClaim(ns, "configured-user", "configured")).create();
    await()
        .atMost(Duration.ofSeconds(60))
        .untilAsserted(
            () -> {
              String node = Dra.get(client, pod).getSpec().getNodeName();
              assertThat(node).isNotNull();
              assertThat(stack.nodes.kubelet(node).prepared(pod)).isNotNull();
            });
    client.resource(pod).delete();
    await()
        .atMost(Duration.ofSeconds(60))
        .untilAsserted(() -> assertThat(Dra.devices(client.resource(claim).get())).isEmpty());
    client.resource(claim).delete();
  }

  /**
   * Scenario 5: a claim nothing can satisfy (a selector no device matches; a class that does not
   * exist): the pod stays Pending with PodScheduled=False and the reason, the claim gets a Warning
   * Event, and the controller does not retry in a hot loop.
   */
  @Test
  void anImpossibleClaimLeavesThePodPendingWithTheReason() {
    String ns = stack.namespace;
    // a class no simulated device matches: the scenario's point, not one the chart ships
    stack.createClusterScoped(
        Dra.gpuClass(
            "h200", "device.attributes[\"" + Stack.DRIVER + "\"].productName == \"NVIDIA H200\""));
    client.resource(Dra.template(ns, "one-h200", "h200", 1)).create();
    client.resource(Dra.template(ns, "no-class", "no-such-class", 1)).create();
    Pod noDevice = client.resource(Dra.podWithTemplate(ns, "wants-h200", "one-h200")).create();
    Pod noClass = client.resource(Dra.podWithTemplate(ns, "wants-no-class", "no-class")).create();

    await()
        .atMost(Duration.ofSeconds(90))
        .untilAsserted(
            () -> {
              for (Pod pod : List.of(noDevice, noClass)) {
                Pod current = Dra.get(client, pod);
                assertThat(current.getSpec().getNodeName()).isNull();
                var scheduled =
                    current.getStatus().getConditions().stream()
                        .filter(c -> c.getType().equals("PodScheduled"))
                        .findFirst()
                        // an AssertionError, so that the await polls again until the controller
                        // wrote it
                        .orElseThrow(
                            () ->
                                new AssertionError(
                                    pod.getMetadata().getName()
                                        + " has no PodScheduled condition yet"));
                assertThat(scheduled.getStatus()).isEqualTo("False");
                assertThat(scheduled.getReason()).isEqualTo("Unschedulable");
                assertThat(scheduled.getMessage()).isNotBlank();
              }
            });
    String noClassMessage = condition(noClass).getMessage();
    assertThat(noClassMessage).contains("no-such-class");

    ResourceClaim claim = Dra.claimOf(client, noDevice, "gpu");
    await()
        .atMost(Duration.ofSeconds(90))
        .untilAsserted(
            () ->
                assertThat(eventsAbout("ResourceClaim", claim.getMetadata().getName()))
                    .anySatisfy(
                        e -> {
                          assertThat(e.getType()).isEqualTo("Warning");
                          assertThat(e.getReason()).isEqualTo("FailedScheduling");
                        }));

    // no hot loop: over five quiet seconds, a handful of retries at most (backoff from 500ms)
    int before = attempts(noDevice);
    ServiceProcess.sleep(5000);
    assertThat(attempts(noDevice) - before).isLessThanOrEqualTo(5);
    assertThat(Dra.get(client, noDevice).getSpec().getNodeName()).isNull();
    assertThat(stack.services.process("claim-controller").alive()).isTrue();
  }

  private static String scheduledCondition(Pod pod) {
    var c = condition(pod);
    return c == null ? null : c.getStatus();
  }

  private static PodCondition condition(Pod pod) {
    Pod current = Dra.get(client, pod);
    if (current == null || current.getStatus() == null) {
      return null;
    }
    return current.getStatus().getConditions().stream()
        .filter(c -> c.getType().equals("PodScheduled"))
        .findFirst()
        .orElse(null);
  }

  private static List<Event> eventsAbout(String kind, String name) {
    return client.v1().events().inNamespace(stack.namespace).list().getItems().stream()
        .filter(
            e ->
                kind.equals(e.getInvolvedObject().getKind())
                    && name.equals(e.getInvolvedObject().getName()))
        .toList();
  }

  /** Scheduling attempts the controller reported for the pod (FailedScheduling Events). */
  private static int attempts(Pod pod) {
    return eventsAbout("Pod", pod.getMetadata().getName()).stream()
        .filter(e -> "FailedScheduling".equals(e.getReason()))
        .mapToInt(e -> e.getCount() == null ? 1 : e.getCount())
        .sum();
  }

  private static List<Path> cdiFiles(String node) throws Exception {
    Path dir = stack.nodes.cdiDir(node);
    if (!Files.isDirectory(dir)) {
      return List.of();
    }
    try (var files = Files.list(dir)) {
      return files.filter(f -> f.getFileName().toString().endsWith(".json")).toList();
    }
  }
}
