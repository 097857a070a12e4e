package io.kdra.it;

import io.fabric8.kubernetes.api.model.HasMetadata;
import io.fabric8.kubernetes.api.model.NamespaceBuilder;
import io.fabric8.kubernetes.api.model.NodeBuilder;
import io.fabric8.kubernetes.api.model.NodeConditionBuilder;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.Quantity;
import io.fabric8.kubernetes.api.model.resource.v1.DeviceClass;
import io.fabric8.kubernetes.api.model.resource.v1.ResourceClaim;
import io.fabric8.kubernetes.api.model.resource.v1.ResourceClaimTemplate;
import io.fabric8.kubernetes.api.model.resource.v1.ResourceSlice;
import io.fabric8.kubernetes.client.Config;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.utils.Serialization;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Base64;
import java.util.Comparator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.Supplier;
import java.util.stream.Stream;

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
 */
final class Stack implements AutoCloseable {

  static final String DRIVER = "gpu.kdra.io";
  static final String SCHEDULER = "dra-claim-controller";

  /** Label on the cluster-scoped objects tests create, so that they are removed afterwards. */
  static final String TEST_LABEL = "e2e.kdra.io/test";

  private static final Duration READY_TIMEOUT = Duration.ofSeconds(180);

  /**
   * A replica that keeps exiting is left down after this many restarts within {@link
   * #CRASH_LOOP_WINDOW} (a crash loop); a long soak may lose a Lease more often than that in all.
   */
  private static final int MAX_RESTARTS = 5;

  private static final Duration CRASH_LOOP_WINDOW = Duration.ofMinutes(1);

  final KubernetesClient client;
  final String namespace;
  final String name;
  private final Path logDir;
  private final Path nodesDir;

  /** The admin kubeconfig's API server and CA; the services get their own kubeconfigs. */
  private final Config admin;

  private final Path caFile;
  private final Path kubeconfigDir;
  private final Map<String, String> kube;

  /** Guarded by {@code this}: replicas are started again from their exit's callback. */
  private final Map<String, ServiceProcess> processes = new LinkedHashMap<>();

  /** The leader-electing replicas, started again when they exit by themselves. */
  private final Set<String> replicas = ConcurrentHashMap.newKeySet();

  private final Map<String, Integer> restarts = new ConcurrentHashMap<>();
  private final Map<String, java.util.Deque<Long>> recentRestarts = new ConcurrentHashMap<>();
  private volatile boolean closing;
  private final Map<String, TestKubelet> kubelets = new LinkedHashMap<>();
  private final List<SimulatedNode> nodes;

  /** Whether the nodes are {@link RealNode}s (a real kubelet and containerd each). */
  private final boolean real;

  private final String kubeconfig;
  private final Map<String, RealNode> realNodes = new LinkedHashMap<>();

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
      ControlPlane.Running fullControlPlane) {
    this.client = client;
    this.fullControlPlane = fullControlPlane;
    this.real = real;
    this.kubeconfig = kubeconfig;
    this.name = name;
    this.namespace = name.toLowerCase().replaceAll("[^a-z0-9-]", "-");
    this.nodes = nodes;
    this.logDir = Path.of("target", "it-logs", name).toAbsolutePath();
    // short: unix socket paths must stay under 108 bytes
    this.nodesDir = Path.of("target", "n").toAbsolutePath();
    this.admin = Config.fromKubeconfig(kubeconfig);
    this.caFile = caFile(admin);
    this.kubeconfigDir = Path.of("target", "it-kubeconfigs", name).toAbsolutePath();
    this.kube = serviceProperties();
    this.kube.putAll(properties);
  }

  /**
   * Starts publisher, one driver per node, the claim-controller and, if asked, the
   * computeclass-bridge, all at once, and returns when all are ready.
   */
  static Stack start(
      KubernetesClient client,
      String kubeconfig,
      String name,
      List<SimulatedNode> nodes,
      boolean bridge,
      int controllers,
      Map<String, String> properties) {
    return start(client, kubeconfig, name, nodes, bridge ? 1 : 0, controllers, properties);
  }

  /** As above, with {@code bridges} computeclass-bridge replicas (more than one elect a leader). */
  static Stack start(
      KubernetesClient client,
      String kubeconfig,
      String name,
      List<SimulatedNode> nodes,
      int bridges,
      int controllers,
      Map<String, String> properties) {
    return start(client, kubeconfig, name, nodes, bridges, controllers, properties, false);
  }

  /**
   * As above; with {@code real}, every node is a {@link RealNode} (the real kubelet with its own
   * containerd) instead of a Node object and a {@link TestKubelet}: each device-driver is that
   * kubelet's plugin and writes its CDI specs where that containerd reads them.
   */
  static Stack start(
      KubernetesClient client,
      String kubeconfig,
      String name,
      List<SimulatedNode> nodes,
      int bridges,
      int controllers,
      Map<String, String> properties,
      boolean real) {
    return start(client, kubeconfig, name, nodes, bridges, controllers, properties, real, null);
  }

  /**
   * As above; with {@code fullControlPlane}, the stack also runs kube-scheduler and
   * kube-controller-manager against that control plane's API server ({@link UpstreamControllers}),
   * from before its services start until it closes.
   */
  static Stack start(
      KubernetesClient client,
      String kubeconfig,
      String name,
      List<SimulatedNode> nodes,
      int bridges,
      int controllers,
      Map<String, String> properties,
      boolean real,
      ControlPlane.Running fullControlPlane) {
    Stack stack = new Stack(client, kubeconfig, name, nodes, properties, real, fullControlPlane);
    try {
      stack.startAll(bridges, controllers);
      return stack;
    } catch (RuntimeException | Error e) {
      stack.dump("startup");
      stack.close();
      throw e;
    }
  }

  private void startAll(int bridges, int controllers) {
    long started = System.nanoTime();
    ServiceProcess.killLeftovers();
    deleteRecursively(logDir);
    deleteRecursively(nodesDir);
    deleteRecursively(kubeconfigDir);
    KdraChart.install(client);
    client
        .namespaces()
        .resource(
            new NamespaceBuilder().withNewMetadata().withName(namespace).endMetadata().build())
        .serverSideApply();
    if (fullControlPlane != null) {
      upstream = UpstreamControllers.start(fullControlPlane, admin, caFile, logDir);
    }
    if (real) {
      startRealNodes();
    } else {
      for (SimulatedNode node : nodes) {
        createNode(node.name());
      }
    }
    podPrerequisites();

    Map<String, String> publisher = new LinkedHashMap<>(kube);
    // as the chart has it (featureGates.driverAuthentication): each driver stream's token is
    // reviewed and must name the node whose devices it reports
    publisher.put("publisher.auth.enabled", "true");
    // only the chart's driver ServiceAccount, with tokens for the publisher's audience
    publisher.put("publisher.auth.service-accounts", KdraChart.driverAccount());
    // leader election on, as the chart has it, on the chart's Lease (which its Role may renew);
    // one identity for every stack of a run, so that a stack's publisher takes over the Lease of
    // the previous stack's at once instead of waiting for it to expire
    publisher.put("publisher.leader-election.enabled", "true");
    publisher.put("publisher.leader-election.lease-name", KdraChart.PUBLISHER_LEASE);
    publisher.put("publisher.leader-election.lease-namespace", KdraChart.NAMESPACE);
    publisher.put("publisher.leader-election.identity", "slice-publisher");
    publisher.put("publisher.resync-period", "5s");
    // the inventory gRPC's own port (the chart's 9000), kept across restarts with the properties
    int grpcPort = ServiceProcess.freePort();
    publisher.put("quarkus.grpc.server.port", String.valueOf(grpcPort));
    ServiceProcess pub =
        ServiceProcess.start(
            "slice-publisher",
            "slice-publisher",
            publisher,
            identity(
                KdraChart.PUBLISHER,
                "slice-publisher",
                KdraChart.token(client, KdraChart.PUBLISHER)),
            logDir);
    put(pub);

    for (SimulatedNode node : nodes) {
      // the node's token and sockets are in it: the owner's only, as the kubelet's are
      Path dir = OwnerOnly.createDirectories(nodeDir(node.name()));
      Path inventory = dir.resolve("inventory.yaml");
      write(inventory, node.inventory());
      Map<String, String> driver = new LinkedHashMap<>(kube);
      driver.put("driver.node-name", node.name());
      driver.put("driver.backend", "simulated");
      driver.put("driver.inventory-file", inventory.toString());
      driver.put("driver.discovery-interval", "1s");
      driver.put("driver.kubelet-registry-dir", registryDir(node.name()).toString());
      driver.put("driver.kubelet-plugins-dir", pluginsDir(node.name()).toString());
      driver.put("driver.cdi-dir", cdiDir(node.name()).toString());
      driver.put("driver.checkpoint-file", checkpointFile(node.name()).toString());
      driver.put("driver.publisher.address", "127.0.0.1:" + grpcPort);
      // the tokens the kubelet would project into the DaemonSet's pod on this node: one for
      // the driver's API client, one for the slice-publisher's audience (the chart's
      // publisher-token volume), re-read on every connect
      Pod driverPod = KdraChart.driverPod(client, node.name(), real);
      String token = KdraChart.token(client, KdraChart.DRIVER, driverPod);
      Path tokenFile = publisherTokenFile(node.name());
      OwnerOnly.write(
          tokenFile,
          KdraChart.publisherToken(
              client, KdraChart.NAMESPACE, KdraChart.serviceAccount(KdraChart.DRIVER), driverPod));
      driver.put("driver.publisher.token-file", tokenFile.toString());
      driver.put("driver.publisher.initial-backoff", "250ms");
      driver.put("driver.publisher.max-backoff", "2s");
      // snapshots keep coming, as from a live node: deleted nodes must stay deleted regardless
      driver.put("driver.publisher.heartbeat", "2s");
      ServiceProcess p =
          ServiceProcess.start(
              "device-driver",
              "device-driver-" + node.name(),
              driver,
              identity(KdraChart.DRIVER, "device-driver-" + node.name(), token),
              logDir);
      put(p);
    }

    Map<String, String> controller = new LinkedHashMap<>(kube);
    Map<String, String> controllerIdentity =
        identity(
            KdraChart.CONTROLLER,
            "claim-controller",
            KdraChart.token(client, KdraChart.CONTROLLER));
    controller.put("kdra.claim-controller.retry.initial-backoff", "500ms");
    controller.put("kdra.claim-controller.retry.max-backoff", "5s");
    if (controllers == 1) {
      controller.put("kdra.claim-controller.leader-election.enabled", "false");
      ServiceProcess cc =
          ServiceProcess.start(
              "claim-controller", "claim-controller", controller, controllerIdentity, logDir);
      put(cc);
    } else {
      // replicas elect a leader through the chart's Lease (the only one its Role may renew, in
      // the release namespace), with short periods so that a standby takes over within seconds
      // of the leader's crash
      controller.put("kdra.claim-controller.leader-election.enabled", "true");
      controller.put(
          "kdra.claim-controller.leader-election.lease-name", KdraChart.CONTROLLER_LEASE);
      controller.put("kdra.claim-controller.leader-election.lease-namespace", KdraChart.NAMESPACE);
      controller.put("kdra.claim-controller.leader-election.lease-duration", "6s");
      controller.put("kdra.claim-controller.leader-election.renew-deadline", "4s");
      controller.put("kdra.claim-controller.leader-election.retry-period", "1s");
      for (int i = 1; i <= controllers; i++) {
        String replica = "claim-controller-" + i;
        // the leader's identity, as HOSTNAME (the pod name) is in a Deployment
        Map<String, String> env = new LinkedHashMap<>(controllerIdentity);
        env.put("HOSTNAME", replica);
        ServiceProcess cc =
            ServiceProcess.start("claim-controller", replica, controller, env, logDir);
        putReplica(cc);
      }
    }

    if (bridges > 0) {
      // the ComputeClass CRD came with the chart (computeClassBridge.installComputeClassCRD)
      Map<String, String> b = new LinkedHashMap<>(kube);
      b.put("bridge.namespaces.names", namespace);
      Map<String, String> bridgeIdentity =
          identity(
              KdraChart.BRIDGE, "computeclass-bridge", KdraChart.token(client, KdraChart.BRIDGE));
      if (bridges == 1) {
        b.put("bridge.leader-election.enabled", "false");
        ServiceProcess br =
            ServiceProcess.start(
                "computeclass-bridge", "computeclass-bridge", b, bridgeIdentity, logDir);
        put(br);
      } else {
        // as the claim-controllers: the chart's Lease (the only one its Role may renew, in the
        // release namespace), short periods
        b.put("bridge.leader-election.enabled", "true");
        b.put("bridge.leader-election.lease-name", KdraChart.BRIDGE_LEASE);
        b.put("bridge.leader-election.lease-namespace", KdraChart.NAMESPACE);
        b.put("bridge.leader-election.lease-duration", "6s");
        b.put("bridge.leader-election.renew-deadline", "4s");
        b.put("bridge.leader-election.retry-period", "1s");
        for (int i = 1; i <= bridges; i++) {
          String replica = "computeclass-bridge-" + i;
          Map<String, String> env = new LinkedHashMap<>(bridgeIdentity);
          env.put("HOSTNAME", replica);
          ServiceProcess br = ServiceProcess.start("computeclass-bridge", replica, b, env, logDir);
          putReplica(br);
        }
      }
    }

    for (SimulatedNode node : real ? List.<SimulatedNode>of() : nodes) {
      TestKubelet kubelet = new TestKubelet(client, node.name(), DRIVER, registryDir(node.name()));
      kubelets.put(node.name(), kubelet);
      kubelet.register(READY_TIMEOUT);
      kubelet.start();
    }
    for (ServiceProcess p : processList()) {
      p.awaitReady(READY_TIMEOUT);
    }
    System.out.printf(
        "[stack] %s: %d services ready in %d ms; logs in %s%n",
        name, processList().size(), (System.nanoTime() - started) / 1_000_000, logDir);
  }

  /** Deletes the Node object and registers it again, as a kubelet does after a node is lost. */
  void recreateNode(String node) {
    createNode(node);
  }

  /** A Node as a kubelet would register it: Ready, with allocatable cpu, memory and pods. */
  private void createNode(String node) {
    client.nodes().withName(node).withGracePeriod(0).delete();
    registerNode(client, node, Map.of(TEST_LABEL, namespace));
  }

  /**
   * Creates the Node {@code node} as a kubelet registers it (its hostname label and {@code
   * labels}): Ready, with allocatable cpu, memory and pods, without the not-ready taint.
   */
  static void registerNode(KubernetesClient client, String node, Map<String, String> labels) {
    client
        .nodes()
        .resource(
            new NodeBuilder()
                .withNewMetadata()
                .withName(node)
                .addToLabels("kubernetes.io/hostname", node)
                .addToLabels(labels)
                .endMetadata()
                .build())
        .create();
    Map<String, Quantity> resources =
        Map.of(
            "cpu", new Quantity("8"), "memory", new Quantity("32Gi"), "pods", new Quantity("110"));
    // kube-controller-manager, where it runs, writes new Nodes too (taints, annotations): each
    // edit is retried on a conflict
    onConflictRetry(
        () ->
            client
                .nodes()
                .withName(node)
                .editStatus(
                    n -> {
                      n.setStatus(
                          new io.fabric8.kubernetes.api.model.NodeStatusBuilder()
                              .withCapacity(resources)
                              .withAllocatable(resources)
                              .withConditions(
                                  new NodeConditionBuilder()
                                      .withType("Ready")
                                      .withStatus("True")
                                      .withReason("KubeletReady")
                                      .withMessage("kubelet is posting ready status")
                                      .withLastHeartbeatTime(Instant.now().toString())
                                      .withLastTransitionTime(Instant.now().toString())
                                      .build())
                              .build());
                      return n;
                    }));
    // the API server's TaintNodesByCondition admission taints every new Node not-ready; the
    // node lifecycle controller (kube-controller-manager, absent by default) lifts it once Ready
    onConflictRetry(
        () ->
            client
                .nodes()
                .withName(node)
                .edit(
                    n -> {
                      if (n.getSpec().getTaints() != null) {
                        n.getSpec()
                            .getTaints()
                            .removeIf(t -> t.getKey().equals("node.kubernetes.io/not-ready"));
                      }
                      return n;
                    }));
  }

  /** Runs {@code write} again (it re-reads) while the API server answers 409 Conflict. */
  static <T> T onConflictRetry(Supplier<T> write) {
    for (int attempt = 1; ; attempt++) {
      try {
        return write.get();
      } catch (io.fabric8.kubernetes.client.KubernetesClientException e) {
        if (e.getCode() != 409 || attempt >= 10) {
          throw e;
        }
      }
    }
  }

  /**
   * The real nodes, started in parallel (a node takes about 10 s, most of it waiting), after ending
   * what a killed run left of its nodes. Their directories are short: unix socket paths must stay
   * under 108 bytes.
   */
  private void startRealNodes() {
    NodeCgroups.reapLeftovers();
    RealNodeBinaries binaries = RealNodeBinaries.fromCache();
    Path base = Path.of("target", "rn").toAbsolutePath();
    List<Thread> threads = new ArrayList<>();
    List<RuntimeException> failures = java.util.Collections.synchronizedList(new ArrayList<>());
    for (SimulatedNode node : nodes) {
      Thread t =
          new Thread(
              () -> {
                try {
                  RealNode n =
                      RealNode.start(
                          node.name(), base.resolve(node.name()), binaries, client, kubeconfig);
                  synchronized (realNodes) {
                    realNodes.put(node.name(), n);
                  }
                } catch (RuntimeException e) {
                  failures.add(e);
                }
              },
              "start-" + node.name());
      threads.add(t);
      t.start();
    }
    for (Thread t : threads) {
      try {
        t.join();
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
        throw new IllegalStateException(e);
      }
    }
    if (!failures.isEmpty()) {
      throw failures.get(0);
    }
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
                      new io.fabric8.kubernetes.api.model.ServiceAccountBuilder()
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
                      new io.fabric8.kubernetes.api.model.ConfigMapBuilder()
                          .withNewMetadata()
                          .withName("kube-root-ca.crt")
                          .endMetadata()
                          .addToData("ca.crt", read(caFile))
                          .build())
                  .serverSideApply());
    }
  }

  /** The {@code default} ServiceAccount and {@code kube-root-ca.crt} where pods run. */
  private void awaitPublishedByControllerManager() {
    org.awaitility.Awaitility.await()
        .atMost(READY_TIMEOUT)
        .untilAsserted(
            () -> {
              for (String ns : List.of(namespace, KdraChart.NAMESPACE)) {
                org.assertj.core.api.Assertions.assertThat(
                        client.serviceAccounts().inNamespace(ns).withName("default").get())
                    .as("ServiceAccount default in " + ns)
                    .isNotNull();
                org.assertj.core.api.Assertions.assertThat(
                        client.configMaps().inNamespace(ns).withName("kube-root-ca.crt").get())
                    .as("kube-root-ca.crt in " + ns)
                    .isNotNull();
              }
            });
  }

  /** The real node {@code node} (a stack on real nodes only). */
  RealNode realNode(String node) {
    RealNode n = realNodes.get(node);
    if (n == null) {
      throw new IllegalStateException(node + " is not a real node of " + name);
    }
    return n;
  }

  /** The directory of the harness's own files for the node's driver (inventory, token). */
  Path nodeDir(String node) {
    return nodesDir.resolve(node);
  }

  /** The kubelet's plugin registry: the driver's registration socket. */
  /** The file the node's driver reads its slice-publisher token from, on every connect. */
  Path publisherTokenFile(String node) {
    return nodeDir(node).resolve("publisher-token");
  }

  Path registryDir(String node) {
    return real ? realNode(node).registryDir() : nodeDir(node).resolve("reg");
  }

  /** The kubelet's plugins directory: the driver's DRA socket (and, here, its checkpoint). */
  Path pluginsDir(String node) {
    return real ? realNode(node).pluginsDir() : nodeDir(node).resolve("plugins");
  }

  Path checkpointFile(String node) {
    return pluginsDir(node).resolve(real ? DRIVER + "/checkpoint.json" : "checkpoint.json");
  }

  /** Where the node's driver writes CDI specs (on a real node: containerd's cdi_spec_dirs). */
  Path cdiDir(String node) {
    return real ? realNode(node).cdiDir() : nodeDir(node).resolve("cdi");
  }

  TestKubelet kubelet(String node) {
    return kubelets.get(node);
  }

  /** The names of the stack's service processes. */
  synchronized List<String> processNames() {
    return List.copyOf(processes.keySet());
  }

  /**
   * Whether the harness starts {@code name} again when it exits by itself (a leader-electing
   * replica, as its ReplicaSet would); others are left to the test.
   */
  boolean restartsByItself(String name) {
    return replicas.contains(name);
  }

  synchronized ServiceProcess process(String name) {
    return processes.get(name);
  }

  private synchronized void put(ServiceProcess p) {
    processes.put(p.name, p);
  }

  private synchronized List<ServiceProcess> processList() {
    return new ArrayList<>(processes.values());
  }

  /**
   * A replica of a Deployment with leader election: a replica that loses its Lease exits (it may no
   * longer write), and its ReplicaSet starts it again. So does the harness: when a replica exits by
   * itself, it is started again on the same configuration, up to {@value #MAX_RESTARTS} times
   * ({@link #restarts}). Crashes and stops the harness makes ({@link #crash}, {@link #stop}) are
   * left to the test.
   */
  private synchronized void putReplica(ServiceProcess p) {
    replicas.add(p.name);
    put(p);
    p.onExitByItself(() -> restartExited(p));
  }

  private synchronized void restartExited(ServiceProcess exited) {
    if (closing || processes.get(exited.name) != exited) {
      return;
    }
    java.util.Deque<Long> recent =
        recentRestarts.computeIfAbsent(exited.name, k -> new java.util.ArrayDeque<>());
    long now = System.nanoTime();
    while (!recent.isEmpty() && now - recent.peekFirst() > CRASH_LOOP_WINDOW.toNanos()) {
      recent.removeFirst();
    }
    if (recent.size() >= MAX_RESTARTS) {
      System.out.printf(
          "[stack] %s exited with %d again; left down after %d restarts within" + " %s%n",
          exited.name, exited.exitValue(), MAX_RESTARTS, CRASH_LOOP_WINDOW);
      return;
    }
    recent.addLast(now);
    int n = restarts.merge(exited.name, 1, Integer::sum);
    System.out.printf(
        "[stack] %s exited by itself with %d; started again, as its ReplicaSet"
            + " would (restart %d)%n",
        exited.name, exited.exitValue(), n);
    try {
      putReplica(exited.startAgain());
    } catch (RuntimeException e) {
      System.out.println("[stack] starting " + exited.name + " again: " + e);
    }
  }

  /** How often the replica {@code name} exited by itself and was started again. */
  int restarts(String name) {
    return restarts.getOrDefault(name, 0);
  }

  /**
   * A crash: the service is killed (SIGKILL, no shutdown) and then started again on the same
   * configuration and node directories, as a restarted pod; a driver registers again with its
   * node's kubelet. Returns once the new process is ready.
   */
  ServiceProcess crashAndRestart(String name) {
    crash(name);
    return restart(name);
  }

  /** Stops the service as Kubernetes does (SIGTERM, SIGKILL after a grace period). */
  void stop(String name) {
    process(name).close();
  }

  /** Kills the service (SIGKILL, no shutdown); {@link #restart} starts it again. */
  void crash(String name) {
    process(name).killForcibly();
  }

  /**
   * Starts a crashed service again on the same configuration and node directories; a driver
   * registers again with its node's kubelet. Returns once the new process is ready.
   */
  ServiceProcess restart(String name) {
    ServiceProcess fresh = restartWithoutWaiting(name);
    fresh.awaitReady(READY_TIMEOUT);
    return fresh;
  }

  /**
   * As {@link #restart}, returning once the process runs (and a driver registered with its
   * kubelet), not once it is ready: readiness may need another service that is down too.
   */
  ServiceProcess restartWithoutWaiting(String name) {
    ServiceProcess fresh = process(name).startAgain();
    if (replicas.contains(name)) {
      putReplica(fresh);
    } else {
      synchronized (this) {
        processes.put(name, fresh);
      }
    }
    // a real node's kubelet registers the driver itself (its readiness says when)
    for (SimulatedNode node : real ? List.<SimulatedNode>of() : nodes) {
      if (name.equals("device-driver-" + node.name())) {
        kubelets.get(node.name()).register(READY_TIMEOUT);
      }
    }
    return fresh;
  }

  /** Creates a cluster-scoped object labelled for removal when the stack closes. */
  <T extends HasMetadata> T createClusterScoped(T object) {
    if (object.getMetadata().getLabels() == null) {
      object.getMetadata().setLabels(new LinkedHashMap<>());
    }
    object.getMetadata().getLabels().put(TEST_LABEL, namespace);
    return client.resource(object).create();
  }

  /** Writes the services' logs and the relevant objects under {@code target/it-dumps/}. */
  Path dump(String test) {
    Path dir =
        Path.of("target", "it-dumps", name, test.replaceAll("[^A-Za-z0-9_.-]", "_"))
            .toAbsolutePath();
    try {
      Files.createDirectories(dir);
      for (ServiceProcess p : processList()) {
        write(dir.resolve(p.name + ".readiness.txt"), p.alive() ? p.readiness() : "exited");
        if (Files.exists(p.log)) {
          Files.copy(p.log, dir.resolve(p.name + ".log"), StandardCopyOption.REPLACE_EXISTING);
        }
      }
      UpstreamControllers u = upstream;
      if (u != null) {
        for (Map.Entry<String, Path> log : u.logs().entrySet()) {
          write(
              dir.resolve(log.getKey() + ".readiness.txt"),
              u.alive(log.getKey()) ? "running" : "exited");
          if (Files.exists(log.getValue())) {
            Files.copy(
                log.getValue(),
                dir.resolve(log.getKey() + ".log"),
                StandardCopyOption.REPLACE_EXISTING);
          }
        }
      }
      dumpList(dir, "pods", () -> client.pods().inNamespace(namespace).list().getItems());
      dumpList(
          dir,
          "deployments",
          () -> client.apps().deployments().inNamespace(namespace).list().getItems());
      dumpList(
          dir,
          "replicasets",
          () -> client.apps().replicaSets().inNamespace(namespace).list().getItems());
      dumpList(
          dir,
          "resourceclaims",
          () -> client.resources(ResourceClaim.class).inNamespace(namespace).list().getItems());
      dumpList(
          dir,
          "resourceclaimtemplates",
          () ->
              client
                  .resources(ResourceClaimTemplate.class)
                  .inNamespace(namespace)
                  .list()
                  .getItems());
      dumpList(
          dir, "resourceslices", () -> client.resources(ResourceSlice.class).list().getItems());
      dumpList(dir, "deviceclasses", () -> client.resources(DeviceClass.class).list().getItems());
      dumpList(dir, "nodes", () -> client.nodes().list().getItems());
      dumpList(dir, "events", () -> client.v1().events().inAnyNamespace().list().getItems());
      dumpList(
          dir,
          "events.k8s.io",
          () -> client.events().v1().events().inAnyNamespace().list().getItems());
      StringBuilder k = new StringBuilder();
      kubelets
          .values()
          .forEach(kl -> k.append(kl.node).append(": ").append(kl.prepared()).append('\n'));
      write(dir.resolve("kubelets.txt"), k.toString());
      realNodes.forEach((n, node) -> node.dumpTo(dir.resolve("node-" + n)));
      for (SimulatedNode node : nodes) {
        if (Files.isDirectory(cdiDir(node.name()))) {
          try (Stream<Path> files = Files.list(cdiDir(node.name()))) {
            for (Path f : files.toList()) {
              Files.copy(
                  f,
                  dir.resolve("cdi-" + node.name() + "-" + f.getFileName()),
                  StandardCopyOption.REPLACE_EXISTING);
            }
          }
        }
      }
    } catch (IOException | RuntimeException e) {
      write(dir.resolve("dump-error.txt"), e.toString());
    }
    System.out.println("[stack] " + test + " failed; logs and objects in " + dir);
    return dir;
  }

  private static void dumpList(Path dir, String what, Supplier<List<?>> list) {
    try {
      write(dir.resolve(what + ".yaml"), Serialization.asYaml(list.get()));
    } catch (RuntimeException e) {
      write(dir.resolve(what + ".yaml"), "# " + e);
    }
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
    realNodeList().parallelStream().forEach(RealNode::close);
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
                        client
                            .resource(c)
                            .edit(
                                x -> {
                                  x.getMetadata().setFinalizers(List.of());
                                  return x;
                                });
                      }
                      client.resource(c).withGracePeriod(0).delete();
                    }));
    quietly(() -> client.resources(ResourceSlice.class).delete());
    quietly(() -> client.resources(DeviceClass.class).withLabel(TEST_LABEL, namespace).delete());
    for (SimulatedNode node : nodes) {
      quietly(() -> client.nodes().withName(node.name()).delete());
      quietly(
          () ->
              client
                  .leases()
                  .inNamespace(TestKubelet.NODE_LEASE_NAMESPACE)
                  .withName(node.name())
                  .delete());
      quietly(
          () ->
              client
                  .pods()
                  .inNamespace(KdraChart.NAMESPACE)
                  .withName(KdraChart.RELEASE + "-" + KdraChart.DRIVER + "-" + node.name())
                  .withGracePeriod(0)
                  .delete());
    }
  }

  /**
   * Stops the kubelets and every service process, without touching the API server (which may be
   * gone already, e.g. when the JVM is shutting down). Idempotent.
   */
  /**
   * Deletes this stack's pods and waits until they and their claims are gone, so that each test
   * starts with every device free (the controller deletes generated claims with their pods).
   */
  void deletePodsAndAwaitClaimsGone() {
    client.pods().inNamespace(namespace).delete();
    org.awaitility.Awaitility.await()
        .atMost(Duration.ofSeconds(60))
        .untilAsserted(
            () -> {
              org.assertj.core.api.Assertions.assertThat(
                      client.pods().inNamespace(namespace).list().getItems())
                  .isEmpty();
              org.assertj.core.api.Assertions.assertThat(
                      client
                          .resources(ResourceClaim.class)
                          .inNamespace(namespace)
                          .list()
                          .getItems())
                  .isEmpty();
            });
  }

  /**
   * Stops the real nodes, every process, mount and cgroup of theirs, without touching the API
   * server (as {@link #stopProcesses}: their Node objects stay). Idempotent.
   */
  void stopRealNodes() {
    realNodeList().parallelStream().forEach(RealNode::stopProcesses);
  }

  private List<RealNode> realNodeList() {
    synchronized (realNodes) {
      return new ArrayList<>(realNodes.values());
    }
  }

  /** The real nodes' names (none on a stack of test kubelets). */
  List<String> realNodeNames() {
    synchronized (realNodes) {
      return List.copyOf(realNodes.keySet());
    }
  }

  void stopProcesses() {
    closing = true;
    kubelets.values().forEach(TestKubelet::close);
    processList().parallelStream().forEach(ServiceProcess::close);
  }

  private static void quietly(Runnable r) {
    try {
      r.run();
    } catch (RuntimeException e) {
      System.out.println("[stack] cleanup: " + e);
    }
  }

  /**
   * What every service gets besides its identity: no OpenTelemetry SDK (no collector here, unless a
   * test adds one). (Dev services never run in the prod profile the services run in.)
   */
  private static Map<String, String> serviceProperties() {
    Map<String, String> p = new LinkedHashMap<>();
    p.put("quarkus.otel.sdk.disabled", "true");
    return p;
  }

  /**
   * The environment that makes a service's kubernetes-client authenticate as the chart's
   * ServiceAccount of {@code component}: a kubeconfig of its own, with the API server, its CA and
   * the token, found through {@code KUBECONFIG} (the Quarkus client starts from fabric8's
   * auto-configuration, which reads it). Neither the admin certificate nor anything else.
   */
  private Map<String, String> identity(String component, String process, String token) {
    Path file = kubeconfigDir.resolve(process + ".yaml");
    OwnerOnly.write(
        file, KdraChart.kubeconfig(admin, caFile, KdraChart.serviceAccount(component), token));
    return Map.of("KUBECONFIG", file.toString());
  }

  /** The kubeconfig (with its token) that the service {@code process} runs with. */
  Path kubeconfig(String process) {
    return kubeconfigDir.resolve(process + ".yaml");
  }

  /**
   * A client with the kubeconfig (so the token) the service {@code process} runs with ({@code
   * slice-publisher}, {@code device-driver-<node>}, ...).
   */
  KubernetesClient clientOf(String process) {
    return new io.fabric8.kubernetes.client.KubernetesClientBuilder()
        .withConfig(Config.fromKubeconfig(read(kubeconfigDir.resolve(process + ".yaml"))))
        .build();
  }

  /** A client for this API server that authenticates with {@code token}. */
  KubernetesClient clientWithToken(String token) {
    return new io.fabric8.kubernetes.client.KubernetesClientBuilder()
        .withConfig(Config.fromKubeconfig(KdraChart.kubeconfig(admin, caFile, "token", token)))
        .build();
  }

  private static String read(Path file) {
    try {
      return Files.readString(file);
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }

  /** The API server's CA of the admin kubeconfig, as a file (written when it has data only). */
  static Path caFile(Config admin) {
    return Path.of(
        file(
            admin.getCaCertFile(), admin.getCaCertData(), Path.of("target", "it-certs", "ca.crt")));
  }

  private static String file(String file, String base64Data, Path target) {
    if (file != null && !file.isBlank()) {
      return Path.of(file).toAbsolutePath().toString();
    }
    if (base64Data == null) {
      throw new IllegalStateException("the kubeconfig has neither a file nor data for " + target);
    }
    write(
        target.toAbsolutePath(),
        new String(Base64.getDecoder().decode(base64Data), StandardCharsets.UTF_8));
    return target.toAbsolutePath().toString();
  }

  static void write(Path file, String content) {
    try {
      Files.createDirectories(file.getParent());
      Files.writeString(file, content);
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }

  static void deleteRecursively(Path dir) {
    if (!Files.exists(dir)) {
      return;
    }
    try (Stream<Path> walk = Files.walk(dir)) {
      walk.sorted(Comparator.reverseOrder()).forEach(p -> p.toFile().delete());
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }
}
