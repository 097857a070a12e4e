package io.kdra.it;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.PodBuilder;
import io.fabric8.kubernetes.api.model.ServiceAccountBuilder;
import io.fabric8.kubernetes.api.model.resource.v1.DeviceClass;
import io.fabric8.kubernetes.api.model.resource.v1.ResourceClaim;
import io.fabric8.kubernetes.api.model.resource.v1.ResourceClaimBuilder;
import io.fabric8.kubernetes.api.model.resource.v1.ResourceSlice;
import io.fabric8.kubernetes.api.model.resource.v1.ResourceSliceBuilder;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientException;
import io.fabric8.kubernetes.client.http.HttpRequest;
import io.fabric8.kubernetes.client.http.HttpResponse;
import io.fabric8.kubernetes.client.utils.Serialization;
import io.kdra.it.chart.KdraChart;
import io.kdra.it.controlplane.ControlPlane;
import io.kdra.it.nodes.SimulatedNode;
import io.kdra.it.services.Dra;
import io.kdra.it.services.KdraStack;
import io.kdra.it.services.Stack;
import java.net.URL;
import java.time.Duration;
import java.util.concurrent.TimeUnit;
import org.assertj.core.api.ThrowableAssert.ThrowingCallable;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * Issue #9's proof that the chart's RBAC is least privilege: each service's own token (the one in
 * the kubeconfig its process runs with, for the chart's ServiceAccount) is refused by the real API
 * server, with 403, what that service's role does not grant, while what it does grant works with
 * the same token. The other ITs show the converse: every scenario passes on these grants.
 */
@ExtendWith(ControlPlane.class)
class RbacIT {

  static final String NODE = "node-r";

  /**
   * DRAPrioritizedList is GA and on in every API server this suite runs; off here, so that the
   * claim-controller has a gate to warn about (no claim of this class asks for alternatives).
   */
  @RegisterExtension
  static final KdraStack STACK =
      KdraStack.nodes(SimulatedNode.twoL4s(NODE))
          .withBridge()
          .withProperties(
              java.util.Map.of(
                  "kdra.claim-controller.allocator.feature-gates", "DRAPrioritizedList=false"));

  private static Stack stack;
  private static KubernetesClient admin;
  private static ResourceSlice published;
  private static ResourceClaim claim;
  private static Pod pending;

  @BeforeAll
  static void aPublishedSliceAClaimAndAPendingPod() {
    stack = STACK.get();
    admin = stack.client;
    // the publisher accepted the driver's pod-bound token (TokenReview): the driver identity works
    await()
        .atMost(Duration.ofSeconds(60))
        .untilAsserted(() -> assertThat(Dra.publishedDevices(admin, NODE)).isEqualTo(2));
    published =
        admin.resources(ResourceSlice.class).list().getItems().stream()
            .filter(s -> NODE.equals(s.getSpec().getNodeName()))
            .findFirst()
            .orElseThrow();
    claim =
        admin.resource(Dra.claim(stack.namespace, "rbac-claim", KdraChart.GPU_CLASS, 1)).create();
    // nobody schedules it (default scheduler name): it stays pending for the binding attempt
    pending =
        admin
            .resource(
                new PodBuilder()
                    .withNewMetadata()
                    .withName("unscheduled")
                    .withNamespace(stack.namespace)
                    .endMetadata()
                    .withNewSpec()
                    .addNewContainer()
                    .withName("app")
                    .withImage("app:1")
                    .endContainer()
                    .endSpec()
                    .build())
            .create();
  }

  @AfterAll
  static void cleanUp() {
    if (admin != null && claim != null) {
      admin.resource(claim).delete();
    }
  }

  /** The services' tokens are only their owner's to read, as a projected token is the pod's. */
  @Test
  void theServicesTokensAndKubeconfigsAreOwnerOnly() throws Exception {
    for (String process :
        java.util.List.of(
            "slice-publisher",
            "claim-controller",
            "computeclass-bridge",
            "device-driver-" + NODE)) {
      assertThat(ControlPlaneIT.mode(stack.identities.kubeconfig(process)))
          .as(process)
          .isEqualTo("rw-------");
      assertThat(ControlPlaneIT.mode(stack.identities.kubeconfig(process).getParent()))
          .isEqualTo("rwx------");
    }
    assertThat(ControlPlaneIT.mode(stack.nodes.publisherTokenFile(NODE))).isEqualTo("rw-------");
    assertThat(ControlPlaneIT.mode(stack.nodes.nodeDir(NODE))).isEqualTo("rwx------");
  }

  @Test
  void theApiServerAuthorizesWithRbac() {
    // a ServiceAccount no binding names: authenticated, and allowed nothing
    admin
        .resource(
            new ServiceAccountBuilder()
                .withNewMetadata()
                .withName("nobody")
                .withNamespace(stack.namespace)
                .endMetadata()
                .build())
        .serverSideApply();
    String token =
        admin
            .serviceAccounts()
            .inNamespace(stack.namespace)
            .withName("nobody")
            .tokenRequest(
                new io.fabric8.kubernetes.api.model.authentication.TokenRequestBuilder()
                    .withNewSpec()
                    .withExpirationSeconds(600L)
                    .endSpec()
                    .build())
            .getStatus()
            .getToken();
    try (KubernetesClient nobody = stack.identities.clientWithToken(token)) {
      denied(
          nobody,
          "system:serviceaccount:" + stack.namespace + ":nobody",
          () -> nobody.pods().inNamespace(stack.namespace).list());
    }
  }

  @Test
  void theSlicePublisherMayNotBindPodsNorWriteClaimStatus() {
    try (KubernetesClient publisher = stack.identities.clientOf("slice-publisher")) {
      String user = user(KdraChart.PUBLISHER);
      // granted: its slices, the nodes, its own Lease (it holds it)
      assertThat(publisher.resources(ResourceSlice.class).list().getItems()).isNotEmpty();
      assertThat(publisher.nodes().withName(NODE).get()).isNotNull();
      assertThat(
              publisher
                  .leases()
                  .inNamespace(KdraChart.NAMESPACE)
                  .withName(KdraChart.PUBLISHER_LEASE)
                  .get()
                  .getSpec()
                  .getHolderIdentity())
          .isEqualTo("slice-publisher");

      assertThat(bind(publisher, pending, NODE)).as("pods/binding as %s", user).isEqualTo(403);
      denied(publisher, user, () -> publisher.resource(claimWithStatus()).updateStatus());
      denied(
          publisher,
          user,
          () -> publisher.resources(ResourceClaim.class).inNamespace(stack.namespace).list());
      // no pods at all: every token names its node, the publisher never reads the token's pod
      denied(
          publisher,
          user,
          () ->
              publisher
                  .pods()
                  .inNamespace(stack.namespace)
                  .withName(pending.getMetadata().getName())
                  .get());
      denied(publisher, user, () -> publisher.pods().inNamespace(stack.namespace).list());
      denied(publisher, user, () -> publisher.resource(pending).delete());
    }
  }

  @Test
  void theClaimControllerMayNotWriteResourceSlices() {
    try (KubernetesClient controller = stack.identities.clientOf("claim-controller")) {
      String user = user(KdraChart.CONTROLLER);
      // granted: reading slices, writing claims
      assertThat(
              controller
                  .resources(ResourceSlice.class)
                  .withName(published.getMetadata().getName())
                  .get())
          .isNotNull();
      assertThat(
              controller
                  .resources(ResourceClaim.class)
                  .inNamespace(stack.namespace)
                  .withName(claim.getMetadata().getName())
                  .get())
          .isNotNull();

      denied(controller, user, () -> controller.resource(slice("forged-by-controller")).create());
      denied(controller, user, () -> controller.resource(published).delete());
      denied(
          controller,
          user,
          () -> controller.resources(DeviceClass.class).withName(KdraChart.GPU_CLASS).delete());
      // its Role renews its own Lease only, not another component's
      denied(
          controller,
          user,
          () ->
              controller
                  .leases()
                  .inNamespace(KdraChart.NAMESPACE)
                  .withName(KdraChart.PUBLISHER_LEASE)
                  .get());
    }
  }

  @Test
  void theComputeClassBridgeMayNotTouchPods() {
    try (KubernetesClient bridge = stack.identities.clientOf("computeclass-bridge")) {
      String user = user(KdraChart.BRIDGE);
      // granted: the DeviceClasses it generates
      assertThat(bridge.resources(DeviceClass.class).withName(KdraChart.GPU_CLASS).get())
          .isNotNull();

      denied(bridge, user, () -> bridge.pods().inNamespace(stack.namespace).list());
      denied(
          bridge,
          user,
          () ->
              bridge
                  .pods()
                  .inNamespace(stack.namespace)
                  .withName(pending.getMetadata().getName())
                  .get());
      denied(bridge, user, () -> bridge.resource(pending).delete());
      denied(
          bridge,
          user,
          () ->
              bridge
                  .resource(
                      new PodBuilder(pending)
                          .editMetadata()
                          .withName("from-bridge")
                          .withResourceVersion(null)
                          .withUid(null)
                          .endMetadata()
                          .withStatus(null)
                          .build())
                  .create());
      denied(
          bridge,
          user,
          () -> bridge.resources(ResourceClaim.class).inNamespace(stack.namespace).list());
      // ConfigMaps: only a named catalog ConfigMap, by name in its namespace (none named here)
      denied(bridge, user, () -> bridge.configMaps().inNamespace("kube-system").list());
      denied(
          bridge,
          user,
          () -> bridge.configMaps().inNamespace("kube-system").withName("kube-root-ca.crt").get());
    }
  }

  @Test
  void theDeviceDriverMayNotWriteSlicesDirectly() {
    try (KubernetesClient driver = stack.identities.clientOf("device-driver-" + NODE)) {
      String user = user(KdraChart.DRIVER);
      // granted: a claim by name
      assertThat(
              driver
                  .resources(ResourceClaim.class)
                  .inNamespace(stack.namespace)
                  .withName(claim.getMetadata().getName())
                  .get())
          .isNotNull();

      denied(driver, user, () -> driver.resource(slice("forged-by-driver")).create());
      denied(driver, user, () -> driver.resource(published).update());
      // granted: a list of the claims, to find those rebuilt from CDI specs by UID; no watch
      assertThat(driver.resources(ResourceClaim.class).inAnyNamespace().list().getItems())
          .isNotEmpty();

      denied(driver, user, () -> driver.resources(ResourceSlice.class).list());
      // a GET with watch=true is the watch verb: refused before any event is streamed
      assertThat(get(driver, "/apis/resource.k8s.io/v1/resourceclaims?watch=true"))
          .as("watch resourceclaims")
          .isEqualTo(403);
      denied(driver, user, () -> driver.resource(claimWithStatus()).updateStatus());
    }
  }

  /**
   * ResourceClaim device status (GA in 1.37) with the chart's grant alone: patch on {@code
   * resourceclaims/status} and {@code associated-node:patch} on {@code resourceclaims/driver} for
   * the driver's name. The driver's pod-bound token writes {@code status.devices} of a claim
   * allocated on its own node, and the API server refuses it for a claim allocated on another node,
   * naming the {@code resourceclaims/driver} permission.
   */
  @Test
  void theDeviceDriverWritesDeviceStatusOnlyOfItsOwnNodesClaims() {
    ResourceClaim own = allocatedOn("status-own-node", NODE);
    ResourceClaim other = allocatedOn("status-other-node", "node-elsewhere");
    try (KubernetesClient driver = stack.identities.clientOf("device-driver-" + NODE)) {
      ResourceClaim written = patchDeviceStatus(driver, own, NODE);
      assertThat(written.getStatus().getDevices())
          .singleElement()
          .satisfies(d -> assertThat(d.getPool()).isEqualTo(NODE));

      assertThatThrownBy(() -> patchDeviceStatus(driver, other, "node-elsewhere"))
          .isInstanceOfSatisfying(
              KubernetesClientException.class,
              e ->
                  assertThat(e.getMessage())
                      .as("code %d", e.getCode())
                      .contains("status.devices")
                      .contains("resourceclaims/driver"));
    } finally {
      admin.resource(own).delete();
      admin.resource(other).delete();
    }
  }

  /** A claim the admin allocated (gpu-0 of {@code node}'s pool) without any scheduler. */
  private static ResourceClaim allocatedOn(String name, String node) {
    ResourceClaim created =
        admin.resource(Dra.claim(stack.namespace, name, KdraChart.GPU_CLASS, 1)).create();
    return admin
        .resource(
            new ResourceClaimBuilder(created)
                .withNewStatus()
                .withNewAllocation()
                .withNewDevices()
                .addNewResult()
                .withRequest("gpu")
                .withDriver(Stack.DRIVER)
                .withPool(node)
                .withDevice("gpu-0")
                .endResult()
                .endDevices()
                .withNodeSelector(
                    new io.fabric8.kubernetes.api.model.NodeSelectorBuilder()
                        .addNewNodeSelectorTerm()
                        .addNewMatchField()
                        .withKey("metadata.name")
                        .withOperator("In")
                        .withValues(node)
                        .endMatchField()
                        .endNodeSelectorTerm()
                        .build())
                .endAllocation()
                .endStatus()
                .build())
        .updateStatus();
  }

  /** The driver's own write: a JSON patch of the status subresource, as the device-driver's. */
  private static ResourceClaim patchDeviceStatus(
      KubernetesClient driver, ResourceClaim claim, String pool) {
    String ops =
        """
        [{"op": "add", "path": "/status/devices", "value": [{"driver": "%s", "pool": "%s",
          "device": "gpu-0", "conditions": [{"type": "Ready", "status": "True",
          "reason": "Prepared", "message": "", "lastTransitionTime": "2026-12-06T00:00:00Z"}]}]}]
        """
            .formatted(Stack.DRIVER, pool);
    return driver
        .resources(ResourceClaim.class)
        .inNamespace(claim.getMetadata().getNamespace())
        .withName(claim.getMetadata().getName())
        .subresource("status")
        .patch(
            io.fabric8.kubernetes.client.dsl.base.PatchContext.of(
                io.fabric8.kubernetes.client.dsl.base.PatchType.JSON),
            ops);
  }

  /**
   * The chart lets the claim-controller read the API server's feature gates ({@code /metrics}): its
   * one start-up WARN names the gate the API server has on and its allocator has off.
   */
  @Test
  void theClaimControllerNamesAGateOnInTheApiServerButOffInItsAllocator() {
    java.nio.file.Path log = stack.services.process("claim-controller").log;
    await()
        .atMost(Duration.ofSeconds(60))
        .untilAsserted(
            () ->
                assertThat(java.nio.file.Files.readAllLines(log))
                    .filteredOn(l -> l.contains("feature gates on in the API server"))
                    .singleElement()
                    .satisfies(
                        l ->
                            assertThat(l)
                                .contains(" WARN ")
                                // the same line names the scheduler's gates the server has on
                                .contains(
                                    "off in this service's allocator: DRAPrioritizedList"
                                        + " (set them as kube-scheduler has them)")));
    assertThat(stack.services.process("claim-controller").log)
        .content()
        .doesNotContain("cannot read the API server's feature gates");
  }

  /** The user name of the chart's ServiceAccount of {@code component}. */
  private static String user(String component) {
    return "system:serviceaccount:"
        + KdraChart.NAMESPACE
        + ":"
        + KdraChart.serviceAccount(component);
  }

  /**
   * The call fails with 403 from the API server, for {@code user}: the token authenticated, and
   * RBAC refused (not a 401, not a missing object).
   */
  private static void denied(KubernetesClient client, String user, ThrowingCallable call) {
    assertThatThrownBy(call)
        .isInstanceOfSatisfying(
            KubernetesClientException.class,
            e -> {
              assertThat(e.getCode()).as("%s: %s", user, e.getMessage()).isEqualTo(403);
              assertThat(e.getMessage()).contains("User \"" + user + "\"").contains("forbidden");
            });
  }

  /**
   * POSTs a Binding to {@code pods/<name>/binding}, as a scheduler binds (the claim-controller's
   * grant), and returns the HTTP status.
   */
  private static int bind(KubernetesClient client, Pod pod, String node) {
    String path =
        "/api/v1/namespaces/"
            + pod.getMetadata().getNamespace()
            + "/pods/"
            + pod.getMetadata().getName()
            + "/binding";
    String body =
        Serialization.asJson(
            new io.fabric8.kubernetes.api.model.BindingBuilder()
                .withNewMetadata()
                .withName(pod.getMetadata().getName())
                .withNamespace(pod.getMetadata().getNamespace())
                .endMetadata()
                .withNewTarget()
                .withKind("Node")
                .withName(node)
                .endTarget()
                .build());
    try {
      HttpRequest request =
          client
              .getHttpClient()
              .newHttpRequestBuilder()
              .url(new URL(client.getConfiguration().getMasterUrl().replaceAll("/$", "") + path))
              .post("application/json", body)
              .build();
      HttpResponse<String> response =
          client.getHttpClient().sendAsync(request, String.class).get(30, TimeUnit.SECONDS);
      return response.code();
    } catch (Exception e) {
      throw new IllegalStateException("binding " + path, e);
    }
  }

  /**
   * GETs {@code path} and returns the HTTP status; a watch that is granted streams on, and fails
   * the call after 30 s.
   */
  private static int get(KubernetesClient client, String path) {
    try {
      HttpRequest request =
          client
              .getHttpClient()
              .newHttpRequestBuilder()
              .url(new URL(client.getConfiguration().getMasterUrl().replaceAll("/$", "") + path))
              .build();
      return client
          .getHttpClient()
          .sendAsync(request, String.class)
          .get(30, TimeUnit.SECONDS)
          .code();
    } catch (Exception e) {
      throw new IllegalStateException("GET " + path, e);
    }
  }

  /** The test claim with an allocation-looking status, for status writes. */
  private static ResourceClaim claimWithStatus() {
    ResourceClaim current = admin.resource(claim).get();
    return new ResourceClaimBuilder(current)
        .editOrNewStatus()
        .addNewReservedFor()
        .withResource("pods")
        .withName("x")
        .withUid("00000000-0000-0000-0000-000000000001")
        .endReservedFor()
        .endStatus()
        .build();
  }

  /** A ResourceSlice for the kdra driver on the test node that nobody published. */
  private static ResourceSlice slice(String name) {
    return new ResourceSliceBuilder()
        .withNewMetadata()
        .withName(name)
        .endMetadata()
        .withNewSpec()
        .withDriver(Stack.DRIVER)
        .withNodeName(NODE)
        .withNewPool()
        .withName("forged")
        .withGeneration(1L)
        .withResourceSliceCount(1L)
        .endPool()
        .addNewDevice()
        .withName("gpu-9")
        .endDevice()
        .endSpec()
        .build();
  }
}
