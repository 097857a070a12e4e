package io.kdra.it.services;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.fabric8.kubernetes.api.model.ConfigMapBuilder;
import io.fabric8.kubernetes.api.model.HasMetadata;
import io.fabric8.kubernetes.api.model.NamespaceBuilder;
import io.fabric8.kubernetes.api.model.ServiceAccountBuilder;
import io.fabric8.kubernetes.api.model.resource.v1.DeviceClass;
import io.fabric8.kubernetes.api.model.resource.v1.ResourceClaim;
import io.fabric8.kubernetes.api.model.resource.v1.ResourceSlice;
import io.fabric8.kubernetes.client.Config;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.kdra.it.chart.KdraChart;
import io.kdra.it.controlplane.ControlPlane;
import io.kdra.it.controlplane.UpstreamControllers;
import io.kdra.it.nodes.NodeRegistration;
import io.kdra.it.nodes.RealNode;
import io.kdra.it.nodes.SimulatedNode;
import io.kdra.it.nodes.TestKubelet;
import io.kdra.it.support.ServiceProcess;
import io.kdra.it.support.TestFiles;
import java.nio.file.Path;
import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * The four kdra services as separate processes against one real API server, with simulated nodes (a
 * Node object, a device-driver process with its own socket, CDI and checkpoint directories and a
 * simulated inventory, and a {@link TestKubelet}), or with {@link RealNode}s (the real kubelet and
 * containerd; the drivers are their plugins, with the same simulated inventories). The chart's
 * ServiceAccounts, RBAC, DeviceClasses and CRD are applied first ({@link KdraChart}), and each
 * service runs with a token for its own ServiceAccount, never the admin certificate that the test
 * code uses. Closing it stops every process and removes the cluster-scoped objects it created, so
 * the next test class starts from a clean cluster (the chart's objects stay: the next stack applies
 * them again).
 *
 * <p>Its parts, each with one job: {@link ServiceIdentities} (the services' kubeconfigs and
 * clients), {@link StackServices} (the processes, stopped, crashed and started again by tests;
 * {@link StackServiceStarts} configures them), {@link StackNodes} (Node registration, kubelets,
 * real nodes, each node's directories) and {@link StackDump} (what a failed test leaves).
 */
public final class Stack implements AutoCloseable {

  public static final String DRIVER = KdraChart.GPU_DRIVER;
  public static final String SCHEDULER = "dra-claim-controller";

  private static final String TEST_LABEL = NodeRegistration.TEST_LABEL;

  private static final Duration READY_TIMEOUT = Duration.ofSeconds(180);

  public final KubernetesClient client;
  public final String namespace;
  final String name;

  /** The services' kubeconfigs, and clients that authenticate as a service. */
  public final ServiceIdentities identities;

  /** The nodes: their objects, kubelets and directories. */
  public final StackNodes nodes;

  /** The service processes. */
  public final StackServices services;

  private final Path logDir;
  private final StackServiceStarts starts;
  private final StackDump dumps;

  /** The run's control plane, when this stack asked for the full one. */
  private final ControlPlane.Running fullControlPlane;

  /** kube-scheduler and kube-controller-manager, while they run for this stack. */
  private volatile UpstreamControllers upstream;

  private Stack(
      KubernetesClient client,
      String kubeconfig,
      String name,
      List<SimulatedNode> nodes,
      Map<String, String> properties,
      boolean real,
      ControlPlane.Running fullControlPlane,
      Map<String, Boolean> kubeletFeatureGates) {
    this.client = client;
    this.fullControlPlane = fullControlPlane;
    this.name = name;
    this.namespace = name.toLowerCase().replaceAll("[^a-z0-9-]", "-");
    this.logDir = Path.of("target", "it-logs", name).toAbsolutePath();
    this.identities =
        new ServiceIdentities(
            Config.fromKubeconfig(kubeconfig),
            Path.of("target", "it-kubeconfigs", name).toAbsolutePath());
    this.nodes =
        new StackNodes(client, kubeconfig, name, namespace, nodes, real, kubeletFeatureGates);
    this.services = new StackServices(this.nodes, READY_TIMEOUT);
    this.starts =
        new StackServiceStarts(
            client,
            namespace,
            logDir,
            properties,
            identities,
            this.nodes,
            services,
            fullControlPlane != null);
    this.dumps = new StackDump(name, client, namespace, services, this.nodes);
  }

  /**
   * Starts publisher, one driver per node, the claim-controller and {@code bridges}
   * computeclass-bridge replicas (more than one elect a leader), all at once, and returns when all
   * are ready.
   */
  public static Stack start(
      KubernetesClient client,
      String kubeconfig,
      String name,
      List<SimulatedNode> nodes,
      int bridges,
      int controllers,
      Map<String, String> properties) {
    return start(client, kubeconfig, name, nodes, bridges, controllers, properties, false, null);
  }

  /**
   * As above; with {@code real}, every node is a {@link RealNode} (the real kubelet with its own
   * containerd) instead of a Node object and a {@link TestKubelet}: each device-driver is that
   * kubelet's plugin and writes its CDI specs where that containerd reads them. With {@code
   * fullControlPlane}, the stack also runs kube-scheduler and kube-controller-manager against that
   * control plane's API server ({@link UpstreamControllers}), from before its services start until
   * it closes.
   */
  public static Stack start(
      KubernetesClient client,
      String kubeconfig,
      String name,
      List<SimulatedNode> nodes,
      int bridges,
      int controllers,
      Map<String, String> properties,
      boolean real,
      ControlPlane.Running fullControlPlane) {
    return start(
        client,
        kubeconfig,
        name,
        nodes,
        bridges,
        controllers,
        properties,
        real,
        fullControlPlane,
        Links.NONE,
        Map.of());
  }

  /**
   * The {@link io.kdra.it.support.PausableProxy}s a stack puts between its services, for tests that
   * partition them.
   *
   * @param publishers above 0: that many slice-publisher replicas (more than one elect a leader
   *     with short periods), and each driver dials them through a proxy of its own ({@link
   *     StackServices#publisherLink})
   * @param controllerApi each claim-controller replica reaches the API server through a proxy of
   *     its own ({@link StackServices#apiLink})
   * @param webhook the publishers serve the admission webhook, which the API server is to reach
   *     through one proxy ({@link StackServices#webhook})
   */
  public record Links(int publishers, boolean controllerApi, boolean webhook) {
    public static final Links NONE = new Links(0, false, false);
  }

  /**
   * As above, with these {@link Links}, and the real nodes' kubelets with these {@code
   * kubeletFeatureGates} in their configuration (a gate left out keeps the version's default).
   */
  public static Stack start(
      KubernetesClient client,
      String kubeconfig,
      String name,
      List<SimulatedNode> nodes,
      int bridges,
      int controllers,
      Map<String, String> properties,
      boolean real,
      ControlPlane.Running fullControlPlane,
      Links links,
      Map<String, Boolean> kubeletFeatureGates) {
    Stack stack =
        new Stack(
            client,
            kubeconfig,
            name,
            nodes,
            properties,
            real,
            fullControlPlane,
            kubeletFeatureGates);
    try {
      stack.startAll(bridges, controllers, links);
      return stack;
    } catch (RuntimeException | Error e) {
      stack.dump("startup");
      stack.close();
      throw e;
    }
  }

  private void startAll(int bridges, int controllers, Links links) {
    long started = System.nanoTime();
    ServiceProcess.killLeftovers();
    TestFiles.deleteRecursively(logDir);
    nodes.clear();
    identities.clear();
    KdraChart.install(client);
    client
        .namespaces()
        .resource(
            new NamespaceBuilder().withNewMetadata().withName(namespace).endMetadata().build())
        .serverSideApply();
    if (fullControlPlane != null) {
      upstream =
          UpstreamControllers.start(
              fullControlPlane, identities.admin(), identities.caFile(), logDir);
    }
    nodes.start();
    podPrerequisites();
    if (links.publishers() > 0) {
      starts.drivers(
          starts.publishers(links.publishers(), links.publishers() > 1, links.webhook()), true);
    } else {
      starts.drivers(starts.publisher());
    }
    starts.controllers(controllers, links.controllerApi());
    starts.bridges(bridges);
    nodes.startKubelets(READY_TIMEOUT);
    services.awaitAllReady();
    System.out.printf(
        "[stack] %s: %d services ready in %d ms; logs in %s%n",
        name, services.processList().size(), (System.nanoTime() - started) / 1_000_000, logDir);
  }

  /**
   * The {@code default} ServiceAccount and {@code kube-root-ca.crt} in the namespaces pods run in:
   * the ServiceAccount admission plugin refuses pods without their ServiceAccount, and the kubelet
   * mounts both into each pod.
   */
  private void podPrerequisites() {
    if (fullControlPlane != null) {
      // kube-controller-manager publishes them in every namespace
      awaitPublishedByControllerManager();
      return;
    }
    // what kube-controller-manager (absent here) publishes in every namespace pods run in
    for (String ns : List.of(namespace, KdraChart.NAMESPACE)) {
      quietly(
          () ->
              client
                  .serviceAccounts()
                  .inNamespace(ns)
                  .resource(
                      new ServiceAccountBuilder()
                          .withNewMetadata()
                          .withName("default")
                          .endMetadata()
                          .build())
                  .serverSideApply());
      quietly(
          () ->
              client
                  .configMaps()
                  .inNamespace(ns)
                  .resource(
                      new ConfigMapBuilder()
                          .withNewMetadata()
                          .withName("kube-root-ca.crt")
                          .endMetadata()
                          .addToData("ca.crt", TestFiles.read(identities.caFile()))
                          .build())
                  .serverSideApply());
    }
  }

  /** The {@code default} ServiceAccount and {@code kube-root-ca.crt} where pods run. */
  private void awaitPublishedByControllerManager() {
    await()
        .atMost(READY_TIMEOUT)
        .untilAsserted(
            () -> {
              for (String ns : List.of(namespace, KdraChart.NAMESPACE)) {
                assertThat(client.serviceAccounts().inNamespace(ns).withName("default").get())
                    .as("ServiceAccount default in " + ns)
                    .isNotNull();
                assertThat(client.configMaps().inNamespace(ns).withName("kube-root-ca.crt").get())
                    .as("kube-root-ca.crt in " + ns)
                    .isNotNull();
              }
            });
  }

  /** Creates a cluster-scoped object labelled for removal when the stack closes. */
  public <T extends HasMetadata> T createClusterScoped(T object) {
    if (object.getMetadata().getLabels() == null) {
      object.getMetadata().setLabels(new LinkedHashMap<>());
    }
    object.getMetadata().getLabels().put(TEST_LABEL, namespace);
    return client.resource(object).create();
  }

  /** Writes the services' logs and the relevant objects under {@code target/it-dumps/}. */
  Path dump(String test) {
    return dumps.dump(test, upstream);
  }

  @Override
  public void close() {
    // workloads first: with kube-controller-manager running, their pods would come back (and,
    // left in the namespace, come back under the next full control plane)
    quietly(() -> client.apps().deployments().inNamespace(namespace).withGracePeriod(0).delete());
    quietly(() -> client.apps().replicaSets().inNamespace(namespace).withGracePeriod(0).delete());
    quietly(() -> client.apps().statefulSets().inNamespace(namespace).withGracePeriod(0).delete());
    quietly(() -> client.apps().daemonSets().inNamespace(namespace).withGracePeriod(0).delete());
    quietly(() -> client.batch().v1().jobs().inNamespace(namespace).withGracePeriod(0).delete());
    UpstreamControllers u = upstream;
    upstream = null;
    if (u != null) {
      u.close();
    }
    stopProcesses();
    // every process, mount and cgroup of the real nodes, and their Node objects
    nodes.closeRealNodes();
    // no garbage collector and no kubelet: remove what this class left behind by hand
    quietly(() -> client.pods().inNamespace(namespace).withGracePeriod(0).delete());
    quietly(
        () ->
            client
                .resources(ResourceClaim.class)
                .inNamespace(namespace)
                .list()
                .getItems()
                .forEach(
                    c -> {
                      if (!c.getMetadata().getFinalizers().isEmpty()) {
                        // again on a conflict: a controller may still write the claim
                        NodeRegistration.onConflictRetry(
                            () ->
                                client
                                    .resource(c)
                                    .edit(
                                        x -> {
                                          x.getMetadata().setFinalizers(List.of());
                                          return x;
                                        }));
                      }
                      client.resource(c).withGracePeriod(0).delete();
                    }));
    quietly(() -> client.resources(ResourceSlice.class).delete());
    quietly(() -> client.resources(DeviceClass.class).withLabel(TEST_LABEL, namespace).delete());
    nodes.deleteObjects();
  }

  /**
   * Deletes this stack's pods and waits until they and their claims are gone, so that each test
   * starts with every device free (the controller deletes generated claims with their pods).
   */
  public void deletePodsAndAwaitClaimsGone() {
    client.pods().inNamespace(namespace).delete();
    await()
        .atMost(Duration.ofSeconds(60))
        .untilAsserted(
            () -> {
              assertThat(client.pods().inNamespace(namespace).list().getItems()).isEmpty();
              assertThat(
                      client
                          .resources(ResourceClaim.class)
                          .inNamespace(namespace)
                          .list()
                          .getItems())
                  .isEmpty();
            });
  }

  /**
   * Stops the kubelets and every service process, without touching the API server (which may be
   * gone already, e.g. when the JVM is shutting down). Idempotent.
   */
  public void stopProcesses() {
    services.closing();
    nodes.stopKubelets();
    services.stopAll();
  }

  /** Runs a cleanup step; a failure is printed, and the next step runs. */
  static void quietly(Runnable r) {
    try {
      r.run();
    } catch (RuntimeException e) {
      System.out.println("[stack] cleanup: " + e);
    }
  }
}
