package io.kdra.it;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import com.fasterxml.jackson.databind.ObjectMapper;
import io.fabric8.kubernetes.api.model.NamespaceBuilder;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.PodBuilder;
import io.fabric8.kubernetes.api.model.Secret;
import io.fabric8.kubernetes.api.model.apps.DaemonSet;
import io.fabric8.kubernetes.api.model.apps.Deployment;
import io.fabric8.kubernetes.api.model.coordination.v1.Lease;
import io.fabric8.kubernetes.api.model.resource.v1.DeviceClaimConfiguration;
import io.fabric8.kubernetes.api.model.resource.v1.DeviceClaimConfigurationBuilder;
import io.fabric8.kubernetes.api.model.resource.v1.ResourceClaim;
import io.fabric8.kubernetes.api.model.resource.v1.ResourceSlice;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientException;
import io.fabric8.kubernetes.client.Watch;
import io.fabric8.kubernetes.client.Watcher;
import io.fabric8.kubernetes.client.WatcherException;
import io.fabric8.kubernetes.client.utils.Serialization;
import io.grpc.Status;
import io.kdra.core.config.OpaqueConfigDecoder;
import java.io.IOException;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.regex.Pattern;
import java.util.stream.Collectors;
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
 * The chart's defaults on a cluster shaped like a user's ({@link MultiNodeCluster}: three real
 * nodes, a pod network, kube-proxy, CoreDNS, the Node authorizer): {@code helm install} as the
 * install walkthrough (docs/user/install.md) does it, with only what a user must set here, the
 * images' registry (the build's images are imported into every node's containerd under their own
 * name, as a user loads locally built images into the nodes; the default pull policy IfNotPresent
 * then finds them). The device backend is the default, simulated, with its built-in eight GPUs per
 * node. No hostNetwork, no API-server address (pods reach it through the {@code kubernetes}
 * Service), two publishers and two controllers: the drivers find the publisher by its Service's DNS
 * name, which kube-proxy routes to either replica.
 *
 * <p>The chart's NetworkPolicy is rendered; whether it is enforced is {@code MultiNodeClusterIT}'s
 * question (it needs a kernel with nftables' queue).
 *
 * <p>Ordered: install, pools, TLS and DNS, a claim, the publisher leader's fail-over.
 */
@TestMethodOrder(MethodOrderer.OrderAnnotation.class)
class ChartDefaultsMultiNodeIT {

  private static final int NODES = 3;
  private static final String RELEASE = "kdra";
  private static final String NAMESPACE = "kdra-system";
  private static final String APPS = "apps";

  /** The chart's default driver name (driverNames.gpu) and its DeviceClass. */
  private static final String DRIVER = "gpu.kdra.io";

  /** The simulated backend's built-in inventory: eight GPUs per node. */
  private static final int DEVICES_PER_NODE = 8;

  /** What the chart's defaults run (the computeclass-bridge is off by default). */
  private static final List<String> DEFAULT_SERVICES =
      List.of("slice-publisher", "device-driver", "claim-controller");

  /**
   * The registry part of the images' names as the build names them ({@code
   * localhost/kdra/<service>:<tag>}, podman's name for a local image), as a user who loads locally
   * built images into the nodes sets it; the chart's default pull policy, IfNotPresent, then finds
   * them in each node's containerd.
   */
  private static final String REGISTRY = "localhost";

  private static final String INSTANCE = "app.kubernetes.io/instance";
  private static final String COMPONENT = "app.kubernetes.io/component";
  private static final String PUBLISHER = RELEASE + "-slice-publisher";
  private static final String CONTROLLER = RELEASE + "-claim-controller";
  private static final String DRIVER_DS = RELEASE + "-device-driver";

  /** Three JVMs per node's worth of pods starting on a loaded 2-core machine. */
  private static final Duration ROLLOUT_TIMEOUT = Duration.ofSeconds(240);

  /**
   * The Lease is released on a graceful shutdown, so the standby leads within its retry period
   * (2s); a lease duration (15s) is the bound had the release been lost.
   */
  private static final Duration TAKEOVER_TIMEOUT = Duration.ofSeconds(45);

  /** A driver's stream is back within its backoff once a replica leads again. */
  private static final Duration RECONNECT_TIMEOUT = Duration.ofSeconds(60);

  /** The driver's log line when the publisher acknowledged its stream (first or again). */
  private static final Pattern CONNECTED = Pattern.compile("inventory stream to \\S+ connected");

  private static MultiNodeCluster cluster;
  private static KubernetesClient client;
  private static Path dir;
  private static long installStarted;

  @BeforeAll
  static void installedWithTheChartsDefaults() throws IOException {
    Assumptions.assumeTrue(
        MultiNodeCluster.available(), "a multi-node cluster needs root, ip and nsenter");
    BuiltImages.assumeBuilt(DEFAULT_SERVICES);
    dir = Path.of("target", "chart-defaults").toAbsolutePath();
    TestFiles.deleteRecursively(dir);
    long started = System.nanoTime();
    cluster = MultiNodeCluster.start(NODES, Path.of("target", "mnd"));
    client = cluster.client;
    long ready = System.nanoTime();
    // CoreDNS starts while the images go into the nodes
    java.util.concurrent.CompletableFuture<MultiNodeCluster> dns =
        java.util.concurrent.CompletableFuture.supplyAsync(cluster::withDns);
    importImages(BuiltImages.appVersion());
    dns.join();
    System.out.printf(
        "[chart-defaults] cluster %d ms, then the images and DNS %d ms%n",
        (ready - started) / 1_000_000, (System.nanoTime() - ready) / 1_000_000);
    // the walkthrough: label the accelerator nodes, a namespace at Pod Security level privileged
    // (the driver's host paths), then helm install
    for (RealNode node : cluster.nodes) {
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
    }
    client
        .namespaces()
        .resource(
            new NamespaceBuilder()
                .withNewMetadata()
                .withName(NAMESPACE)
                .addToLabels("pod-security.kubernetes.io/enforce", "privileged")
                .endMetadata()
                .build())
        .create();
    client
        .namespaces()
        .resource(new NamespaceBuilder().withNewMetadata().withName(APPS).endMetadata().build())
        .create();
    Path kubeconfig = dir.resolve("admin.kubeconfig");
    OwnerOnly.write(kubeconfig, cluster.api.kubeconfig(ClusterApiServer.ADMIN));
    Path values = dir.resolve("values.yaml");
    // everything else is the chart's default
    TestFiles.write(values, "imageRegistry: " + REGISTRY + "\n");
    installStarted = System.nanoTime();
    HelmRelease.run(
        "install-no-wait",
        ServiceProcess.moduleDir("helm").resolve("kdra"),
        RELEASE,
        NAMESPACE,
        kubeconfig,
        List.of(values));
  }

  /** Each node's containerd gets the images under {@link #REGISTRY}; one thread per node. */
  private static void importImages(String tag) throws IOException {
    for (String service : DEFAULT_SERVICES) {
      assertThat(BuiltImages.reference(service))
          .as("the build's name of the %s image", service)
          .isEqualTo(REGISTRY + "/kdra/" + service + ":" + tag);
    }
    long started = System.nanoTime();
    ExecutorService pool = Executors.newFixedThreadPool(NODES);
    try {
      List<Future<?>> imports = new ArrayList<>();
      for (RealNode node : cluster.nodes) {
        imports.add(
            pool.submit(
                () -> {
                  for (String service : DEFAULT_SERVICES) {
                    node.importImage(BuiltImages.archive(service), REGISTRY + "/kdra/" + service);
                  }
                }));
      }
      for (Future<?> f : imports) {
        f.get();
      }
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new IllegalStateException(e);
    } catch (java.util.concurrent.ExecutionException e) {
      throw new IllegalStateException("importing the images", e.getCause());
    } finally {
      pool.shutdownNow();
    }
    System.out.printf(
        "[chart-defaults] %s images (tag %s) imported into %d nodes in %d ms%n",
        DEFAULT_SERVICES, tag, NODES, (System.nanoTime() - started) / 1_000_000);
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
      cluster.dumpTo(Path.of("target", "it-dumps", "ChartDefaultsMultiNodeIT").toAbsolutePath());
      cluster.close();
    }
  }

  /**
   * The defaults' shape: two publishers and two controllers (spread over the nodes where they can),
   * a driver Ready on every node, every pod on the pod network, and the publisher's NetworkPolicy
   * rendered.
   */
  @Test
  @Order(1)
  void theDefaultsRunTwoPublishersTwoControllersAndADriverReadyOnEveryNode() {
    await("two publishers, two controllers and three drivers Ready")
        .atMost(ROLLOUT_TIMEOUT)
        .pollInterval(Duration.ofSeconds(1))
        .untilAsserted(
            () -> {
              assertThat(readyReplicas(PUBLISHER)).as(PUBLISHER).isEqualTo(2);
              assertThat(readyReplicas(CONTROLLER)).as(CONTROLLER).isEqualTo(2);
              DaemonSet ds =
                  client.apps().daemonSets().inNamespace(NAMESPACE).withName(DRIVER_DS).get();
              assertThat(ds).isNotNull();
              assertThat(ds.getStatus()).isNotNull();
              assertThat(ds.getStatus().getDesiredNumberScheduled()).isEqualTo(NODES);
              assertThat(ds.getStatus().getNumberReady()).as("drivers Ready").isEqualTo(NODES);
            });
    System.out.printf(
        "[chart-defaults] helm install to every pod Ready: %d ms%n",
        (System.nanoTime() - installStarted) / 1_000_000);
    List<Pod> pods = releasePods();
    assertThat(pods)
        .allSatisfy(
            p -> {
              assertThat(p.getSpec().getHostNetwork()).as("hostNetwork").isNotEqualTo(true);
              assertThat(p.getStatus().getPodIP()).isNotEqualTo(p.getStatus().getHostIP());
            });
    assertThat(componentPods("device-driver"))
        .extracting(p -> p.getSpec().getNodeName())
        .containsExactlyInAnyOrderElementsOf(cluster.nodes.stream().map(n -> n.name).toList());
    assertThat(client.network().networkPolicies().inNamespace(NAMESPACE).list().getItems())
        .extracting(n -> n.getMetadata().getName())
        .contains(PUBLISHER);
  }

  /**
   * Review H1: two publishers behind a ClusterIP Service, kube-proxy pinning each driver's
   * connection to one of them, only the leader accepting streams. Every node's pool is published
   * nonetheless, whichever replica each driver reached first.
   */
  @Test
  @Order(2)
  void everyNodesPoolIsPublished() {
    await("every node's pool published")
        .atMost(Duration.ofSeconds(60))
        .pollInterval(Duration.ofMillis(500))
        .untilAsserted(
            () -> {
              for (RealNode node : cluster.nodes) {
                assertThat(Dra.publishedDevices(client, DRIVER, node.name))
                    .as("devices of %s's pool", node.name)
                    .isEqualTo(DEVICES_PER_NODE);
              }
            });
    System.out.printf(
        "[chart-defaults] helm install to every node's pool published: %d ms%n",
        (System.nanoTime() - installStarted) / 1_000_000);
    assertThat(slices())
        .allSatisfy(
            s -> assertThat(s.getSpec().getPool().getName()).isEqualTo(s.getSpec().getNodeName()));
  }

  /**
   * The drivers reach the publisher by its Service's DNS name (cluster DNS, then kube-proxy), over
   * TLS: each replica presents the chart's certificate for that name, chained to the CA in the
   * release's Secret, and refuses plain text. A pod resolves the name to the Service's ClusterIP.
   */
  @Test
  @Order(3)
  void driversReachThePublishersServiceByDnsOverTls() throws Exception {
    String serviceName = PUBLISHER + "." + NAMESPACE + ".svc";
    assertThat(
            client
                .configMaps()
                .inNamespace(NAMESPACE)
                .withName(DRIVER_DS)
                .get()
                .getData()
                .get("application.properties"))
        .contains("kdra.device-driver.publisher.address=" + serviceName + ":9000")
        .contains("kdra.device-driver.publisher.tls.ca-file=");
    assertThat(componentPods("device-driver"))
        .allSatisfy(p -> assertThat(p.getSpec().getDnsPolicy()).isEqualTo("ClusterFirst"));

    Secret tls = client.secrets().inNamespace(NAMESPACE).withName(PUBLISHER + "-tls").get();
    String ca = tls.getData().get("ca.crt");
    List<Pod> publishers = componentPods("slice-publisher");
    assertThat(publishers).hasSize(2);
    for (Pod p : publishers) {
      assertThat(
              PublisherTls.names(
                  PublisherTls.served(p.getStatus().getPodIP(), 9000, serviceName, ca)))
          .as("certificate of %s", p.getMetadata().getName())
          .contains(serviceName);
      Status plain = PublisherTls.plainTextStream(p.getStatus().getPodIP(), 9000, DRIVER, "node-a");
      assertThat(plain).as("a plain-text stream to %s", p.getMetadata().getName()).isNotNull();
      assertThat(plain.getCode()).isEqualTo(Status.Code.UNAVAILABLE);
    }

    String clusterIp =
        client.services().inNamespace(NAMESPACE).withName(PUBLISHER).get().getSpec().getClusterIP();
    awaitDefaultServiceAccount(APPS);
    Pod lookup =
        client
            .pods()
            .inNamespace(APPS)
            .resource(
                new PodBuilder()
                    .withNewMetadata()
                    .withName("lookup")
                    .endMetadata()
                    .withNewSpec()
                    .withRestartPolicy("Never")
                    .withAutomountServiceAccountToken(false)
                    .withTerminationGracePeriodSeconds(1L)
                    .addNewContainer()
                    .withName("main")
                    .withImage(RealNode.BUSYBOX)
                    .withImagePullPolicy("Never")
                    .withCommand(
                        "sh",
                        "-c",
                        "for i in $(busybox seq 30); do busybox nslookup "
                            + serviceName
                            + ".cluster.local && exit 0; sleep 1; done; exit 1")
                    .endContainer()
                    .endSpec()
                    .build())
            .create();
    Pod done =
        client
            .pods()
            .inNamespace(APPS)
            .withName(lookup.getMetadata().getName())
            .waitUntilCondition(
                p ->
                    p != null
                        && p.getStatus() != null
                        && List.of("Succeeded", "Failed").contains(p.getStatus().getPhase()),
                RealPods.POD_TIMEOUT.toSeconds(),
                TimeUnit.SECONDS);
    List<String> log = cluster.node(done.getSpec().getNodeName()).containerLog(done, "main");
    assertThat(done.getStatus().getPhase()).as(String.join("\n", log)).isEqualTo("Succeeded");
    assertThat(String.join("\n", log)).contains(clusterIp);
  }

  /**
   * A pod with a claim from a template, placed by the chart's claim-controller: the claim that
   * kube-controller-manager made from the template is allocated from one node's pool, reserved for
   * the pod, prepared by that node's driver, and the container sees its device through CDI.
   */
  @Test
  @Order(4)
  void aPodWithATemplateClaimGetsItsDeviceOnARealNode() {
    client.resource(Dra.template(APPS, "one-gpu", DRIVER, 1)).create();
    awaitDefaultServiceAccount(APPS);
    assertPreparedOnItsNode("first");
  }

  /**
   * Deleting the publisher leader's pod: the standby takes the Lease, every driver's stream ends
   * and comes back to the new leader (through the Service, refused by the replacement standby as it
   * may be), no node's pool is deleted or missing meanwhile or afterwards, and a new claim is
   * allocated and prepared.
   */
  @Test
  @Order(5)
  void theStandbyPublisherTakesOverWhenTheLeaderPodIsDeleted() {
    String leader = leaseHolder();
    List<Pod> publishers = componentPods("slice-publisher");
    assertThat(publishers).extracting(p -> p.getMetadata().getName()).contains(leader);
    String standby =
        publishers.stream()
            .map(p -> p.getMetadata().getName())
            .filter(n -> !n.equals(leader))
            .findFirst()
            .orElseThrow();
    Map<String, Long> connectedBefore = driverConnections();
    assertThat(connectedBefore.values()).allSatisfy(c -> assertThat(c).isPositive());

    ConcurrentLinkedQueue<String> deleted = new ConcurrentLinkedQueue<>();
    try (Watch watch =
        client
            .resources(ResourceSlice.class)
            .watch(
                new Watcher<>() {
                  @Override
                  public void eventReceived(Action action, ResourceSlice slice) {
                    if (action == Action.DELETED && DRIVER.equals(slice.getSpec().getDriver())) {
                      deleted.add(slice.getMetadata().getName());
                    }
                  }

                  @Override
                  public void onClose(WatcherException cause) {}
                })) {
      long started = System.nanoTime();
      client.pods().inNamespace(NAMESPACE).withName(leader).delete();
      await("the standby " + standby + " holds the Lease")
          .atMost(TAKEOVER_TIMEOUT)
          .pollInterval(Duration.ofMillis(250))
          .until(() -> standby.equals(leaseHolder()));
      long tookOver = System.nanoTime();
      await("every driver's stream acknowledged again, by the new leader")
          .atMost(RECONNECT_TIMEOUT)
          .pollInterval(Duration.ofMillis(500))
          .untilAsserted(
              () ->
                  driverConnections()
                      .forEach(
                          (node, count) ->
                              assertThat(count)
                                  .as("connections of %s's driver", node)
                                  .isGreaterThan(connectedBefore.get(node))));
      System.out.printf(
          "[chart-defaults] leader %s deleted: %s leads after %d ms, every driver reconnected"
              + " after %d ms%n",
          leader,
          standby,
          (tookOver - started) / 1_000_000,
          (System.nanoTime() - started) / 1_000_000);
      await("two publishers Ready again")
          .atMost(ROLLOUT_TIMEOUT)
          .until(() -> readyReplicas(PUBLISHER) == 2);
      for (RealNode node : cluster.nodes) {
        assertThat(Dra.publishedDevices(client, DRIVER, node.name))
            .as("devices of %s's pool after the fail-over", node.name)
            .isEqualTo(DEVICES_PER_NODE);
      }
      assertPreparedOnItsNode("after-failover");
      assertThat(deleted).as("slices deleted during the fail-over").isEmpty();
    }
  }

  /**
   * The chart's opaque-config webhook (on by default, failurePolicy Fail) is reachable from the API
   * server through its Service: a claim with a valid config of our driver is admitted (an
   * unreachable webhook would fail it), one the driver would refuse is denied naming the field (not
   * "failed calling webhook").
   */
  @Test
  @Order(6)
  void theOpaqueConfigWebhookAdmitsAValidConfigAndDeniesAnInvalidOne() throws Exception {
    ResourceClaim valid = Dra.claim(APPS, "time-sliced", DRIVER, 1);
    valid
        .getSpec()
        .getDevices()
        .setConfig(List.of(gpuConfig("'sharing': {'strategy': 'TimeSlicing'}")));
    client.resource(valid).create();

    ResourceClaim invalid = Dra.claim(APPS, "mps-without-strategy", DRIVER, 1);
    invalid
        .getSpec()
        .getDevices()
        .setConfig(List.of(gpuConfig("'sharing': {'mps': {'threads': 4}}")));
    KubernetesClientException refused =
        org.junit.jupiter.api.Assertions.assertThrows(
            KubernetesClientException.class, () -> client.resource(invalid).create());
    // the chart's ValidatingAdmissionPolicy (also on by default) may deny it before the webhook
    assertThat(refused.getStatus().getMessage())
        .containsAnyOf("denied the request", "denied request")
        .contains("spec.devices.config[0].opaque.parameters.sharing")
        .doesNotContain("failed calling webhook");
  }

  /** Our driver's opaque config for request {@code gpu}, {@code fields} JSON with ' for ". */
  private static DeviceClaimConfiguration gpuConfig(String fields) throws IOException {
    String json =
        ("{'apiVersion': '"
                + OpaqueConfigDecoder.API_VERSION
                + "', 'kind': 'GpuConfig', "
                + fields
                + "}")
            .replace('\'', '"');
    return new DeviceClaimConfigurationBuilder()
        .withRequests("gpu")
        .withNewOpaque()
        .withDriver(DRIVER)
        .withParameters(new ObjectMapper().readTree(json))
        .endOpaque()
        .build();
  }

  /** A pod {@code name} with a claim from the template, Running with its device prepared. */
  private static void assertPreparedOnItsNode(String name) {
    Pod pod =
        client
            .resource(RealPods.showingDevices(Dra.podWithTemplate(APPS, name, "one-gpu")))
            .create();
    await("pod " + name + " bound")
        .atMost(RealPods.POD_TIMEOUT)
        .untilAsserted(() -> assertThat(Dra.get(client, pod).getSpec().getNodeName()).isNotNull());
    RealNode node = cluster.node(Dra.get(client, pod).getSpec().getNodeName());
    List<String> log = RealPods.awaitListed(client, node, pod);
    ResourceClaim claim = Dra.claimOf(client, pod, "gpu");
    assertThat(claim.getStatus().getReservedFor())
        .extracting(r -> r.getUid())
        .containsExactly(pod.getMetadata().getUid());
    assertThat(Dra.devices(claim)).singleElement().asString().startsWith(node.name + "/gpu-");
    assertThat(log).contains("KDRA_DEVICE_0=gpu-" + RealPods.deviceIndex(claim));
    assertThat(RealPods.specFiles(node.cdiDir()))
        .anyMatch(f -> f.contains(claim.getMetadata().getUid()));
  }

  /** The publisher Lease's holder. */
  private static String leaseHolder() {
    Lease lease =
        client.resources(Lease.class).inNamespace(NAMESPACE).withName("kdra-slice-publisher").get();
    return lease == null || lease.getSpec() == null ? null : lease.getSpec().getHolderIdentity();
  }

  /**
   * Per node: how often its driver's inventory stream was acknowledged after (re)connecting, from
   * the driver's log (one INFO line each time).
   */
  private static Map<String, Long> driverConnections() {
    return componentPods("device-driver").stream()
        .collect(
            Collectors.toMap(
                p -> p.getSpec().getNodeName(),
                p ->
                    cluster
                        .node(p.getSpec().getNodeName())
                        .containerLog(p, "device-driver")
                        .stream()
                        .filter(l -> CONNECTED.matcher(l).find())
                        .count()));
  }

  private static int readyReplicas(String deployment) {
    Deployment d = client.apps().deployments().inNamespace(NAMESPACE).withName(deployment).get();
    Integer ready = d == null || d.getStatus() == null ? null : d.getStatus().getReadyReplicas();
    return ready == null ? 0 : ready;
  }

  private static List<Pod> releasePods() {
    return client
        .pods()
        .inNamespace(NAMESPACE)
        .withLabel(INSTANCE, RELEASE)
        .list()
        .getItems()
        .stream()
        .filter(p -> p.getMetadata().getDeletionTimestamp() == null)
        .toList();
  }

  private static List<Pod> componentPods(String component) {
    return releasePods().stream()
        .filter(p -> component.equals(p.getMetadata().getLabels().get(COMPONENT)))
        .toList();
  }

  private static List<ResourceSlice> slices() {
    return client.resources(ResourceSlice.class).list().getItems().stream()
        .filter(s -> DRIVER.equals(s.getSpec().getDriver()))
        .toList();
  }

  /** kube-controller-manager makes each namespace's ServiceAccount, which pods need. */
  private static void awaitDefaultServiceAccount(String namespace) {
    await()
        .atMost(Duration.ofSeconds(60))
        .until(
            () ->
                client.serviceAccounts().inNamespace(namespace).withName("default").get() != null);
  }

  /** The release's and the apps' pods, the events, the workloads and the slices. */
  private static void dump(String what) {
    if (client == null) {
      return;
    }
    Path target = Path.of("target", "it-dumps", "ChartDefaultsMultiNodeIT", what).toAbsolutePath();
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
        target.resolve("workloads.yaml"),
        Serialization.asYaml(
            List.of(
                client.apps().daemonSets().inNamespace(NAMESPACE).list().getItems(),
                client.apps().deployments().inNamespace(NAMESPACE).list().getItems(),
                client.resources(Lease.class).inNamespace(NAMESPACE).list().getItems())));
    TestFiles.write(target.resolve("slices.yaml"), Serialization.asYaml(slices()));
    System.out.println(
        "[chart-defaults] "
            + what
            + " failed; objects in "
            + target
            + ", node and pod logs in target/it-dumps/ChartDefaultsMultiNodeIT");
  }
}
