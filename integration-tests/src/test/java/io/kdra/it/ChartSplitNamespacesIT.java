package io.kdra.it;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.fabric8.kubernetes.api.model.NamespaceBuilder;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.apps.DaemonSet;
import io.fabric8.kubernetes.api.model.apps.Deployment;
import io.fabric8.kubernetes.api.model.resource.v1.ResourceClaim;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.utils.Serialization;
import io.kdra.it.chart.HelmRelease;
import io.kdra.it.controlplane.ClusterApiServer;
import io.kdra.it.nodes.MultiNodeCluster;
import io.kdra.it.nodes.NodeRegistration;
import io.kdra.it.nodes.RealNode;
import io.kdra.it.services.BuiltImages;
import io.kdra.it.services.Dra;
import io.kdra.it.services.RealPods;
import io.kdra.it.support.OwnerOnly;
import io.kdra.it.support.ServiceProcess;
import io.kdra.it.support.TestFiles;
import java.io.IOException;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.MethodOrderer;
import org.junit.jupiter.api.Order;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestMethodOrder;
import org.junit.jupiter.api.extension.ExtensionContext;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.api.extension.TestWatcher;

/**
 * The chart with {@code deviceDriver.namespace} on a cluster shaped like a user's ({@link
 * MultiNodeCluster}: one real node, a pod network, kube-proxy, CoreDNS, NetworkPolicy enforced):
 * the controllers in a namespace whose Pod Security level {@code restricted} is enforced, the
 * privileged driver in a namespace of its own at {@code privileged} (docs/user/install.md, "Running
 * the driver in its own namespace"). The driver trusts the publisher's CA from the ConfigMap the
 * chart writes in its namespace, the publisher accepts the driver's ServiceAccount from there and
 * its NetworkPolicy the driver's namespace, the node's pool is published and a pod's claim is
 * prepared on the node.
 *
 * <p>Then a second, driver-only release (install.md's second release for other nodes' devices, here
 * the simulated backend under the first release's second driver name) in the driver's namespace: it
 * has no CA of its own and takes the first release's from that ConfigMap ({@code
 * deviceDriver.publisherCA.configMap}); the first release's publisher accepts its ServiceAccount
 * ({@code slicePublisher.auth.extraServiceAccounts}) and publishes its pool too.
 */
@TestMethodOrder(MethodOrderer.OrderAnnotation.class)
class ChartSplitNamespacesIT {

  private static final String RELEASE = "kdra";
  private static final String SECOND = "kdra-second";
  private static final String NAMESPACE = "kdra-system";
  private static final String DRIVER_NAMESPACE = "kdra-driver";
  private static final String APPS = "apps";
  private static final String DRIVER = "gpu.kdra.io";

  /** The first release's second driver name, which its publisher serves: the second release's. */
  private static final String SECOND_DRIVER = "tpu.kdra.io";

  /** The simulated backend's built-in inventory: eight GPUs per node. */
  private static final int DEVICES_PER_NODE = 8;

  private static final List<String> SERVICES =
      List.of("slice-publisher", "device-driver", "claim-controller");

  /** The build's images are imported into the node under this registry ({@code localhost}). */
  private static final String REGISTRY = "localhost";

  private static final String INSTANCE = "app.kubernetes.io/instance";

  /** Three JVMs starting on a loaded 2-core machine. */
  private static final Duration ROLLOUT_TIMEOUT = Duration.ofSeconds(240);

  private static MultiNodeCluster cluster;
  private static KubernetesClient client;
  private static Path dir;

  @BeforeAll
  static void installedWithTheDriverInItsOwnNamespace() throws IOException {
    Assumptions.assumeTrue(
        MultiNodeCluster.available(), "a multi-node cluster needs root, ip and nsenter");
    BuiltImages.assumeBuilt(SERVICES);
    dir = Path.of("target", "chart-split").toAbsolutePath();
    TestFiles.deleteRecursively(dir);
    cluster = MultiNodeCluster.start(1, Path.of("target", "msn")).withDns().withNetworkPolicies();
    client = cluster.client;
    RealNode node = cluster.nodes.get(0);
    for (String service : SERVICES) {
      assertThat(BuiltImages.reference(service))
          .isEqualTo(REGISTRY + "/kdra/" + service + ":" + BuiltImages.appVersion());
      node.importImage(BuiltImages.archive(service), REGISTRY + "/kdra/" + service);
    }
    NodeRegistration.onConflictRetry(
        () ->
            client
                .nodes()
                .withName(node.name)
                .edit(
                    n -> {
                      n.getMetadata().getLabels().put("kdra.io/accelerator", "true");
                      return n;
                    }));
    createNamespaceEnforcing(NAMESPACE, "restricted");
    createNamespaceEnforcing(DRIVER_NAMESPACE, "privileged");
    client
        .namespaces()
        .resource(new NamespaceBuilder().withNewMetadata().withName(APPS).endMetadata().build())
        .create();
    OwnerOnly.write(
        dir.resolve("admin.kubeconfig"), cluster.api.kubeconfig(ClusterApiServer.ADMIN));
    // one replica each: one node; the second release's driver accepted from the start
    helm(
        "install-no-wait",
        RELEASE,
        """
        imageRegistry: %s
        deviceDriver:
          namespace: %s
        slicePublisher:
          replicas: 1
          auth:
            extraServiceAccounts: ["%s:%s-device-driver"]
        claimController:
          replicas: 1
        """
            .formatted(REGISTRY, DRIVER_NAMESPACE, DRIVER_NAMESPACE, SECOND));
  }

  @RegisterExtension
  static final TestWatcher DUMP_ON_FAILURE =
      new TestWatcher() {
        @Override
        public void testFailed(ExtensionContext context, Throwable cause) {
          dump(context.getRequiredTestMethod().getName());
        }
      };

  @AfterAll
  static void stopCluster() {
    if (cluster != null) {
      cluster.dumpTo(Path.of("target", "it-dumps", "ChartSplitNamespacesIT").toAbsolutePath());
      cluster.close();
    }
  }

  /**
   * The controllers run in the {@code restricted} namespace, the driver in its own: each pod was
   * admitted at its namespace's enforced level, and the driver's pool is published over TLS with
   * the CA from the ConfigMap in the driver's namespace.
   */
  @Test
  @Order(1)
  void theControllersRunRestrictedAndTheDriverPublishesFromItsOwnNamespace() {
    await("publisher, controller and driver Ready, the node's pool published")
        .atMost(ROLLOUT_TIMEOUT)
        .pollInterval(Duration.ofSeconds(1))
        .untilAsserted(
            () -> {
              assertThat(readyReplicas(RELEASE + "-slice-publisher")).isEqualTo(1);
              assertThat(readyReplicas(RELEASE + "-claim-controller")).isEqualTo(1);
              assertThat(driversReady(RELEASE)).as("drivers Ready").isEqualTo(1);
              assertThat(Dra.publishedDevices(client, DRIVER, nodeName()))
                  .isEqualTo(DEVICES_PER_NODE);
            });
    assertThat(pods(NAMESPACE, RELEASE))
        .extracting(p -> p.getMetadata().getLabels().get("app.kubernetes.io/component"))
        .containsExactlyInAnyOrder("slice-publisher", "claim-controller");
    assertThat(pods(DRIVER_NAMESPACE, RELEASE))
        .singleElement()
        .satisfies(
            p -> {
              assertThat(p.getSpec().getNodeName()).isEqualTo(nodeName());
              assertThat(p.getSpec().getVolumes())
                  .filteredOn(v -> v.getName().equals("publisher-ca"))
                  .singleElement()
                  .satisfies(
                      v ->
                          assertThat(v.getConfigMap().getName())
                              .isEqualTo(RELEASE + "-device-driver-publisher-ca"));
            });
  }

  /** A pod's template claim is allocated from the node's pool and prepared by the driver. */
  @Test
  @Order(2)
  void aPodWithATemplateClaimGetsItsDevice() {
    awaitDefaultServiceAccount(APPS);
    client.resource(Dra.template(APPS, "one-gpu", DRIVER, 1)).create();
    Pod pod =
        client
            .resource(RealPods.showingDevices(Dra.podWithTemplate(APPS, "first", "one-gpu")))
            .create();
    RealNode node = cluster.nodes.get(0);
    List<String> log = RealPods.awaitListed(client, node, pod);
    ResourceClaim claim = Dra.claimOf(client, pod, "gpu");
    assertThat(Dra.devices(claim)).singleElement().asString().startsWith(node.name + "/gpu-");
    assertThat(log).contains("KDRA_DEVICE_0=gpu-" + RealPods.deviceIndex(claim));
  }

  /**
   * A driver-only second release in the driver's namespace trusts the first release's publisher
   * with the CA ConfigMap there and publishes its own pool through it.
   */
  @Test
  @Order(3)
  void aDriverOnlySecondReleasePublishesThroughTheFirstReleasesPublisher() {
    helm(
        "install-no-wait",
        SECOND,
        """
        imageRegistry: %s
        driverNames: {gpu: %s, tpu: second-unused.kdra.io}
        deviceDriver:
          namespace: %s
          publisherCA: {configMap: %s-device-driver-publisher-ca}
          config:
            publisher: {address: "%s-slice-publisher.%s.svc:9000"}
        slicePublisher: {enabled: false}
        claimController: {enabled: false}
        deviceClasses: {gpu: {enabled: false}, tpu: {enabled: false}}
        admission: {opaqueConfigPolicy: {enabled: false}}
        """
            .formatted(REGISTRY, SECOND_DRIVER, DRIVER_NAMESPACE, RELEASE, RELEASE, NAMESPACE));
    await("the second release's driver Ready and its pool published")
        .atMost(ROLLOUT_TIMEOUT)
        .pollInterval(Duration.ofSeconds(1))
        .untilAsserted(
            () -> {
              assertThat(driversReady(SECOND)).as("second drivers Ready").isEqualTo(1);
              assertThat(Dra.publishedDevices(client, SECOND_DRIVER, nodeName()))
                  .isEqualTo(DEVICES_PER_NODE);
            });
    assertThat(Dra.publishedDevices(client, DRIVER, nodeName()))
        .as("the first release's pool stays")
        .isEqualTo(DEVICES_PER_NODE);
  }

  private static void helm(String command, String release, String values) {
    Path file = dir.resolve(release + "-values.yaml");
    TestFiles.write(file, values);
    HelmRelease.run(
        command,
        ServiceProcess.moduleDir("helm").resolve("kdra"),
        release,
        NAMESPACE,
        dir.resolve("admin.kubeconfig"),
        List.of(file));
  }

  private static void createNamespaceEnforcing(String name, String level) {
    client
        .namespaces()
        .resource(
            new NamespaceBuilder()
                .withNewMetadata()
                .withName(name)
                .addToLabels("pod-security.kubernetes.io/enforce", level)
                .endMetadata()
                .build())
        .create();
  }

  private static String nodeName() {
    return cluster.nodes.get(0).name;
  }

  private static int readyReplicas(String deployment) {
    Deployment d = client.apps().deployments().inNamespace(NAMESPACE).withName(deployment).get();
    Integer ready = d == null || d.getStatus() == null ? null : d.getStatus().getReadyReplicas();
    return ready == null ? 0 : ready;
  }

  private static int driversReady(String release) {
    DaemonSet ds =
        client
            .apps()
            .daemonSets()
            .inNamespace(DRIVER_NAMESPACE)
            .withName(release + "-device-driver")
            .get();
    Integer ready = ds == null || ds.getStatus() == null ? null : ds.getStatus().getNumberReady();
    return ready == null ? 0 : ready;
  }

  private static List<Pod> pods(String namespace, String release) {
    return client.pods().inNamespace(namespace).withLabel(INSTANCE, release).list().getItems();
  }

  private static void awaitDefaultServiceAccount(String namespace) {
    await()
        .atMost(Duration.ofSeconds(60))
        .until(
            () ->
                client.serviceAccounts().inNamespace(namespace).withName("default").get() != null);
  }

  /** The pods of every namespace of the test, the events and the workloads. */
  private static void dump(String what) {
    if (client == null) {
      return;
    }
    Path target = Path.of("target", "it-dumps", "ChartSplitNamespacesIT", what).toAbsolutePath();
    for (String ns : List.of(NAMESPACE, DRIVER_NAMESPACE, APPS)) {
      for (Pod pod : client.pods().inNamespace(ns).list().getItems()) {
        TestFiles.write(
            target.resolve("pods").resolve(ns + "-" + pod.getMetadata().getName() + ".yaml"),
            Serialization.asYaml(pod));
      }
    }
    TestFiles.write(
        target.resolve("events.yaml"),
        Serialization.asYaml(client.v1().events().inAnyNamespace().list().getItems()));
    TestFiles.write(
        target.resolve("workloads.yaml"),
        Serialization.asYaml(
            List.of(
                client.apps().daemonSets().inAnyNamespace().list().getItems(),
                client.apps().deployments().inAnyNamespace().list().getItems())));
    System.out.println("[chart-split] " + what + " failed; objects in " + target);
  }
}
