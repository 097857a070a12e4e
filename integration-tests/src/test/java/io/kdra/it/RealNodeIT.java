package io.kdra.it;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.resource.v1.ResourceClaim;
import io.fabric8.kubernetes.api.model.resource.v1.ResourceClaimTemplate;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.dsl.base.ResourceDefinitionContext;
import io.kdra.it.chart.KdraChart;
import io.kdra.it.controlplane.ControlPlane;
import io.kdra.it.nodes.RealNode;
import io.kdra.it.nodes.SimulatedNode;
import io.kdra.it.services.Dra;
import io.kdra.it.services.KdraStack;
import io.kdra.it.services.RealPods;
import io.kdra.it.services.Stack;
import io.kdra.it.support.ServiceProcess;
import io.kdra.it.support.TestFiles;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Set;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * The user-visible stories on a real node: the real kubelet (1.37, `kdra.k8s.version`) with
 * containerd 2.x ({@link RealNode}), our device-driver as the kubelet's DRA plugin, our
 * claim-controller as the pods' scheduler. Each pod is busybox printing what it sees; the tests
 * read that from the kubelet's pod logs and check it against the CDI spec the driver wrote.
 */
@ExtendWith(ControlPlane.class)
class RealNodeIT {

  /** Two L4s; most scenarios use them, through {@link #L4_CLASS}. */
  private static final String NODE = "rn-a";

  /** One A100 with 40Gi, for the class only it satisfies. */
  private static final String A100_NODE = "rn-b";

  /** Device nodes of this machine standing in for the two simulated L4s' nodes. */
  private static final List<String> DEVICE_NODES = List.of("/dev/fuse", "/dev/vsock");

  private static final String A100_DEVICE_NODE = "/dev/hwrng";
  private static final String L4_CLASS = "real-l4";

  /** The ComputeClass "one A100, else two L4s", and the template the bridge makes of it. */
  private static final String COMPUTE_CLASS = "a100-or-l4";

  @RegisterExtension
  static final KdraStack STACK =
      KdraStack.realNodes(
              SimulatedNode.l4sWithDeviceNodes(NODE, DEVICE_NODES.toArray(String[]::new)),
              SimulatedNode.a100WithDeviceNode(A100_NODE, A100_DEVICE_NODE))
          .withBridge();

  private static final ResourceDefinitionContext COMPUTE_CLASS_RESOURCE =
      new ResourceDefinitionContext.Builder()
          .withGroup("cloud.google.com")
          .withVersion("v1")
          .withKind("ComputeClass")
          .withPlural("computeclasses")
          .withNamespaced(false)
          .build();

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
              assertThat(Dra.publishedDevices(client, NODE)).isEqualTo(2);
              assertThat(Dra.publishedDevices(client, A100_NODE)).isEqualTo(1);
            });
    // scenario-specific: only rn-a's L4s, so that the A100 stays out of the other stories
    stack.createClusterScoped(
        Dra.gpuClass(
            L4_CLASS, "device.attributes[\"" + Stack.DRIVER + "\"].productName == \"NVIDIA L4\""));
    client
        .genericKubernetesResources(COMPUTE_CLASS_RESOURCE)
        .resource(
            io.fabric8.kubernetes.client.utils.Serialization.unmarshal(
                """
            apiVersion: cloud.google.com/v1
            kind: ComputeClass
            metadata:
              name: a100-or-l4
            spec:
              priorities:
                - gpu: {type: nvidia-tesla-a100, count: 1}
                - gpu: {type: nvidia-l4, count: 2}
              whenUnsatisfiable: DoNotScaleUp
            """,
                io.fabric8.kubernetes.api.model.GenericKubernetesResource.class))
        .createOr(io.fabric8.kubernetes.client.dsl.NonDeletingOperation::update);
    await()
        .atMost(Duration.ofSeconds(60))
        .untilAsserted(
            () ->
                assertThat(
                        client
                            .resources(ResourceClaimTemplate.class)
                            .inNamespace(stack.namespace)
                            .withName(COMPUTE_CLASS)
                            .get())
                    .isNotNull());
  }

  @AfterAll
  static void computeClassGone() {
    client.genericKubernetesResources(COMPUTE_CLASS_RESOURCE).withName(COMPUTE_CLASS).delete();
  }

  /**
   * The seed's ComputeClass story on real nodes, through the computeclass-bridge's template: the
   * first pod gets the preferred A100 on rn-b, the second the fallback of two L4s on rn-a, and each
   * container sees its devices (both L4s' device nodes in the second).
   */
  @Test
  void aComputeClassGivesTheA100ThenTwoL4sAndTheContainersSeeThem() {
    String ns = stack.namespace;
    Pod first =
        client
            .resource(RealPods.showingDevices(Dra.podWithTemplate(ns, "first", COMPUTE_CLASS)))
            .create();
    List<String> firstLog = RealPods.awaitListed(stack, first);
    assertThat(Dra.get(client, first).getSpec().getNodeName()).isEqualTo(A100_NODE);
    assertThat(firstLog)
        .contains(
            "KDRA_DEVICE_0=gpu-0",
            "SIMULATED_GPU_UUID=" + SimulatedNode.uuid(A100_NODE, 0),
            Path.of(A100_DEVICE_NODE).getFileName().toString());

    Pod second =
        client
            .resource(RealPods.showingDevices(Dra.podWithTemplate(ns, "second", COMPUTE_CLASS)))
            .create();
    List<String> secondLog = RealPods.awaitListed(stack, second);
    assertThat(Dra.get(client, second).getSpec().getNodeName()).isEqualTo(NODE);
    assertThat(Dra.devices(Dra.claimOf(client, second, "gpu")))
        .containsExactlyInAnyOrder(NODE + "/gpu-0", NODE + "/gpu-1");
    assertThat(secondLog.stream().filter(l -> l.matches("KDRA_DEVICE_[01]=gpu-[01]")))
        .containsExactlyInAnyOrder("KDRA_DEVICE_0=gpu-0", "KDRA_DEVICE_1=gpu-1");
    assertThat(secondLog).contains(deviceNodeName(0), deviceNodeName(1));
  }

  /**
   * One template, three pods: three claims with the three distinct devices of both nodes, each pod
   * on its device's node and seeing that device's uuid.
   */
  @Test
  void oneTemplateThreePodsEachSeesItsOwnDevice() {
    String ns = stack.namespace;
    client.resource(Dra.template(ns, "any-gpu", KdraChart.GPU_CLASS, 1)).create();
    List<Pod> pods = new java.util.ArrayList<>();
    for (int i = 1; i <= 3; i++) {
      pods.add(
          client
              .resource(RealPods.showingDevices(Dra.podWithTemplate(ns, "worker-" + i, "any-gpu")))
              .create());
    }
    List<String> devices = new java.util.ArrayList<>();
    for (Pod pod : pods) {
      List<String> log = RealPods.awaitListed(stack, pod);
      String device = Dra.devices(Dra.claimOf(client, pod, "gpu")).get(0);
      String node = device.split("/")[0];
      int index = Integer.parseInt(device.substring(device.lastIndexOf('-') + 1));
      assertThat(Dra.get(client, pod).getSpec().getNodeName()).isEqualTo(node);
      assertThat(log).contains("SIMULATED_GPU_UUID=" + SimulatedNode.uuid(node, index));
      devices.add(device);
    }
    assertThat(devices)
        .containsExactlyInAnyOrder(NODE + "/gpu-0", NODE + "/gpu-1", A100_NODE + "/gpu-0");
  }

  /**
   * The seed's first story on real nodes: a class of GPUs with at least 40Gi, which only rn-b's
   * A100 satisfies. The pod lands on rn-b and sees the A100's CDI edits; rn-a prepares nothing.
   */
  @Test
  void aClassOfAtLeast40GiRunsThePodOnTheNodeWithTheA100() throws Exception {
    String ns = stack.namespace;
    stack.createClusterScoped(
        Dra.gpuClass(
            "real-40gi",
            "device.capacity[\"" + Stack.DRIVER + "\"].memory.compareTo(quantity(\"40Gi\")) >= 0"));
    client.resource(Dra.template(ns, "big-gpu", "real-40gi", 1)).create();
    Pod pod =
        client
            .resource(RealPods.showingDevices(Dra.podWithTemplate(ns, "trainer", "big-gpu")))
            .create();

    List<String> log = RealPods.awaitListed(stack, pod);
    assertThat(Dra.get(client, pod).getSpec().getNodeName()).isEqualTo(A100_NODE);
    ResourceClaim claim = Dra.claimOf(client, pod, "gpu");
    assertThat(Dra.devices(claim)).containsExactly(A100_NODE + "/gpu-0");
    assertThat(log)
        .contains(
            "KDRA_DEVICE_0=gpu-0",
            "SIMULATED_GPU_UUID=" + SimulatedNode.uuid(A100_NODE, 0),
            Path.of(A100_DEVICE_NODE).getFileName().toString());
    assertThat(RealPods.spec(stack, A100_NODE, claim)).exists();
    assertThat(RealPods.specFiles(stack, NODE)).isEmpty();
  }

  @AfterEach
  void noPodsLeft() {
    deletePodsAndAwaitUnprepared();
  }

  /**
   * A pod with a claim from a template, scheduled by the claim-controller, runs on the real node:
   * its container sees the env vars and the device node of the driver's CDI spec. Deleting it
   * unprepares the claim: the spec and the checkpoint entry are gone with it.
   */
  @Test
  void aPodWithAClaimFromATemplateSeesItsDeviceThroughCdi() throws Exception {
    String ns = stack.namespace;
    client.resource(Dra.template(ns, "one-gpu", L4_CLASS, 1)).create();
    Pod pod =
        client
            .resource(RealPods.showingDevices(Dra.podWithTemplate(ns, "cdi-env", "one-gpu")))
            .create();

    List<String> log = RealPods.awaitListed(stack, pod);
    ResourceClaim claim = Dra.claimOf(client, pod, "gpu");
    int device = RealPods.deviceIndex(claim);
    assertThat(log)
        .contains(
            "KDRA_DEVICE_0=gpu-" + device,
            "SIMULATED_GPU_UUID=" + SimulatedNode.uuid(NODE, device),
            deviceNodeName(device));
    assertThat(log).doesNotContain(deviceNodeName(1 - device));
    Path spec = RealPods.spec(stack, NODE, claim);
    assertThat(spec).exists();
    assertThat(Files.readString(spec)).contains(DEVICE_NODES.get(device));
    assertThat(checkpointClaims()).containsExactly(claim.getMetadata().getUid());

    deleteAndAwaitUnprepared(pod, spec);
    await()
        .atMost(RealPods.POD_TIMEOUT)
        .untilAsserted(
            () -> assertThat(client.resource(claim).get()).as("the pod's template claim").isNull());
  }

  /**
   * KEP-4680 on the real kubelet: a device of a running pod that the driver's discovery finds
   * unhealthy shows as Unhealthy in the pod's {@code allocatedResourcesStatus}, and Healthy again
   * once it recovers, through the driver's DRAResourceHealth stream.
   */
  @Test
  void anUnhealthyDeviceShowsInThePodsAllocatedResourcesStatus() throws Exception {
    String ns = stack.namespace;
    client.resource(Dra.template(ns, "one-gpu", L4_CLASS, 1)).create();
    Pod pod =
        client
            .resource(RealPods.showingDevices(Dra.podWithTemplate(ns, "health", "one-gpu")))
            .create();
    RealPods.awaitListed(stack, pod);
    ResourceClaim claim = Dra.claimOf(client, pod, "gpu");
    int device = RealPods.deviceIndex(claim);
    // the kubelet names a device by its first CDI id
    String resourceId =
        "k8s." + Stack.DRIVER + "/claim=" + claim.getMetadata().getUid() + "-gpu-" + device;
    Path inventory = stack.nodes.nodeDir(NODE).resolve("inventory.yaml");
    String healthy = Files.readString(inventory);
    await()
        .atMost(RealPods.POD_TIMEOUT)
        .untilAsserted(() -> assertThat(health(pod, resourceId)).isEqualTo("Healthy"));
    try {
      TestFiles.write(
          inventory,
          healthy.replace(
              "- name: gpu-" + device + "\n",
              "- name: gpu-"
                  + device
                  + "\n  health: Unhealthy\n"
                  + "  healthMessage: \"XID 79: GPU has fallen off the bus\"\n"));
      await()
          .atMost(RealPods.POD_TIMEOUT)
          .untilAsserted(() -> assertThat(health(pod, resourceId)).isEqualTo("Unhealthy"));
    } finally {
      TestFiles.write(inventory, healthy);
    }
    await()
        .atMost(RealPods.POD_TIMEOUT)
        .untilAsserted(() -> assertThat(health(pod, resourceId)).isEqualTo("Healthy"));
  }

  /** The health the kubelet reports for {@code resourceId} in the pod's container, or null. */
  private static String health(Pod pod, String resourceId) {
    Pod current = Dra.get(client, pod);
    if (current == null
        || current.getStatus() == null
        || current.getStatus().getContainerStatuses() == null) {
      return null;
    }
    return current.getStatus().getContainerStatuses().stream()
        .filter(c -> c.getAllocatedResourcesStatus() != null)
        .flatMap(c -> c.getAllocatedResourcesStatus().stream())
        .filter(r -> r.getResources() != null)
        .flatMap(r -> r.getResources().stream())
        .filter(h -> resourceId.equals(h.getResourceID()))
        .map(h -> h.getHealth())
        .findFirst()
        .orElse(null);
  }

  /**
   * One ResourceClaim shared by two pods: both run on the node with the same device, prepared once;
   * the spec stays while one pod remains and goes with the last.
   */
  @Test
  void aClaimSharedByTwoPodsGivesBothTheSameDevice() throws Exception {
    String ns = stack.namespace;
    ResourceClaim shared = client.resource(Dra.claim(ns, "shared", L4_CLASS, 1)).create();
    Pod one =
        client
            .resource(RealPods.showingDevices(Dra.podWithClaim(ns, "reader-1", "shared")))
            .create();
    Pod two =
        client
            .resource(RealPods.showingDevices(Dra.podWithClaim(ns, "reader-2", "shared")))
            .create();

    List<String> logOne = RealPods.awaitListed(stack, one);
    List<String> logTwo = RealPods.awaitListed(stack, two);
    ResourceClaim claim = client.resource(shared).get();
    int device = RealPods.deviceIndex(claim);
    for (List<String> log : List.of(logOne, logTwo)) {
      assertThat(log)
          .contains(
              "KDRA_DEVICE_0=gpu-" + device,
              "SIMULATED_GPU_UUID=" + SimulatedNode.uuid(NODE, device),
              deviceNodeName(device));
    }
    assertThat(claim.getStatus().getReservedFor())
        .extracting(r -> r.getName())
        .containsExactlyInAnyOrder("reader-1", "reader-2");
    Path spec = RealPods.spec(stack, NODE, claim);
    assertThat(RealPods.specFiles(stack, NODE)).containsExactly(spec.getFileName().toString());

    client.resource(one).delete();
    await()
        .atMost(RealPods.POD_TIMEOUT)
        .untilAsserted(
            () -> {
              assertThat(Dra.get(client, one)).isNull();
              assertThat(client.resource(shared).get().getStatus().getReservedFor())
                  .extracting(r -> r.getName())
                  .containsExactly("reader-2");
            });
    assertThat(spec).exists();
    assertThat(Dra.get(client, two).getStatus().getPhase()).isEqualTo("Running");

    deleteAndAwaitUnprepared(two, spec);
  }

  /**
   * The driver crashes (SIGKILL) while a pod runs and comes back: the pod is untouched, the new
   * driver registers with the kubelet again, serves a second pod, and unprepares both.
   */
  @Test
  void aDriverRestartLeavesRunningPodsAloneAndServesNewOnes() throws Exception {
    String ns = stack.namespace;
    client.resource(Dra.template(ns, "one-gpu", L4_CLASS, 1)).create();
    Pod first =
        client
            .resource(RealPods.showingDevices(Dra.podWithTemplate(ns, "before-restart", "one-gpu")))
            .create();
    RealPods.awaitListed(stack, first);
    String container = containerId(first);
    ResourceClaim firstClaim = Dra.claimOf(client, first, "gpu");

    stack.services.crashAndRestart("device-driver-" + NODE);

    assertThat(containerId(first)).as("the running container").isEqualTo(container);
    assertThat(RealPods.spec(stack, NODE, firstClaim)).exists();
    Pod second =
        client
            .resource(RealPods.showingDevices(Dra.podWithTemplate(ns, "after-restart", "one-gpu")))
            .create();
    List<String> log = RealPods.awaitListed(stack, second);
    int device = RealPods.deviceIndex(Dra.claimOf(client, second, "gpu"));
    assertThat(device).isEqualTo(1 - RealPods.deviceIndex(firstClaim));
    assertThat(log).contains("KDRA_DEVICE_0=gpu-" + device, deviceNodeName(device));
    assertThat(containerId(first)).isEqualTo(container);
    // the @AfterEach deletes both and waits until the new driver has unprepared them
  }

  /**
   * The kubelet restarts while a pod runs: the pod keeps running (same container; the kubelet
   * restores its claims from its own checkpoint and needs no prepare for a pod whose sandbox
   * lives). When the pod's sandbox then dies, the restarted kubelet, which no longer knows the
   * claim as prepared, sends NodePrepareResources again: the driver answers from its checkpoint
   * (the same spec) and the new container sees the same device. Deletion still unprepares.
   */
  @Test
  void aKubeletRestartThenANewSandboxIsPreparedFromTheDriversCheckpoint() throws Exception {
    String ns = stack.namespace;
    client.resource(Dra.template(ns, "one-gpu", L4_CLASS, 1)).create();
    Pod pod =
        client
            .resource(RealPods.showingDevices(Dra.podWithTemplate(ns, "survivor", "one-gpu")))
            .create();
    RealPods.awaitListed(stack, pod);
    String container = containerId(pod);
    ResourceClaim claim = Dra.claimOf(client, pod, "gpu");
    int device = RealPods.deviceIndex(claim);
    Path spec = RealPods.spec(stack, NODE, claim);
    String specBefore = Files.readString(spec);

    RealNode node = stack.nodes.realNode(NODE);
    node.stopKubelet();
    node.startKubelet();
    node.awaitKubeletReady();
    assertThat(containerId(pod)).as("the running container").isEqualTo(container);
    assertThat(Dra.get(client, pod).getStatus().getPhase()).isEqualTo("Running");

    long prepares = driverPrepares();
    String sandbox = node.crictl("pods", "-q", "--namespace", ns, "--name", "survivor").trim();
    assertThat(sandbox).as("the pod's sandbox").isNotEmpty().doesNotContain("\n");
    node.crictl("stopp", sandbox);
    await()
        .atMost(RealPods.POD_TIMEOUT)
        .untilAsserted(
            () -> {
              assertThat(driverPrepares())
                  .as("prepares since the kubelet's restart")
                  .isGreaterThan(prepares);
              var status = Dra.get(client, pod).getStatus().getContainerStatuses().get(0);
              assertThat(status.getRestartCount()).isPositive();
              assertThat(status.getState().getRunning()).isNotNull();
            });
    assertThat(Files.readString(spec)).isEqualTo(specBefore);
    assertThat(checkpointClaims()).containsExactly(claim.getMetadata().getUid());
    // the new container's own log (the first run's may already be collected with its sandbox)
    int restart = Dra.get(client, pod).getStatus().getContainerStatuses().get(0).getRestartCount();
    await()
        .atMost(RealPods.POD_TIMEOUT)
        .untilAsserted(
            () ->
                assertThat(node.containerLog(Dra.get(client, pod), "app", restart))
                    .contains(RealPods.LISTED));
    assertThat(node.containerLog(Dra.get(client, pod), "app", restart))
        .contains("KDRA_DEVICE_0=gpu-" + device);

    deleteAndAwaitUnprepared(pod, spec);
  }

  /**
   * A simulated reboot of the node's software: the driver and the kubelet stop, the CDI directory
   * (a tmpfs on real hosts) is wiped, both start again. The driver re-materialises the spec from
   * its checkpoint before the kubelet can reach it; the running pod is unaffected.
   */
  @Test
  void afterASimulatedRebootTheSpecsAreBackAndPodsRunOn() throws Exception {
    String ns = stack.namespace;
    client.resource(Dra.template(ns, "one-gpu", L4_CLASS, 1)).create();
    Pod pod =
        client
            .resource(RealPods.showingDevices(Dra.podWithTemplate(ns, "rebooted", "one-gpu")))
            .create();
    RealPods.awaitListed(stack, pod);
    String container = containerId(pod);
    ResourceClaim claim = Dra.claimOf(client, pod, "gpu");
    Path spec = RealPods.spec(stack, NODE, claim);
    String specBefore = Files.readString(spec);

    String driver = "device-driver-" + NODE;
    RealNode node = stack.nodes.realNode(NODE);
    stack.services.stop(driver);
    node.stopKubelet();
    TestFiles.deleteRecursively(stack.nodes.cdiDir(NODE));
    Files.createDirectories(stack.nodes.cdiDir(NODE));
    assertThat(spec).doesNotExist();
    node.startKubelet();
    node.awaitKubeletReady();
    stack.services.restart(driver); // ready: the kubelet accepted its registration

    assertThat(spec).exists();
    assertThat(Files.readString(spec)).isEqualTo(specBefore);
    assertThat(containerId(pod)).isEqualTo(container);
    assertThat(Dra.get(client, pod).getStatus().getPhase()).isEqualTo("Running");
    assertThat(Dra.get(client, pod).getStatus().getContainerStatuses().get(0).getRestartCount())
        .isZero();
  }

  /**
   * A claim whose opaque driver config is invalid is allocated, but the kubelet's prepare fails:
   * the pod never starts, and the kubelet's FailedPrepareDynamicResources Event on the pod (what
   * {@code kubectl describe pod} shows) names the offending field.
   */
  @Test
  void anInvalidOpaqueConfigKeepsThePodFromStartingAndTheEventNamesTheField() {
    String ns = stack.namespace;
    ResourceClaim bad = Dra.claim(ns, "bad-config", L4_CLASS, 1);
    // keys sorted, as kubectl sends YAML it converted (any order works: GpuClaimIT)
    var parameters =
        new java.util.TreeMap<String, Object>(
            java.util.Map.of(
                "apiVersion",
                "resource.kdra.io/v1alpha1",
                "kind",
                "GpuConfig",
                "sharing",
                new java.util.TreeMap<>(
                    java.util.Map.of(
                        "strategy",
                        "TimeSlicing",
                        "timeSlicing",
                        java.util.Map.of("interval", "Forever")))));
    bad.getSpec()
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
    client.resource(bad).create();
    Pod pod =
        client
            .resource(RealPods.showingDevices(Dra.podWithClaim(ns, "never-starts", "bad-config")))
            .create();

    await()
        .atMost(RealPods.POD_TIMEOUT)
        .untilAsserted(
            () ->
                assertThat(
                        client.v1().events().inNamespace(ns).list().getItems().stream()
                            .filter(
                                e ->
                                    "Pod".equals(e.getInvolvedObject().getKind())
                                        && "never-starts".equals(e.getInvolvedObject().getName())))
                    .anySatisfy(
                        e -> {
                          assertThat(e.getReason()).isEqualTo("FailedPrepareDynamicResources");
                          assertThat(e.getType()).isEqualTo("Warning");
                          assertThat(e.getMessage())
                              .contains("timeSlicing.interval")
                              .contains("Forever");
                        }));
    Pod current = Dra.get(client, pod);
    assertThat(current.getSpec().getNodeName()).isEqualTo(NODE);
    assertThat(current.getStatus().getPhase()).isEqualTo("Pending");
    assertThat(stack.nodes.realNode(NODE).containerLog(current, "app")).isEmpty();
    assertThat(RealPods.specFiles(stack, NODE)).isEmpty();
  }

  /** The id of the pod's running container, as the kubelet reports it. */
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

  /** Successful NodePrepareResources claims the node's driver has answered (its metrics). */
  private static long driverPrepares() throws Exception {
    ServiceProcess driver = stack.services.process("device-driver-" + NODE);
    var http = java.net.http.HttpClient.newHttpClient();
    String body =
        http.send(
                java.net.http.HttpRequest.newBuilder(
                        java.net.URI.create("http://127.0.0.1:" + driver.httpPort + "/q/metrics"))
                    .build(),
                java.net.http.HttpResponse.BodyHandlers.ofString())
            .body();
    return body.lines()
        .filter(
            l ->
                l.startsWith("kdra_driver_claim_operation_seconds_count{")
                    && l.contains("operation=\"prepare\"")
                    && l.contains("outcome=\"success\""))
        .mapToLong(l -> (long) Double.parseDouble(l.substring(l.lastIndexOf(' ') + 1)))
        .sum();
  }

  /** The name {@code ls /dev} prints for the device node of GPU {@code index}. */
  private static String deviceNodeName(int index) {
    return Path.of(DEVICE_NODES.get(index)).getFileName().toString();
  }

  /**
   * Deletes the pod and waits until it is gone, its claim's CDI spec {@code spec} removed and the
   * driver's checkpoint empty: the node let go of every device.
   */
  private static void deleteAndAwaitUnprepared(Pod pod, Path spec) {
    client.resource(pod).delete();
    await()
        .atMost(RealPods.POD_TIMEOUT)
        .untilAsserted(
            () -> {
              assertThat(Dra.get(client, pod)).isNull();
              assertThat(spec).doesNotExist();
              assertThat(checkpointClaims()).isEmpty();
            });
  }

  private static void deletePodsAndAwaitUnprepared() {
    client.pods().inNamespace(stack.namespace).delete();
    await()
        .atMost(RealPods.POD_TIMEOUT)
        .untilAsserted(
            () -> {
              assertThat(client.pods().inNamespace(stack.namespace).list().getItems()).isEmpty();
              assertThat(
                      client
                          .resources(ResourceClaim.class)
                          .inNamespace(stack.namespace)
                          .list()
                          .getItems()
                          .stream()
                          .filter(
                              c -> c.getStatus() != null && c.getStatus().getAllocation() != null))
                  .isEmpty();
              assertThat(RealPods.specFiles(stack, NODE)).isEmpty();
              assertThat(RealPods.specFiles(stack, A100_NODE)).isEmpty();
            });
    client.resources(ResourceClaim.class).inNamespace(stack.namespace).delete();
    // the tests' own templates; the bridge's stays
    client
        .resources(ResourceClaimTemplate.class)
        .inNamespace(stack.namespace)
        .list()
        .getItems()
        .stream()
        .filter(t -> !t.getMetadata().getName().equals(COMPUTE_CLASS))
        .forEach(t -> client.resource(t).delete());
  }

  /** UIDs of the claims in the driver's checkpoint. */
  private static Set<String> checkpointClaims() {
    return stack.nodes.checkpointClaims(NODE);
  }
}
