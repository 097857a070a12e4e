package io.kdra.it;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.fabric8.kubernetes.api.model.ConfigMapBuilder;
import io.fabric8.kubernetes.api.model.NamespaceBuilder;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.PodSpec;
import io.fabric8.kubernetes.api.model.Secret;
import io.fabric8.kubernetes.api.model.apps.Deployment;
import io.fabric8.kubernetes.api.model.resource.v1.DeviceClass;
import io.fabric8.kubernetes.api.model.resource.v1.ResourceClaim;
import io.fabric8.kubernetes.api.model.resource.v1.ResourceClaimTemplate;
import io.fabric8.kubernetes.api.model.resource.v1.ResourceSlice;
import io.fabric8.kubernetes.client.Config;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.utils.Serialization;
import io.grpc.Status;
import io.kdra.it.chart.HelmRelease;
import io.kdra.it.chart.KdraChart;
import io.kdra.it.controlplane.ControlPlane;
import io.kdra.it.controlplane.UpstreamControllers;
import io.kdra.it.nodes.NodeRegistration;
import io.kdra.it.nodes.RealNode;
import io.kdra.it.nodes.RealNodeBinaries;
import io.kdra.it.nodes.SimulatedNode;
import io.kdra.it.registry.LocalRegistry;
import io.kdra.it.services.BuiltImages;
import io.kdra.it.services.Dra;
import io.kdra.it.services.PublisherTls;
import io.kdra.it.services.RealPods;
import io.kdra.it.services.Stack;
import io.kdra.it.support.OwnerOnly;
import io.kdra.it.support.ServiceProcess;
import io.kdra.it.support.TestFiles;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.URI;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.cert.X509Certificate;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Base64;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.regex.Pattern;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.MethodOrderer;
import org.junit.jupiter.api.Order;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestMethodOrder;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.extension.ExtensionContext;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.api.extension.TestWatcher;

/**
 * The chart as users install it: {@code helm install} of {@code helm/kdra} (the Helm helm-java
 * embeds, {@link HelmRelease}) onto a complete control plane (kube-apiserver with ServiceAccount
 * admission, kube-controller-manager, kube-scheduler: {@link UpstreamControllers}) and a real node
 * (the real kubelet and containerd, {@link RealNode}), pulling the build's four images from a
 * {@link LocalRegistry}. Nothing is started by the harness but what a cluster is made of: the
 * DaemonSet controller puts the device-driver on the labelled node, the Deployments' pods are
 * scheduled by kube-scheduler, and the pods get their ServiceAccount tokens from the kubelet.
 *
 * <p>The values are docs/user/install.md's walkthrough for a cluster without a pod network (these
 * nodes have none, nor kube-proxy or cluster DNS): the host's network with a port per service, the
 * API server's address in place of the {@code kubernetes} Service, one replica each (one node) and
 * Deployments that stop the old pod before starting the new one. The driver names are this test's
 * own, so that its DeviceClasses and slices stand beside the other tests' on the shared API server.
 * Ordered: install, workloads, TLS, upgrade, CA rotation, uninstall.
 */
@ExtendWith(ControlPlane.class)
@TestMethodOrder(MethodOrderer.OrderAnnotation.class)
class HelmInstallIT {

  private static final String NODE = "helm-a";
  private static final String RELEASE = "kdra-e2e";
  private static final String NAMESPACE = "kdra-e2e";
  private static final String APPS = "e2e-apps";
  private static final String GPU_DRIVER = "gpu.e2e.kdra.io";
  private static final String TPU_DRIVER = "tpu.e2e.kdra.io";
  private static final String INVENTORY = "gpu-inventory";
  private static final List<String> SERVICES = BuiltImages.SERVICES;
  private static final String INSTANCE = "app.kubernetes.io/instance";
  private static final Duration INSTALLED_TIMEOUT = Duration.ofSeconds(300);

  /** The kubelet updates a Secret's volume within its sync period (1m) and a cache's lifetime. */
  private static final Duration KUBELET_SYNC_TIMEOUT = Duration.ofSeconds(150);

  private static final Pattern CONNECTED = Pattern.compile("inventory stream to \\S+ connected");

  /** The kubelet deletes an unregistered driver's slices after 30 s, then retries with backoff. */
  private static final Duration SLICES_WIPED_TIMEOUT = Duration.ofSeconds(120);

  private static KubernetesClient client;
  private static LocalRegistry registry;
  private static RealNode node;
  private static UpstreamControllers upstream;
  private static Path dir;
  private static Path kubeconfig;
  private static Path values;
  private static boolean installed;

  /** Each service's ports on the host's network, kept across the upgrade. */
  private static final Map<String, Integer> PORTS = new LinkedHashMap<>();

  @BeforeAll
  static void installed(ControlPlane.Running cp) throws IOException {
    BuiltImages.assumeRunnable();
    client = cp.client();
    dir = Path.of("target", "helm-it").toAbsolutePath();
    TestFiles.deleteRecursively(dir);
    Files.createDirectories(dir);
    // the ComputeClass CRD, as GKE has it (cluster.gke: the chart installs no copy of its own)
    KdraChart.install(client);
    String adminYaml = cp.server().getKubeConfigYaml();
    Config admin = Config.fromKubeconfig(adminYaml);
    kubeconfig = dir.resolve("admin.kubeconfig");
    OwnerOnly.write(kubeconfig, adminYaml);
    Path caFile = dir.resolve("ca.crt");
    TestFiles.write(caFile, BuiltImages.caCertificate(admin));
    upstream = UpstreamControllers.start(cp, admin, caFile, dir.resolve("logs"));
    registry = LocalRegistry.start();
    String tag = BuiltImages.appVersion();
    for (String service : SERVICES) {
      registry.push(BuiltImages.archive(service), "kdra/" + service, tag);
    }
    node =
        RealNode.start(
            NODE,
            Path.of("target", "rn", NODE).toAbsolutePath(),
            RealNodeBinaries.fromCache(),
            client,
            adminYaml);
    // the walkthrough's first step: the DaemonSet's affinity picks labelled accelerator nodes
    // (again on a conflict: the kubelet writes its new Node's status meanwhile)
    NodeRegistration.onConflictRetry(
        () ->
            client
                .nodes()
                .withName(NODE)
                .edit(
                    n -> {
                      n.getMetadata().getLabels().put("kdra.io/accelerator", "true");
                      return n;
                    }));
    for (String ns : List.of(NAMESPACE, APPS)) {
      client
          .namespaces()
          .resource(new NamespaceBuilder().withNewMetadata().withName(ns).endMetadata().build())
          .serverSideApply();
    }
    client
        .configMaps()
        .inNamespace(NAMESPACE)
        .resource(
            new ConfigMapBuilder()
                .withNewMetadata()
                .withName(INVENTORY)
                .endMetadata()
                .addToData(
                    "inventory.yaml",
                    SimulatedNode.l4sWithDeviceNodes(NODE, "/dev/fuse", "/dev/vsock").inventory())
                .build())
        .serverSideApply();
    values = dir.resolve("values.yaml");
    TestFiles.write(values, values(URI.create(admin.getMasterUrl()), "INFO"));
    try {
      long started = System.nanoTime();
      helm("install", values);
      installed = true;
      await()
          .atMost(INSTALLED_TIMEOUT)
          .untilAsserted(
              () -> {
                assertThat(readyReleasePods())
                    .as("ready pods of the release")
                    .containsExactlyInAnyOrderElementsOf(SERVICES);
                assertThat(Dra.publishedDevices(client, GPU_DRIVER, NODE))
                    .as("devices published for " + NODE)
                    .isEqualTo(2);
              });
      System.out.printf(
          "[helm-it] from helm install to four ready pods and the node's devices"
              + " published: %d ms%n",
          (System.nanoTime() - started) / 1_000_000);
    } catch (RuntimeException | AssertionError e) {
      dump("install");
      throw e;
    }
  }

  @RegisterExtension
  static final TestWatcher DUMP_ON_FAILURE =
      new TestWatcher() {
        @Override
        public void testFailed(ExtensionContext context, Throwable cause) {
          dump(context.getRequiredTestMethod().getName());
        }
      };

  /**
   * What the chart made runs where a cluster runs it: the driver by the DaemonSet controller on the
   * labelled node, the Deployments' pods through kube-scheduler, every one from the local
   * registry's images, with its ServiceAccount token from the kubelet.
   */
  @Test
  @Order(1)
  void theChartsWorkloadsRunWhereTheClusterPutsThem() {
    for (Pod pod : releasePods()) {
      assertThat(pod.getSpec().getNodeName()).isEqualTo(NODE);
      assertThat(pod.getSpec().getSchedulerName()).isEqualTo("default-scheduler");
      assertThat(pod.getMetadata().getOwnerReferences())
          .singleElement()
          .satisfies(o -> assertThat(o.getKind()).isIn("ReplicaSet", "DaemonSet"));
      assertThat(pod.getStatus().getContainerStatuses().get(0).getImage())
          .startsWith(registry.address + "/kdra/");
      assertThat(pod.getSpec().getVolumes())
          .as("the ServiceAccount token volume")
          .anyMatch(v -> v.getName().startsWith("kube-api-access-"));
    }
    assertThat(client.resources(ResourceSlice.class).list().getItems())
        .filteredOn(s -> GPU_DRIVER.equals(s.getSpec().getDriver()))
        .allSatisfy(s -> assertThat(s.getSpec().getNodeName()).isEqualTo(NODE));
    assertThat(client.resources(DeviceClass.class).withName(GPU_DRIVER).get())
        .as("the chart's DeviceClass")
        .isNotNull();
  }

  /**
   * The inventory travels over TLS: the publisher's gRPC port presents the chart's certificate for
   * its Service's name, chained to the CA in the release's Secret (the CA the drivers trust, and
   * they published above), and a plain-text gRPC client gets no stream.
   */
  @Test
  @Order(2)
  void theInventoryGrpcServesOnlyTlsWithTheChartsCertificate() throws Exception {
    Secret tls =
        client.secrets().inNamespace(NAMESPACE).withName(RELEASE + "-slice-publisher-tls").get();
    String serviceName = RELEASE + "-slice-publisher." + NAMESPACE + ".svc";
    X509Certificate served =
        PublisherTls.served(
            "127.0.0.1", PORTS.get("grpc"), serviceName, tls.getData().get("ca.crt"));
    assertThat(PublisherTls.names(served)).contains(serviceName);

    Status plainText =
        PublisherTls.plainTextStream("127.0.0.1", PORTS.get("grpc"), GPU_DRIVER, NODE);
    assertThat(plainText).as("a plain-text client's stream").isNotNull();
    assertThat(plainText.getCode()).isEqualTo(Status.Code.UNAVAILABLE);
  }

  /**
   * The seed's Deployment story, scheduled by kube-scheduler from our driver's slices:
   * kube-controller-manager creates a claim per replica from the template, each replica gets a
   * device of its own and sees it through CDI; scaled to zero, the claims go and the driver removes
   * its CDI specs.
   */
  @Test
  @Order(3)
  void replicasWithATemplateEachGetTheirOwnDeviceAndScalingDownFreesThem() {
    client.resource(Dra.template(APPS, "one-gpu", GPU_DRIVER, 1)).create();
    PodSpec spec = RealPods.showingDevices(Dra.podWithTemplate(APPS, "x", "one-gpu")).getSpec();
    spec.setSchedulerName(null);
    Deployment trainer = Dra.deployment(APPS, "trainer", 2, spec);
    client.resource(trainer).create();

    await()
        .atMost(RealPods.POD_TIMEOUT)
        .untilAsserted(
            () ->
                assertThat(
                        client
                            .apps()
                            .deployments()
                            .inNamespace(APPS)
                            .withName("trainer")
                            .get()
                            .getStatus()
                            .getAvailableReplicas())
                    .isEqualTo(2));
    List<Pod> pods = client.pods().inNamespace(APPS).withLabel("app", "trainer").list().getItems();
    List<String> devices = new ArrayList<>();
    for (Pod p : pods) {
      assertThat(p.getSpec().getSchedulerName()).isEqualTo("default-scheduler");
      ResourceClaim claim = Dra.claimOf(client, p, "gpu");
      assertThat(claim.getStatus().getReservedFor())
          .extracting(r -> r.getUid())
          .containsExactly(p.getMetadata().getUid());
      assertThat(RealPods.awaitListed(client, node, p))
          .contains("KDRA_DEVICE_0=gpu-" + RealPods.deviceIndex(claim));
      devices.addAll(Dra.devices(claim));
    }
    assertThat(devices).containsExactlyInAnyOrder(NODE + "/gpu-0", NODE + "/gpu-1");
    assertThat(RealPods.specFiles(node.cdiDir())).hasSize(2);

    client.apps().deployments().inNamespace(APPS).withName("trainer").scale(0);
    await()
        .atMost(RealPods.POD_TIMEOUT)
        .untilAsserted(
            () -> {
              assertThat(
                      client.pods().inNamespace(APPS).withLabel("app", "trainer").list().getItems())
                  .isEmpty();
              assertThat(client.resources(ResourceClaim.class).inNamespace(APPS).list().getItems())
                  .isEmpty();
              assertThat(RealPods.specFiles(node.cdiDir())).isEmpty();
            });
    client.apps().deployments().inNamespace(APPS).withName("trainer").delete();
  }

  /**
   * {@code helm upgrade} with a changed value restarts every pod of the release (the
   * configuration's checksum is a pod annotation); a pod placed by the claim-controller before
   * keeps running with its prepared device, and the new driver unprepares it when it goes.
   */
  @Test
  @Order(4)
  void anUpgradeRollsTheServicesWithoutLosingAPreparedClaim() {
    Pod pod =
        client
            .resource(RealPods.showingDevices(Dra.podWithTemplate(APPS, "kept", "one-gpu")))
            .create();
    List<String> before = RealPods.awaitListed(client, node, pod);
    ResourceClaim claim = Dra.claimOf(client, pod, "gpu");
    assertThat(before).contains("KDRA_DEVICE_0=gpu-" + RealPods.deviceIndex(claim));
    assertThat(Dra.get(client, pod).getSpec().getSchedulerName()).isEqualTo(Stack.SCHEDULER);
    assertThat(RealPods.specFiles(node.cdiDir())).hasSize(1);
    Map<String, String> oldPods = releasePodUids();

    TestFiles.write(
        values,
        values(URI.create(Config.fromKubeconfig(readKubeconfig()).getMasterUrl()), "DEBUG"));
    helm("upgrade", values);
    await()
        .atMost(INSTALLED_TIMEOUT)
        .untilAsserted(
            () -> {
              Map<String, String> now = releasePodUids();
              assertThat(now.keySet()).containsExactlyInAnyOrderElementsOf(SERVICES);
              now.forEach(
                  (service, uid) ->
                      assertThat(uid).as(service + " replaced").isNotEqualTo(oldPods.get(service)));
              assertThat(readyReleasePods()).containsExactlyInAnyOrderElementsOf(SERVICES);
              assertThat(Dra.publishedDevices(client, GPU_DRIVER, NODE)).isEqualTo(2);
            });
    assertThat(
            client
                .configMaps()
                .inNamespace(NAMESPACE)
                .withName(RELEASE + "-device-driver")
                .get()
                .getData()
                .get("application.properties"))
        .contains("quarkus.log.level=DEBUG");

    Pod kept = Dra.get(client, pod);
    assertThat(kept.getMetadata().getUid()).isEqualTo(pod.getMetadata().getUid());
    assertThat(kept.getStatus().getPhase()).isEqualTo("Running");
    assertThat(kept.getStatus().getContainerStatuses().get(0).getRestartCount()).isZero();
    ResourceClaim after = Dra.claimOf(client, kept, "gpu");
    assertThat(Dra.devices(after)).isEqualTo(Dra.devices(claim));
    assertThat(after.getStatus().getReservedFor())
        .extracting(r -> r.getUid())
        .containsExactly(pod.getMetadata().getUid());
    assertThat(RealPods.specFiles(node.cdiDir())).hasSize(1);

    client.resource(kept).delete();
    await()
        .atMost(RealPods.POD_TIMEOUT)
        .untilAsserted(
            () -> {
              assertThat(Dra.get(client, pod)).isNull();
              assertThat(client.resources(ResourceClaim.class).inNamespace(APPS).list().getItems())
                  .isEmpty();
              assertThat(RealPods.specFiles(node.cdiDir()))
                  .as("CDI specs after the new driver unprepared")
                  .isEmpty();
            });
  }

  /**
   * {@code slicePublisher.tls.caRotation} (docs/user/upgrade.md, "Rotating the chart's CA"): the
   * chart's CA replaced in three upgrades while the driver runs on. trustNew restarts nothing and
   * the kubelet gives the driver's {@code ca.crt} both CAs; serveNew (refused by the chart for two
   * minutes after trustNew, which the test waits out by trying again) restarts only the publisher,
   * which then serves a certificate of the new CA; dropOld leaves the new CA alone in the bundle.
   * The driver never refuses the publisher's certificate, is never restarted, and publishes its
   * devices again over the new CA.
   */
  @Test
  @Order(5)
  void theChartsCaRotatesInThreeUpgradesWithoutTheDriverRefusingThePublisher() throws Exception {
    Pod driver = releasePod("device-driver");
    Map<String, String> before = releasePodUids();
    String serviceName = RELEASE + "-slice-publisher." + NAMESPACE + ".svc";
    String oldCa = tlsSecret().getData().get("ca.crt");

    helm("upgrade", values, caRotation("trustNew"));
    Map<String, String> trusting = tlsSecret().getData();
    String newCa = trusting.get("new-ca.crt");
    assertThat(newCa).as("the new CA waiting in the Secret").isNotNull();
    assertThat(pemCount(trusting.get("ca.crt"))).isEqualTo(2);
    assertThat(releasePodUids()).as("trusting a new CA restarts nothing").isEqualTo(before);
    PublisherTls.served("127.0.0.1", PORTS.get("grpc"), serviceName, oldCa);
    await()
        .atMost(KUBELET_SYNC_TIMEOUT)
        .untilAsserted(
            () ->
                assertThat(mountedCaCertificates(driver))
                    .as("certificates in the driver's ca.crt")
                    .isEqualTo(2));

    int connectedBefore = connectedCount(driver);
    // the chart's two minutes after trustNew, then the publisher's rollout (helm waits for it)
    await()
        .atMost(Duration.ofSeconds(120).plus(INSTALLED_TIMEOUT))
        .pollInterval(Duration.ofSeconds(10))
        .ignoreExceptionsMatching(e -> String.valueOf(e.getMessage()).contains("Run this upgrade"))
        .until(
            () -> {
              helm("upgrade", values, caRotation("serveNew"));
              return true;
            });
    await()
        .atMost(INSTALLED_TIMEOUT)
        .untilAsserted(
            () -> {
              Map<String, String> now = releasePodUids();
              assertThat(now.get("slice-publisher")).isNotEqualTo(before.get("slice-publisher"));
              assertThat(readyReleasePods()).containsExactlyInAnyOrderElementsOf(SERVICES);
              assertThat(connectedCount(driver)).isGreaterThan(connectedBefore);
              assertThat(Dra.publishedDevices(client, GPU_DRIVER, NODE)).isEqualTo(2);
            });
    PublisherTls.served("127.0.0.1", PORTS.get("grpc"), serviceName, newCa);

    Map<String, String> serving = releasePodUids();
    helm("upgrade", values, caRotation("dropOld"));
    assertThat(tlsSecret().getData().get("ca.crt")).isEqualTo(newCa);
    assertThat(tlsSecret().getData()).containsOnlyKeys("ca.crt", "tls.crt", "tls.key");
    await()
        .atMost(KUBELET_SYNC_TIMEOUT)
        .untilAsserted(() -> assertThat(mountedCaCertificates(driver)).isEqualTo(1));
    assertThat(releasePodUids()).as("dropping the old CA restarts nothing").isEqualTo(serving);
    PublisherTls.served("127.0.0.1", PORTS.get("grpc"), serviceName, newCa);

    Pod driverNow = Dra.get(client, driver);
    assertThat(driverNow.getMetadata().getUid()).isEqualTo(driver.getMetadata().getUid());
    assertThat(driverNow.getStatus().getContainerStatuses().get(0).getRestartCount()).isZero();
    assertThat(node.containerLog(driver, "device-driver"))
        .as("the driver's log")
        .noneMatch(l -> l.contains("the publisher's certificate is not trusted"));
  }

  /**
   * {@code helm uninstall} leaves nothing of the release behind: no object of the chart, no pod, no
   * ResourceSlice (the kubelet deletes an unregistered driver's slices of its node), no claim, no
   * CDI spec, and no finalizer that only kdra would remove: a claim the claim-controller allocated,
   * deleted after the uninstall, goes (kube-controller-manager lifts upstream's finalizer of an
   * unreserved claim).
   */
  @Test
  @Order(6)
  void uninstallLeavesNoSlicesClaimsSpecsFinalizersOrObjectsBehind() {
    client.resources(ResourceClaimTemplate.class).inNamespace(APPS).withName("one-gpu").delete();
    ResourceClaim standalone =
        client.resource(Dra.claim(APPS, "standalone", GPU_DRIVER, 1)).create();
    Pod user =
        client
            .resource(RealPods.showingDevices(Dra.podWithClaim(APPS, "user", "standalone")))
            .create();
    RealPods.awaitListed(client, node, user);
    assertThat(client.resource(standalone).get().getMetadata().getFinalizers())
        .as("upstream's finalizer on the allocated claim")
        .isNotEmpty();
    client.resource(user).delete();
    await()
        .atMost(RealPods.POD_TIMEOUT)
        .untilAsserted(
            () -> {
              assertThat(Dra.get(client, user)).isNull();
              assertThat(client.resource(standalone).get().getStatus().getReservedFor()).isEmpty();
              assertThat(RealPods.specFiles(node.cdiDir())).isEmpty();
            });

    helm("uninstall", null);
    installed = false;
    await()
        .atMost(SLICES_WIPED_TIMEOUT)
        .untilAsserted(
            () -> {
              assertThat(client.pods().inNamespace(NAMESPACE).list().getItems())
                  .extracting(p -> p.getMetadata().getName())
                  .isEmpty();
              assertThat(KdraChart.releaseObjects(client, NAMESPACE, RELEASE))
                  .extracting(o -> o.getKind() + " " + o.getMetadata().getName())
                  .isEmpty();
              assertThat(client.resources(ResourceSlice.class).list().getItems())
                  .filteredOn(
                      s -> List.of(GPU_DRIVER, TPU_DRIVER).contains(s.getSpec().getDriver()))
                  .extracting(s -> s.getMetadata().getName())
                  .isEmpty();
            });
    client.resource(standalone).delete();
    await()
        .atMost(RealPods.POD_TIMEOUT)
        .untilAsserted(
            () ->
                assertThat(
                        client.resources(ResourceClaim.class).inNamespace(APPS).list().getItems())
                    .extracting(
                        c -> c.getMetadata().getName() + " " + c.getMetadata().getFinalizers())
                    .isEmpty());
    assertThat(RealPods.specFiles(node.cdiDir())).isEmpty();
  }

  @AfterAll
  static void uninstalledAndNodeGone() {
    try {
      if (installed) {
        try {
          helm("uninstall", null);
        } catch (RuntimeException e) {
          System.out.println("[helm] uninstall after the tests failed: " + e.getMessage());
        }
      }
      if (client != null) {
        for (String ns : List.of(APPS, NAMESPACE)) {
          client.namespaces().withName(ns).delete();
        }
      }
    } finally {
      if (node != null) {
        node.close();
      }
      if (registry != null) {
        registry.close();
      }
      if (upstream != null) {
        upstream.close();
      }
    }
  }

  /**
   * The walkthrough's values for a cluster without a pod network, with this run's registry, ports,
   * API server and node directories.
   */
  private static String values(URI api, String logLevel) {
    if (PORTS.isEmpty()) {
      for (String key : List.of("driver", "publisher", "grpc", "controller", "bridge")) {
        PORTS.put(key, ServiceProcess.freePort());
      }
    }
    Map<String, Integer> ports = PORTS;
    return """
        imageRegistry: %s
        driverNames: {gpu: %s, tpu: %s}
        cluster: {gke: true}
        logLevel: %s
        hostNetwork: true
        apiServer: {host: "%s", port: "%d"}
        deviceDriver:
          httpPort: %d
          kubeletDir: %s
          cdiDir: %s
          inventory: {configMap: %s, key: inventory.yaml}
          config:
            publisher: {address: "127.0.0.1:%d"}
        slicePublisher:
          replicas: 1
          httpPort: %d
          grpcPort: %d
          strategy: {type: Recreate}
        claimController:
          replicas: 1
          httpPort: %d
          strategy: {type: Recreate}
        computeClassBridge:
          enabled: true
          replicas: 1
          httpPort: %d
          strategy: {type: Recreate}
        admission:
          opaqueConfigWebhook: {enabled: false}
        """
        .formatted(
            registry.address,
            GPU_DRIVER,
            TPU_DRIVER,
            logLevel,
            api.getHost(),
            api.getPort(),
            ports.get("driver"),
            node.pluginsDir().getParent(),
            node.cdiDir(),
            INVENTORY,
            ports.get("grpc"),
            ports.get("publisher"),
            ports.get("grpc"),
            ports.get("controller"),
            ports.get("bridge"));
  }

  private static String helm(String verb, Path valuesFile, Path... more) {
    List<Path> files = new ArrayList<>();
    if (valuesFile != null) {
      files.add(valuesFile);
    }
    files.addAll(List.of(more));
    return HelmRelease.run(
        verb,
        ServiceProcess.moduleDir("helm").resolve("kdra"),
        RELEASE,
        NAMESPACE,
        kubeconfig,
        files);
  }

  /** A values file with one step of the chart's CA rotation, laid over the release's values. */
  private static Path caRotation(String step) {
    Path file = dir.resolve("ca-rotation-" + step + ".yaml");
    TestFiles.write(file, "slicePublisher:\n  tls:\n    caRotation: " + step + "\n");
    return file;
  }

  private static Secret tlsSecret() {
    return client.secrets().inNamespace(NAMESPACE).withName(RELEASE + "-slice-publisher-tls").get();
  }

  private static int pemCount(String base64) {
    String pem = new String(Base64.getDecoder().decode(base64));
    return pem.split("-----BEGIN CERTIFICATE-----", -1).length - 1;
  }

  /** The certificates in the driver container's copy of the CA, as the kubelet wrote it. */
  private static int mountedCaCertificates(Pod driver) {
    String id = Dra.get(client, driver).getStatus().getContainerStatuses().get(0).getContainerID();
    String pem =
        node.crictl(
            "exec",
            id.substring(id.indexOf("://") + 3),
            "cat",
            "/var/run/secrets/kdra.io/publisher-ca/ca.crt");
    return pem.split("-----BEGIN CERTIFICATE-----", -1).length - 1;
  }

  /** How often the driver's inventory stream was acknowledged. */
  private static int connectedCount(Pod driver) {
    return (int)
        node.containerLog(driver, "device-driver").stream()
            .filter(l -> CONNECTED.matcher(l).find())
            .count();
  }

  private static Pod releasePod(String component) {
    return releasePods().stream()
        .filter(p -> p.getMetadata().getDeletionTimestamp() == null)
        .filter(
            p -> component.equals(p.getMetadata().getLabels().get("app.kubernetes.io/component")))
        .findFirst()
        .orElseThrow();
  }

  private static List<Pod> releasePods() {
    return client.pods().inNamespace(NAMESPACE).withLabel(INSTANCE, RELEASE).list().getItems();
  }

  /** The component of each ready pod of the release. */
  private static List<String> readyReleasePods() {
    return releasePods().stream()
        .filter(p -> p.getMetadata().getDeletionTimestamp() == null)
        .filter(
            p ->
                p.getStatus().getConditions().stream()
                    .anyMatch(c -> c.getType().equals("Ready") && c.getStatus().equals("True")))
        .map(p -> p.getMetadata().getLabels().get("app.kubernetes.io/component"))
        .toList();
  }

  /** Component to pod UID, of the pods not being deleted. */
  private static Map<String, String> releasePodUids() {
    Map<String, String> uids = new LinkedHashMap<>();
    for (Pod p : releasePods()) {
      if (p.getMetadata().getDeletionTimestamp() == null) {
        uids.put(
            p.getMetadata().getLabels().get("app.kubernetes.io/component"),
            p.getMetadata().getUid());
      }
    }
    return uids;
  }

  /** The node's logs, the control plane's, and the release's and the apps' pods. */
  private static void dump(String what) {
    Path target = Path.of("target", "it-dumps", "HelmInstallIT", what).toAbsolutePath();
    if (node != null) {
      node.dumpTo(target);
    }
    if (client != null) {
      for (String ns : List.of(NAMESPACE, APPS)) {
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
          target.resolve("daemonsets.yaml"),
          Serialization.asYaml(
              client.apps().daemonSets().inNamespace(NAMESPACE).list().getItems()));
      TestFiles.write(
          target.resolve("deployments.yaml"),
          Serialization.asYaml(
              client.apps().deployments().inNamespace(NAMESPACE).list().getItems()));
    }
    System.out.println(
        "[helm-it] "
            + what
            + " failed; logs and objects in "
            + target
            + " (kube-controller-manager's and kube-scheduler's logs in "
            + dir.resolve("logs")
            + ")");
  }

  private static String readKubeconfig() {
    try {
      return Files.readString(kubeconfig);
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }
}
