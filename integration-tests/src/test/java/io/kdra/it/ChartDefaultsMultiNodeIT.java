package io.kdra.it;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import com.fasterxml.jackson.databind.ObjectMapper;
import io.fabric8.kubernetes.api.model.NamespaceBuilder;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.PodBuilder;
import io.fabric8.kubernetes.api.model.PodTemplateSpec;
import io.fabric8.kubernetes.api.model.Secret;
import io.fabric8.kubernetes.api.model.admissionregistration.v1.ValidatingAdmissionPolicyBinding;
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
import io.kdra.it.chart.HelmRelease;
import io.kdra.it.chart.KdraChart;
import io.kdra.it.controlplane.ClusterAddresses;
import io.kdra.it.controlplane.ClusterApiServer;
import io.kdra.it.controlplane.ControlPlane;
import io.kdra.it.nodes.KernelFeatures;
import io.kdra.it.nodes.MultiNodeCluster;
import io.kdra.it.nodes.NodeRegistration;
import io.kdra.it.nodes.RealNode;
import io.kdra.it.services.AllocationInvariants;
import io.kdra.it.services.BuiltImages;
import io.kdra.it.services.Dra;
import io.kdra.it.services.PublisherTls;
import io.kdra.it.services.RealPods;
import io.kdra.it.support.OwnerOnly;
import io.kdra.it.support.ServiceProcess;
import io.kdra.it.support.TestFiles;
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
import java.util.concurrent.atomic.AtomicReference;
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
 * <p>Ordered: install, pools, TLS and DNS, a claim, the publisher leader's fail-over, the webhook,
 * Pod Security levels, the NetworkPolicy enforced, both leaders' fail-over under load, a drain, an
 * upgrade under churn, the webhook through the enforced policy, scale to zero, uninstall.
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

  /** The services' default lease duration (the chart leaves it to them). */
  private static final Duration LEASE = Duration.ofSeconds(15);

  /** The bound for a fail-over under load: the lease time plus a minute. */
  private static final Duration BACK_WITHIN = LEASE.plusMinutes(1);

  private static final String PUBLISHER_LEASE = "kdra-slice-publisher";

  /** The container ports of the publisher's inventory gRPC and webhook (the chart's defaults). */
  private static final int PUBLISHER_GRPC_PORT = 9000;

  private static final int PUBLISHER_WEBHOOK_PORT = 8443;

  /** A driver's stream is back within its backoff once a replica leads again. */
  private static final Duration RECONNECT_TIMEOUT = Duration.ofSeconds(60);

  /** The driver's log line when the publisher acknowledged its stream (first or again). */
  private static final Pattern CONNECTED = Pattern.compile("inventory stream to \\S+ connected");

  private static MultiNodeCluster cluster;
  private static KubernetesClient client;
  private static Path dir;
  private static long installStarted;

  /**
   * The release's pods (UIDs) when kube-network-policies began enforcing the chart's NetworkPolicy;
   * null while it does not (the kernel has no netfilter queue).
   */
  private static java.util.Set<String> podsBeforeEnforcement;

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
    createNamespaceEnforcing(NAMESPACE, "privileged");
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
    helm("install-no-wait", List.of(values));
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
   * a driver Ready on every node at system-node-critical priority, every pod on the pod network,
   * and the publisher's NetworkPolicy rendered.
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
    // admitted outside kube-system at node-critical priority (the chart's ResourceQuota)
    assertThat(componentPods("device-driver"))
        .allSatisfy(
            p -> {
              assertThat(p.getSpec().getPriorityClassName()).isEqualTo("system-node-critical");
              assertThat(p.getSpec().getPriority()).isEqualTo(2_000_001_000);
            });
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
    awaitEveryPoolPublished("every node's pool published", Duration.ofSeconds(60));
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
    Pod done =
        runToEnd(
            "lookup",
            "for i in $(busybox seq 30); do busybox nslookup "
                + serviceName
                + ".cluster.local && exit 0; sleep 1; done; exit 1");
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
   * Deleting the publisher leader's pod: another replica takes the Lease, every driver's stream
   * ends and comes back to the new leader (through the Service, refused by the standby as it may
   * be), no node's pool is deleted or missing meanwhile or afterwards, and a new claim is allocated
   * and prepared. The new leader is usually the standby, which campaigns every retry period; the
   * Deployment's replacement pod may win instead when it has started and synced before the deleted
   * leader's kubelet stopped it (the release then frees the Lease for both): either is a correct
   * fail-over.
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
    AtomicReference<String> newLeader = new AtomicReference<>();
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
      await("a publisher other than the deleted " + leader + " holds the Lease")
          .atMost(TAKEOVER_TIMEOUT)
          .pollInterval(Duration.ofMillis(250))
          .until(
              () -> {
                String holder = leaseHolder();
                newLeader.set(holder);
                return holder != null && !holder.equals(leader) && isLivePublisher(holder);
              });
      long tookOver = System.nanoTime();
      awaitEveryDriverReconnectedSince(connectedBefore);
      System.out.printf(
          "[chart-defaults] leader %s deleted: %s (%s) leads after %d ms, every driver reconnected"
              + " after %d ms%n",
          leader,
          newLeader.get(),
          newLeader.get().equals(standby) ? "the standby" : "the replacement",
          (tookOver - started) / 1_000_000,
          (System.nanoTime() - started) / 1_000_000);
      await("two publishers Ready again")
          .atMost(ROLLOUT_TIMEOUT)
          .until(() -> readyReplicas(PUBLISHER) == 2);
      assertEveryPoolPublished();
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

  /**
   * Pod Security admission (on in this API server) with the levels docs/user/install.md gives: the
   * publisher's and the controller's pods, as their Deployments make them, are admitted into a
   * namespace at {@code restricted}; the driver's pod is refused at {@code baseline} (its host
   * paths), which is why the release's namespace is {@code privileged}. Server-side dry runs: the
   * API server's own verdict, nothing started.
   */
  @Test
  @Order(7)
  void theControllersPassRestrictedAndTheDriverNeedsPrivileged() {
    for (String level : List.of("restricted", "baseline")) {
      createNamespaceEnforcing(level + "-probe", level);
      awaitDefaultServiceAccount(level + "-probe");
    }
    for (String deployment : List.of(PUBLISHER, CONTROLLER)) {
      PodTemplateSpec template =
          client
              .apps()
              .deployments()
              .inNamespace(NAMESPACE)
              .withName(deployment)
              .get()
              .getSpec()
              .getTemplate();
      client
          .pods()
          .inNamespace("restricted-probe")
          .resource(podOf(template, deployment))
          .dryRun()
          .create();
    }
    PodTemplateSpec driver =
        client
            .apps()
            .daemonSets()
            .inNamespace(NAMESPACE)
            .withName(DRIVER_DS)
            .get()
            .getSpec()
            .getTemplate();
    KubernetesClientException refused =
        org.junit.jupiter.api.Assertions.assertThrows(
            KubernetesClientException.class,
            () ->
                client
                    .pods()
                    .inNamespace("baseline-probe")
                    .resource(podOf(driver, DRIVER_DS))
                    .dryRun()
                    .create());
    assertThat(refused.getMessage())
        .contains("violates PodSecurity \"baseline:latest\"")
        .contains("hostPath");
  }

  /**
   * A pod as {@code template} makes it, under the namespace's {@code default} ServiceAccount (the
   * release's are not there; Pod Security does not look at it).
   */
  private static Pod podOf(PodTemplateSpec template, String name) {
    return new PodBuilder()
        .withNewMetadata()
        .withName(name)
        .withLabels(template.getMetadata().getLabels())
        .endMetadata()
        .withSpec(
            new io.fabric8.kubernetes.api.model.PodSpecBuilder(template.getSpec())
                .withServiceAccountName("default")
                .build())
        .build();
  }

  /**
   * The chart's NetworkPolicy, enforced (kube-network-policies): a pod that is not a driver cannot
   * open the publishers' inventory gRPC port, while it reaches cluster DNS; the drivers' streams to
   * the publishers are new connections after the next scenario's fail-over, so that one shows the
   * drivers still get in.
   */
  @Test
  @Order(8)
  void aPodThatIsNoDriverCannotOpenTheInventoryPort() {
    Assumptions.assumeTrue(
        KernelFeatures.policyQueue() != KernelFeatures.PolicyQueue.NONE,
        "kube-network-policies needs a netfilter queue: this kernel has neither"
            + " CONFIG_NFT_QUEUE nor CONFIG_NETFILTER_XT_TARGET_NFQUEUE");
    cluster.withNetworkPolicies();
    podsBeforeEnforcement = podUids().keySet();
    String publisher = componentPods("slice-publisher").get(0).getStatus().getPodIP();
    Pod stranger =
        runToEnd(
            "stranger",
            "for i in $(busybox seq 60); do busybox nc -w 2 "
                + ClusterAddresses.DNS_SERVICE_IP
                + " 53 </dev/null || { echo no-dns; exit 2; }; busybox nc -w 2 "
                + publisher
                + " "
                + PUBLISHER_GRPC_PORT
                + " </dev/null || { echo blocked; exit 0; }; sleep 1; done; exit 1");
    List<String> log =
        cluster.node(stranger.getSpec().getNodeName()).containerLog(stranger, "main");
    assertThat(stranger.getStatus().getPhase()).as(String.join("\n", log)).isEqualTo("Succeeded");
    assertThat(log).contains("blocked");
  }

  /**
   * Fail-over under load: while pods with claims are being created, the publisher leader's pod is
   * deleted, then the controller leader's. Watched throughout: no device in two claims, no pod
   * moved, no ResourceSlice deleted. Every pool is back and every pod bound within the lease time
   * plus a minute; every pod's device prepared (no prepare failed); every driver reconnected to the
   * new publisher leader (through the NetworkPolicy where it is enforced).
   */
  @Test
  @Order(9)
  void leaderPodsDeletedUnderLoadLoseNoPoolAndAllocateNothingTwice() throws Exception {
    int count = 12;
    Map<String, Long> connectedBefore = driverConnections();
    List<String> names = new ArrayList<>();
    for (int i = 0; i < count; i++) {
      names.add("load-" + i);
    }
    ExecutorService creator = Executors.newSingleThreadExecutor();
    try (AllocationInvariants watched = new AllocationInvariants(client, APPS, DRIVER)) {
      java.util.concurrent.CountDownLatch started = new java.util.concurrent.CountDownLatch(2);
      Future<?> created =
          creator.submit(
              () -> {
                for (String name : names) {
                  client
                      .resource(RealPods.showingDevices(Dra.podWithTemplate(APPS, name, "one-gpu")))
                      .create();
                  started.countDown();
                  // a steady arrival, not a synchronisation: the fail-overs happen among them
                  Thread.sleep(1500);
                }
                return null;
              });
      assertThat(started.await(60, TimeUnit.SECONDS)).isTrue();
      String publisher = takeOver(PUBLISHER_LEASE, "slice-publisher");
      String controller = takeOver(KdraChart.CONTROLLER_LEASE, "claim-controller");
      long failedOver = System.nanoTime();
      created.get(2, TimeUnit.MINUTES);
      awaitEveryPoolPublished("every node's pool back", BACK_WITHIN);
      await("every pod bound")
          .atMost(BACK_WITHIN)
          .pollInterval(Duration.ofMillis(500))
          .untilAsserted(
              () ->
                  assertThat(names)
                      .allSatisfy(
                          n ->
                              assertThat(
                                      client
                                          .pods()
                                          .inNamespace(APPS)
                                          .withName(n)
                                          .get()
                                          .getSpec()
                                          .getNodeName())
                                  .as("node of %s", n)
                                  .isNotNull()));
      System.out.printf(
          "[chart-defaults] under load: publisher %s, then controller %s deleted; every pool back"
              + " and every pod bound %d ms after%n",
          publisher, controller, (System.nanoTime() - failedOver) / 1_000_000);
      for (String n : names) {
        Pod pod = client.pods().inNamespace(APPS).withName(n).get();
        assertThat(waitedToBeScheduled(pod))
            .as("%s waited to be scheduled", n)
            .isLessThanOrEqualTo(BACK_WITHIN);
        awaitListed(pod);
      }
      assertThat(preparesFailed()).as("prepares that failed").isEmpty();
      awaitEveryDriverReconnectedSince(connectedBefore);
      assertThat(watched.violations).as("devices in two claims, pods moved").isEmpty();
      assertThat(watched.deletedSlices).as("slices deleted").isEmpty();
    } finally {
      creator.shutdownNow();
      for (String n : names) {
        client.pods().inNamespace(APPS).withName(n).delete();
      }
    }
  }

  /**
   * {@code kubectl drain} of a node where a Deployment's pods hold claims: they are evicted, their
   * claims deleted and their devices unprepared on that node, and the replacements get devices from
   * the other nodes' pools and run. The release's own pods on that node go with it (its DaemonSet's
   * driver stays, as drain leaves DaemonSets).
   */
  @Test
  @Order(10)
  void drainingANodeReleasesItsPodsClaimsAndReschedulesThem() throws Exception {
    awaitGone(List.of("load-"));
    Pod template = RealPods.showingDevices(Dra.podWithTemplate(APPS, "drained", "one-gpu"));
    client
        .apps()
        .deployments()
        .inNamespace(APPS)
        .resource(
            new io.fabric8.kubernetes.api.model.apps.DeploymentBuilder()
                .withNewMetadata()
                .withName("drained")
                .endMetadata()
                .withNewSpec()
                .withReplicas(3)
                .withNewSelector()
                .addToMatchLabels("app", "drained")
                .endSelector()
                .withNewTemplate()
                .withNewMetadata()
                .addToLabels("app", "drained")
                .endMetadata()
                .withSpec(template.getSpec())
                .endTemplate()
                .endSpec()
                .build())
        .create();
    await("three pods of the Deployment running")
        .atMost(RealPods.POD_TIMEOUT)
        .until(() -> running("drained").size() == 3);
    String node = running("drained").get(0).getSpec().getNodeName();
    List<ResourceClaim> released =
        running("drained").stream()
            .filter(p -> node.equals(p.getSpec().getNodeName()))
            .map(p -> Dra.claimOf(client, p, "gpu"))
            .toList();
    try {
      long started = System.nanoTime();
      kubectl(
          "drain",
          node,
          "--ignore-daemonsets",
          "--delete-emptydir-data",
          "--force",
          "--timeout=180s");
      await("three pods of the Deployment running on the other nodes")
          .atMost(RealPods.POD_TIMEOUT)
          .pollInterval(Duration.ofSeconds(1))
          .untilAsserted(
              () -> {
                List<Pod> pods = running("drained");
                assertThat(pods).hasSize(3);
                assertThat(pods).noneMatch(p -> node.equals(p.getSpec().getNodeName()));
                for (Pod p : pods) {
                  assertThat(Dra.devices(Dra.claimOf(client, p, "gpu")))
                      .singleElement()
                      .asString()
                      .startsWith(p.getSpec().getNodeName() + "/");
                }
              });
      await("the drained pods' claims deleted and unprepared on " + node)
          .atMost(RealPods.POD_TIMEOUT)
          .pollInterval(Duration.ofSeconds(1))
          .untilAsserted(
              () -> {
                for (ResourceClaim c : released) {
                  assertThat(client.resource(c).get()).as(c.getMetadata().getName()).isNull();
                  assertThat(RealPods.specFiles(cluster.node(node).cdiDir()))
                      .noneMatch(f -> f.contains(c.getMetadata().getUid()));
                }
              });
      assertThat(appClaims()).flatMap(Dra::devices).noneMatch(d -> d.startsWith(node + "/"));
      System.out.printf(
          "[chart-defaults] drained %s (%d claims there): every pod running elsewhere after %d ms%n",
          node, released.size(), (System.nanoTime() - started) / 1_000_000);
    } finally {
      kubectl("uncordon", node);
    }
  }

  /**
   * {@code helm upgrade} that restarts every component (a pod annotation of each changes) while
   * pods with claims come and go: the upgrade completes, every pod that stays runs with its device,
   * every pod deleted is gone (none stuck terminating), no prepare fails (the drivers roll with
   * surge), and nothing is allocated twice or unpublished meanwhile.
   */
  @Test
  @Order(11)
  void anUpgradeRestartingEveryComponentWhilePodsComeAndGoLeavesNoPodStuck() throws Exception {
    Map<String, String> before = podUids();
    Path values = dir.resolve("upgrade.yaml");
    TestFiles.write(
        values,
        "imageRegistry: "
            + REGISTRY
            + "\n"
            + "slicePublisher: {podAnnotations: {kdra.io/restart: '1'}}\n"
            + "claimController: {podAnnotations: {kdra.io/restart: '1'}}\n"
            + "deviceDriver: {podAnnotations: {kdra.io/restart: '1'}}\n");
    ExecutorService churn = Executors.newSingleThreadExecutor();
    java.util.concurrent.atomic.AtomicBoolean upgrading =
        new java.util.concurrent.atomic.AtomicBoolean(true);
    List<String> created = new java.util.concurrent.CopyOnWriteArrayList<>();
    List<String> deleted = new java.util.concurrent.CopyOnWriteArrayList<>();
    try (AllocationInvariants watched = new AllocationInvariants(client, APPS, DRIVER)) {
      Future<?> comingAndGoing =
          churn.submit(
              () -> {
                for (int i = 0; upgrading.get(); i++) {
                  String name = "churn-" + i;
                  client
                      .resource(RealPods.showingDevices(Dra.podWithTemplate(APPS, name, "one-gpu")))
                      .create();
                  created.add(name);
                  if (created.size() - deleted.size() > 4) {
                    String oldest = created.get(deleted.size());
                    client.pods().inNamespace(APPS).withName(oldest).delete();
                    deleted.add(oldest);
                  }
                  // a steady arrival, not a synchronisation
                  Thread.sleep(2000);
                }
                return null;
              });
      long started = System.nanoTime();
      HelmRelease.run(
          "upgrade",
          ServiceProcess.moduleDir("helm").resolve("kdra"),
          RELEASE,
          NAMESPACE,
          dir.resolve("admin.kubeconfig"),
          List.of(values));
      upgrading.set(false);
      comingAndGoing.get(1, TimeUnit.MINUTES);
      System.out.printf(
          "[chart-defaults] helm upgrade restarting every component: %d ms, %d pods created and %d"
              + " deleted meanwhile%n",
          (System.nanoTime() - started) / 1_000_000, created.size(), deleted.size());
      assertThat(podUids().keySet())
          .as("every pod of the release replaced")
          .doesNotContainAnyElementsOf(before.keySet());
      for (String n : created) {
        if (deleted.contains(n)) {
          continue;
        }
        Pod pod = client.pods().inNamespace(APPS).withName(n).get();
        await("pod " + n + " bound")
            .atMost(RealPods.POD_TIMEOUT)
            .untilAsserted(
                () -> assertThat(Dra.get(client, pod).getSpec().getNodeName()).isNotNull());
        RealPods.awaitListed(
            client, cluster.node(Dra.get(client, pod).getSpec().getNodeName()), pod);
      }
      await("every deleted pod gone")
          .atMost(RealPods.POD_TIMEOUT)
          .pollInterval(Duration.ofSeconds(1))
          .untilAsserted(
              () ->
                  assertThat(deleted)
                      .allSatisfy(
                          n ->
                              assertThat(client.pods().inNamespace(APPS).withName(n).get())
                                  .as(n)
                                  .isNull()));
      // The driver rolls with surge (per-pod sockets, the chart's default): the kubelet has a
      // registered driver all along, so no prepare fails ("not registered", "Unavailable" dialling
      // a removed socket were the restart window of fixed socket names), and no kubelet deletes
      // its node's slices (upstream's wiping 30 s after the last driver unregistered).
      List<String> failed = preparesFailed();
      System.out.printf(
          "[chart-defaults] prepares failed during the upgrade: %d, slices deleted: %s%n",
          failed.size(), watched.deletedSlices);
      assertThat(failed).as("prepares that failed").isEmpty();
      assertThat(watched.violations).as("devices in two claims, pods moved").isEmpty();
      assertThat(watched.deletedSlices).as("slices deleted while the drivers rolled").isEmpty();
      await("every node's pool back after the upgrade")
          .atMost(RECONNECT_TIMEOUT)
          .pollInterval(Duration.ofMillis(500))
          .untilAsserted(
              () -> {
                for (RealNode node : cluster.nodes) {
                  assertThat(Dra.publishedDevices(client, DRIVER, node.name))
                      .as("devices of %s's pool", node.name)
                      .isEqualTo(DEVICES_PER_NODE);
                }
              });
    } finally {
      upgrading.set(false);
      churn.shutdownNow();
    }
  }

  /**
   * The opaque-config webhook under the chart's NetworkPolicy as kube-network-policies enforces it.
   * The API server runs on the host, outside the pod network: its calls come from the host's
   * address on the cluster's bridge, which no pod or namespace selector names. From that address
   * the inventory gRPC port of every publisher stays closed (the policy applies to it) while the
   * webhook port opens (its ingress rule lets it in); and the API server gets the webhook's own
   * verdict, a refusal naming the field (not failurePolicy's "failed calling webhook") and a valid
   * config admitted. Every publisher pod is newer than the policy's enforcement (the upgrade
   * replaced them), so each call rides a connection the policy saw opened. The chart's
   * ValidatingAdmissionPolicy runs before any webhook and refuses the same config, so its binding
   * only warns meanwhile.
   */
  @Test
  @Order(12)
  void theApiServerStillGetsTheWebhooksVerdictThroughTheEnforcedPolicy() throws Exception {
    Assumptions.assumeTrue(podsBeforeEnforcement != null, "no NetworkPolicy enforced here");
    await("two publishers Ready")
        .atMost(ROLLOUT_TIMEOUT)
        .pollInterval(Duration.ofSeconds(1))
        .until(() -> readyReplicas(PUBLISHER) == 2);
    List<Pod> publishers = componentPods("slice-publisher");
    assertThat(publishers)
        .extracting(p -> p.getMetadata().getUid())
        .as("publisher pods started after the policy was enforced")
        .doesNotContainAnyElementsOf(podsBeforeEnforcement);
    String apiServerAddress = cluster.network.addresses.gateway();
    for (Pod publisher : publishers) {
      String ip = publisher.getStatus().getPodIP();
      await("from the API server's address, " + ip + ": webhook port open, gRPC port closed")
          .atMost(Duration.ofSeconds(60))
          .pollInterval(Duration.ofSeconds(1))
          .untilAsserted(
              () -> {
                assertThat(opens(apiServerAddress, ip, PUBLISHER_WEBHOOK_PORT))
                    .as("webhook port %d of %s", PUBLISHER_WEBHOOK_PORT, ip)
                    .isTrue();
                assertThat(opens(apiServerAddress, ip, PUBLISHER_GRPC_PORT))
                    .as("inventory port %d of %s", PUBLISHER_GRPC_PORT, ip)
                    .isFalse();
              });
    }
    ValidatingAdmissionPolicyBinding binding = opaqueConfigPolicyBinding();
    List<String> actions = binding.getSpec().getValidationActions();
    setValidationActions(binding, List.of("Warn"));
    try {
      ResourceClaim invalid = Dra.claim(APPS, "mps-without-strategy-enforced", DRIVER, 1);
      invalid
          .getSpec()
          .getDevices()
          .setConfig(List.of(gpuConfig("'sharing': {'mps': {'threads': 4}}")));
      // until the API server has the binding's change, its policy refuses first
      String refusal =
          await("the webhook's own refusal")
              .atMost(Duration.ofSeconds(60))
              .pollInterval(Duration.ofMillis(500))
              .until(
                  () -> refusalOf(invalid),
                  m -> m.startsWith("admission webhook \"opaque-config.kdra.io\""));
      assertThat(refusal)
          .contains("denied the request")
          .contains("spec.devices.config[0].opaque.parameters.sharing")
          .doesNotContain("failed calling webhook");
      ResourceClaim valid = Dra.claim(APPS, "time-sliced-enforced", DRIVER, 1);
      valid
          .getSpec()
          .getDevices()
          .setConfig(List.of(gpuConfig("'sharing': {'strategy': 'TimeSlicing'}")));
      client.resource(valid).create();
      client.resource(valid).delete();
    } finally {
      setValidationActions(binding, actions);
    }
  }

  /**
   * Whether a TCP connection from {@code source} (an address of this host) to {@code ip:port}
   * opens. A port the NetworkPolicy closes drops the connection's first packet: no answer within
   * two seconds.
   */
  private static boolean opens(String source, String ip, int port) throws IOException {
    try (java.net.Socket socket = new java.net.Socket()) {
      socket.bind(new java.net.InetSocketAddress(source, 0));
      socket.connect(new java.net.InetSocketAddress(ip, port), 2000);
      return true;
    } catch (java.net.SocketTimeoutException | java.net.ConnectException e) {
      return false;
    }
  }

  /** The binding of the chart's opaque-config ValidatingAdmissionPolicy. */
  private static ValidatingAdmissionPolicyBinding opaqueConfigPolicyBinding() {
    return client
        .resources(ValidatingAdmissionPolicyBinding.class)
        .withLabel(INSTANCE, RELEASE)
        .list()
        .getItems()
        .stream()
        .filter(b -> b.getMetadata().getName().endsWith("-opaque-config"))
        .collect(
            Collectors.collectingAndThen(
                Collectors.toList(),
                l -> {
                  assertThat(l).as("the chart's opaque-config policy bindings").hasSize(1);
                  return l.get(0);
                }));
  }

  private static void setValidationActions(
      ValidatingAdmissionPolicyBinding binding, List<String> actions) {
    client
        .resources(ValidatingAdmissionPolicyBinding.class)
        .withName(binding.getMetadata().getName())
        .edit(
            b -> {
              b.getSpec().setValidationActions(actions);
              return b;
            });
  }

  /** The API server's refusal of creating {@code claim}; fails when it is created. */
  private static String refusalOf(ResourceClaim claim) {
    try {
      client.resource(claim).create();
    } catch (KubernetesClientException e) {
      return e.getStatus() == null ? String.valueOf(e.getMessage()) : e.getStatus().getMessage();
    }
    throw new AssertionError("created: " + claim.getMetadata().getName());
  }

  /**
   * {@code HelmInstallIT}'s replicas and scale to zero, across nodes: each replica of the drained
   * Deployment sees its own device through CDI; scaled to zero, with every other pod of the apps
   * deleted, no claim stays allocated and no node keeps a CDI spec.
   */
  @Test
  @Order(13)
  void eachReplicaSeesItsOwnDeviceAndScalingToZeroFreesThemOnEveryNode() {
    List<String> devices = new ArrayList<>();
    for (Pod p : running("drained")) {
      ResourceClaim claim = Dra.claimOf(client, p, "gpu");
      assertThat(awaitListed(p)).contains("KDRA_DEVICE_0=gpu-" + RealPods.deviceIndex(claim));
      devices.addAll(Dra.devices(claim));
    }
    assertThat(devices).hasSize(3).doesNotHaveDuplicates();
    client.apps().deployments().inNamespace(APPS).withName("drained").scale(0);
    client.pods().inNamespace(APPS).delete();
    await("no pod, no allocated claim, no CDI spec left")
        .atMost(RealPods.POD_TIMEOUT)
        .pollInterval(Duration.ofSeconds(1))
        .untilAsserted(
            () -> {
              assertThat(client.pods().inNamespace(APPS).list().getItems())
                  .extracting(p -> p.getMetadata().getName())
                  .isEmpty();
              assertThat(appClaims()).flatMap(Dra::devices).isEmpty();
              for (RealNode node : cluster.nodes) {
                assertThat(RealPods.specFiles(node.cdiDir()))
                    .as("CDI specs of %s", node.name)
                    .isEmpty();
              }
            });
  }

  /**
   * {@code helm uninstall} leaves nothing of the release: no pod, no object of the chart, no
   * ResourceSlice of its driver (the kubelets delete an unregistered driver's slices), no claim.
   */
  @Test
  @Order(14)
  void uninstallLeavesNothingOfTheReleaseOnAnyNode() {
    client.resources(ResourceClaim.class).inNamespace(APPS).delete();
    long started = System.nanoTime();
    helm("uninstall", List.of());
    await("nothing of the release left")
        .atMost(Duration.ofSeconds(120))
        .pollInterval(Duration.ofSeconds(1))
        .untilAsserted(
            () -> {
              assertThat(client.pods().inNamespace(NAMESPACE).list().getItems())
                  .extracting(p -> p.getMetadata().getName())
                  .isEmpty();
              assertThat(KdraChart.releaseObjects(client, NAMESPACE, RELEASE))
                  .extracting(o -> o.getKind() + " " + o.getMetadata().getName())
                  .isEmpty();
              assertThat(slices()).extracting(sl -> sl.getMetadata().getName()).isEmpty();
              assertThat(appClaims()).extracting(c -> c.getMetadata().getName()).isEmpty();
            });
    System.out.printf(
        "[chart-defaults] helm uninstall to nothing left: %d ms%n",
        (System.nanoTime() - started) / 1_000_000);
  }

  /** helm {@code command} (install, upgrade, uninstall) of the release, as the admin. */
  private static void helm(String command, List<Path> values) {
    HelmRelease.run(
        command,
        ServiceProcess.moduleDir("helm").resolve("kdra"),
        RELEASE,
        NAMESPACE,
        dir.resolve("admin.kubeconfig"),
        values);
  }

  /** Namespace {@code name} at Pod Security level {@code level} (enforced). */
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

  /** Every node's pool has all its devices published. */
  private static void assertEveryPoolPublished() {
    for (RealNode node : cluster.nodes) {
      assertThat(Dra.publishedDevices(client, DRIVER, node.name))
          .as("devices of %s's pool", node.name)
          .isEqualTo(DEVICES_PER_NODE);
    }
  }

  private static void awaitEveryPoolPublished(String what, Duration within) {
    await(what)
        .atMost(within)
        .pollInterval(Duration.ofMillis(500))
        .untilAsserted(ChartDefaultsMultiNodeIT::assertEveryPoolPublished);
  }

  /** Awaits every driver's stream acknowledged again ({@link #driverConnections}) since then. */
  private static void awaitEveryDriverReconnectedSince(Map<String, Long> connectedBefore) {
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
  }

  /** Awaits the pod bound; returns the node it is bound to. */
  private static RealNode awaitBound(Pod pod) {
    String name = pod.getMetadata().getName();
    await("pod " + name + " bound")
        .atMost(RealPods.POD_TIMEOUT)
        .untilAsserted(() -> assertThat(Dra.get(client, pod).getSpec().getNodeName()).isNotNull());
    return cluster.node(Dra.get(client, pod).getSpec().getNodeName());
  }

  /** A bound pod's log once it listed its devices ({@link RealPods#awaitListed}). */
  private static List<String> awaitListed(Pod pod) {
    return RealPods.awaitListed(client, cluster.node(pod.getSpec().getNodeName()), pod);
  }

  /** The claims of the apps' namespace. */
  private static List<ResourceClaim> appClaims() {
    return client.resources(ResourceClaim.class).inNamespace(APPS).list().getItems();
  }

  /** The release's pods by UID, with their names. */
  private static Map<String, String> podUids() {
    return releasePods().stream()
        .collect(Collectors.toMap(p -> p.getMetadata().getUid(), p -> p.getMetadata().getName()));
  }

  /** Deletes the lease holder's pod; returns it once another replica of {@code component} leads. */
  private static String takeOver(String lease, String component) {
    String leader = leaseHolder(lease);
    assertThat(componentPods(component))
        .extracting(p -> p.getMetadata().getName())
        .as("%s's holder is one of its pods", lease)
        .contains(leader);
    client.pods().inNamespace(NAMESPACE).withName(leader).delete();
    await("another " + component + " holds " + lease)
        .atMost(TAKEOVER_TIMEOUT)
        .pollInterval(Duration.ofMillis(250))
        .until(
            () -> {
              String holder = leaseHolder(lease);
              return holder != null && !holder.isEmpty() && !holder.equals(leader);
            });
    return leader;
  }

  /** From the pod's creation to its PodScheduled condition (seconds: the API's resolution). */
  private static Duration waitedToBeScheduled(Pod pod) {
    String scheduled =
        pod.getStatus().getConditions().stream()
            .filter(c -> c.getType().equals("PodScheduled") && c.getStatus().equals("True"))
            .map(c -> c.getLastTransitionTime())
            .findFirst()
            .orElseThrow();
    return Duration.between(
        java.time.Instant.parse(pod.getMetadata().getCreationTimestamp()),
        java.time.Instant.parse(scheduled));
  }

  /** The kubelet's events of a failed prepare in the apps' namespace. */
  private static List<String> preparesFailed() {
    return client.v1().events().inNamespace(APPS).list().getItems().stream()
        .filter(e -> e.getReason() != null && e.getReason().contains("Prepare"))
        .filter(e -> "Warning".equals(e.getType()))
        .map(e -> e.getInvolvedObject().getName() + ": " + e.getMessage())
        .toList();
  }

  /** The Deployment {@code app}'s pods that run and are not being deleted. */
  private static List<Pod> running(String app) {
    return client.pods().inNamespace(APPS).withLabel("app", app).list().getItems().stream()
        .filter(p -> p.getMetadata().getDeletionTimestamp() == null)
        .filter(p -> p.getStatus() != null && "Running".equals(p.getStatus().getPhase()))
        .toList();
  }

  /** Waits until no pod of the apps' namespace has a name starting with one of {@code prefixes}. */
  private static void awaitGone(List<String> prefixes) {
    await("earlier pods gone")
        .atMost(RealPods.POD_TIMEOUT)
        .until(
            () ->
                client.pods().inNamespace(APPS).list().getItems().stream()
                    .noneMatch(
                        p ->
                            prefixes.stream()
                                .anyMatch(x -> p.getMetadata().getName().startsWith(x))));
  }

  /** kubectl of the control plane's version as the admin; fails on a non-zero exit. */
  private static void kubectl(String... args) throws IOException, InterruptedException {
    List<String> command =
        new ArrayList<>(
            List.of(
                ControlPlane.kubectl().toString(),
                "--kubeconfig",
                dir.resolve("admin.kubeconfig").toString()));
    command.addAll(List.of(args));
    Process p = new ProcessBuilder(command).redirectErrorStream(true).start();
    String out =
        new String(p.getInputStream().readAllBytes(), java.nio.charset.StandardCharsets.UTF_8);
    assertThat(p.waitFor(4, TimeUnit.MINUTES)).as("kubectl %s ended", args[0]).isTrue();
    System.out.printf("[chart-defaults] kubectl %s:%n%s%n", String.join(" ", args), out);
    assertThat(p.exitValue()).as("kubectl %s: %s", args[0], out).isZero();
  }

  /** A pod in the apps' namespace that runs {@code script} once; returns it when it ended. */
  private static Pod runToEnd(String name, String script) {
    awaitDefaultServiceAccount(APPS);
    client
        .pods()
        .inNamespace(APPS)
        .resource(
            new PodBuilder()
                .withNewMetadata()
                .withName(name)
                .endMetadata()
                .withNewSpec()
                .withRestartPolicy("Never")
                .withAutomountServiceAccountToken(false)
                .withTerminationGracePeriodSeconds(1L)
                .addNewContainer()
                .withName("main")
                .withImage(RealNode.BUSYBOX)
                .withImagePullPolicy("Never")
                .withCommand("sh", "-c", script)
                .endContainer()
                .endSpec()
                .build())
        .create();
    return RealPods.awaitFinished(client, APPS, name);
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
    RealNode node = awaitBound(pod);
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

  /** The pod's log in the release's namespace, or why it cannot be read. */
  private static String podLog(String pod) {
    try {
      return client.pods().inNamespace(NAMESPACE).withName(pod).tailingLines(400).getLog();
    } catch (RuntimeException e) {
      return "(no log: " + e.getMessage() + ")\n";
    }
  }

  private static String lastLines(String text, int count) {
    List<String> lines = text.lines().toList();
    return String.join("\n", lines.subList(Math.max(0, lines.size() - count), lines.size())) + "\n";
  }

  /** Whether {@code name} is a publisher pod that exists and is not being deleted. */
  private static boolean isLivePublisher(String name) {
    return componentPods("slice-publisher").stream()
        .anyMatch(
            p ->
                p.getMetadata().getName().equals(name)
                    && p.getMetadata().getDeletionTimestamp() == null);
  }

  /** The publisher Lease's holder. */
  private static String leaseHolder() {
    return leaseHolder(PUBLISHER_LEASE);
  }

  /** The holder of the release's Lease {@code name}. */
  private static String leaseHolder(String name) {
    Lease lease = client.resources(Lease.class).inNamespace(NAMESPACE).withName(name).get();
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
    StringBuilder digest = new StringBuilder();
    for (Lease lease : client.resources(Lease.class).inNamespace(NAMESPACE).list().getItems()) {
      digest.append(
          String.format(
              "Lease %s: holder %s, renewed %s%n",
              lease.getMetadata().getName(),
              lease.getSpec().getHolderIdentity(),
              lease.getSpec().getRenewTime()));
    }
    for (Pod pod : releasePods()) {
      String name = pod.getMetadata().getName();
      String log = podLog(name);
      TestFiles.write(target.resolve("pods").resolve(NAMESPACE + "-" + name + ".log"), log);
      if (!"device-driver".equals(pod.getMetadata().getLabels().get(COMPONENT))) {
        digest.append(String.format("--- %s (last lines)%n", name)).append(lastLines(log, 25));
      }
    }
    // .ci/run prints every digest.txt after a failure: CI's output ends with what went wrong
    TestFiles.write(target.resolve("digest.txt"), digest.toString());
    System.out.println(
        "[chart-defaults] "
            + what
            + " failed; objects in "
            + target
            + ", node and pod logs in target/it-dumps/ChartDefaultsMultiNodeIT");
  }
}
