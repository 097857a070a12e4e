package io.kdra.it.services;

import com.fasterxml.jackson.databind.ObjectMapper;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.kdra.it.chart.KdraChart;
import io.kdra.it.nodes.NodeCgroups;
import io.kdra.it.nodes.NodeRegistration;
import io.kdra.it.nodes.RealNode;
import io.kdra.it.nodes.RealNodeBinaries;
import io.kdra.it.nodes.SimulatedNode;
import io.kdra.it.nodes.TestKubelet;
import io.kdra.it.support.PrivateTmpfs;
import io.kdra.it.support.TestFiles;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.stream.Stream;

/**
 * A stack's nodes: simulated ones (a Node object registered as a kubelet does, and a {@link
 * TestKubelet} that registers each driver and prepares its claims) or {@link RealNode}s (the real
 * kubelet and containerd), with the directories each node's driver uses and what a dump keeps of
 * them.
 */
public final class StackNodes {

  private final KubernetesClient client;

  /** The admin kubeconfig, for the real nodes' kubelets. */
  private final String kubeconfig;

  /** The stack's name, for messages. */
  private final String stackName;

  /** The stack's namespace, the value of the test label on the Node objects. */
  private final String namespace;

  /** The stack's nodes and those launched while it runs ({@link #launched}). */
  private final List<SimulatedNode> nodes = new CopyOnWriteArrayList<>();

  /** Whether the nodes are {@link RealNode}s (a real kubelet and containerd each). */
  private final boolean real;

  /** The real nodes' kubelets' {@code featureGates}; empty: the version's defaults. */
  private final Map<String, Boolean> kubeletFeatureGates;

  /** The harness's own files per node; short: unix socket paths must stay under 108 bytes. */
  private final Path nodesDir = Path.of("target", "n").toAbsolutePath();

  private final Map<String, TestKubelet> kubelets = new ConcurrentHashMap<>();
  private final Map<String, RealNode> realNodes = new LinkedHashMap<>();

  /** The directory names of launched nodes, by node name; others' are their names. */
  private final Map<String, String> dirNames = new ConcurrentHashMap<>();

  private final AtomicInteger launchedCount = new AtomicInteger();

  StackNodes(
      KubernetesClient client,
      String kubeconfig,
      String stackName,
      String namespace,
      List<SimulatedNode> nodes,
      boolean real,
      Map<String, Boolean> kubeletFeatureGates) {
    this.client = client;
    this.kubeletFeatureGates = Map.copyOf(kubeletFeatureGates);
    this.kubeconfig = kubeconfig;
    this.stackName = stackName;
    this.namespace = namespace;
    this.nodes.addAll(nodes);
    this.real = real;
  }

  /** The nodes with their simulated inventories. */
  List<SimulatedNode> all() {
    return List.copyOf(nodes);
  }

  /** Whether the nodes are real ones. */
  boolean real() {
    return real;
  }

  /** Removes the files an earlier stack left in the nodes' directories. */
  void clear() {
    TestFiles.deleteRecursively(nodesDir);
  }

  /** Starts the real nodes, or registers the simulated ones' Node objects. */
  void start() {
    if (real) {
      startRealNodes();
    } else {
      for (SimulatedNode node : nodes) {
        createNode(node.name());
      }
    }
  }

  /** Starts a {@link TestKubelet} per simulated node; it registers the node's driver. */
  void startKubelets(Duration timeout) {
    for (SimulatedNode node : real ? List.<SimulatedNode>of() : nodes) {
      startKubelet(node, timeout);
    }
  }

  private void startKubelet(SimulatedNode node, Duration timeout) {
    TestKubelet kubelet =
        kubelets.computeIfAbsent(
            node.name(), n -> new TestKubelet(client, n, Stack.DRIVER, registryDir(node.name())));
    kubelet.register(timeout);
    kubelet.start();
  }

  /**
   * A simulated node whose Node object someone else created (a cloud provider, for Karpenter):
   * marked Ready as its kubelet would ({@link NodeRegistration#markReady}) and counted among the
   * stack's nodes; its driver must be started before {@link #startLaunchedKubelet}.
   */
  void launched(SimulatedNode node) {
    if (real) {
      throw new IllegalStateException("launched nodes are simulated ones");
    }
    NodeRegistration.markReady(client, node.name());
    // a cloud's node names are long (Karpenter's KWOK provider: about 60 characters), too long
    // for the sockets' paths: a short directory name instead
    dirNames.put(node.name(), "l" + launchedCount.incrementAndGet());
    nodes.add(node);
    // its kubelet renews the node's Lease from now on; it registers the driver once that runs
    TestKubelet kubelet =
        new TestKubelet(client, node.name(), Stack.DRIVER, registryDir(node.name()));
    kubelets.put(node.name(), kubelet);
    kubelet.startHeartbeat();
  }

  /** The launched node's kubelet, once its driver runs: it registers the driver, watches pods. */
  void startLaunchedKubelet(SimulatedNode node, Duration timeout) {
    startKubelet(node, timeout);
  }

  /** A launched node is gone: its kubelet stops, and it is no longer one of the stack's nodes. */
  void gone(String node) {
    TestKubelet kubelet = kubelets.remove(node);
    if (kubelet != null) {
      kubelet.close();
    }
    nodes.removeIf(n -> n.name().equals(node));
    // what its kubelet and the harness made for it (a real kubelet's Lease is owned by its Node)
    Stack.quietly(
        () ->
            client.leases().inNamespace(TestKubelet.NODE_LEASE_NAMESPACE).withName(node).delete());
    Stack.quietly(
        () ->
            client
                .pods()
                .inNamespace(KdraChart.NAMESPACE)
                .withName(KdraChart.RELEASE + "-" + KdraChart.DRIVER + "-" + node)
                .withGracePeriod(0)
                .delete());
  }

  /**
   * After the service {@code process} started again: a simulated node's kubelet registers its
   * driver again (a real node's kubelet does that itself; its readiness says when).
   */
  void restarted(String process, Duration timeout) {
    for (SimulatedNode node : real ? List.<SimulatedNode>of() : nodes) {
      if (process.equals("device-driver-" + node.name())) {
        kubelets.get(node.name()).register(timeout);
      }
    }
  }

  /**
   * The simulated node's kubelet restarted, as a real kubelet's restart looks to the driver: the
   * old one stops (its sockets, informer and health stream close), a new one registers the driver
   * again through the plugin watcher's handshake and prepares the claims of the pods bound to the
   * node again. Unlike a real kubelet, the new one has no checkpoint of the old one's claim cache:
   * a pod that went while it was down is the driver's own clean-up's. Returns the new kubelet.
   */
  public TestKubelet restartKubelet(String node, Duration timeout) {
    if (real) {
      throw new IllegalStateException("a real node's kubelet restarts by itself");
    }
    TestKubelet old = kubelets.get(node);
    if (old != null) {
      old.close();
    }
    TestKubelet kubelet = new TestKubelet(client, node, Stack.DRIVER, registryDir(node));
    kubelets.put(node, kubelet);
    kubelet.register(timeout);
    kubelet.start();
    return kubelet;
  }

  /** Deletes the Node object and registers it again, as a kubelet does after a node is lost. */
  public void recreateNode(String node) {
    createNode(node);
  }

  /** A Node as a kubelet would register it: Ready, with allocatable cpu, memory and pods. */
  private void createNode(String node) {
    client.nodes().withName(node).withGracePeriod(0).delete();
    NodeRegistration.register(client, node, Map.of(NodeRegistration.TEST_LABEL, namespace));
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
    List<RuntimeException> failures = Collections.synchronizedList(new ArrayList<>());
    for (SimulatedNode node : nodes) {
      Thread t =
          new Thread(
              () -> {
                try {
                  RealNode n =
                      RealNode.start(
                          node.name(),
                          base.resolve(node.name()),
                          binaries,
                          client,
                          kubeconfig,
                          kubeletFeatureGates);
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

  /** The real node {@code node} (a stack on real nodes only). */
  public RealNode realNode(String node) {
    RealNode n;
    synchronized (realNodes) {
      n = realNodes.get(node);
    }
    if (n == null) {
      throw new IllegalStateException(node + " is not a real node of " + stackName);
    }
    return n;
  }

  /** The simulated node's kubelet (null on real nodes). */
  public TestKubelet kubelet(String node) {
    return kubelets.get(node);
  }

  /** The directory of the harness's own files for the node's driver (inventory, token). */
  public Path nodeDir(String node) {
    return nodesDir.resolve(dirNames.getOrDefault(node, node));
  }

  /**
   * The node driver's {@code kdra.device-driver.sharing.mps-root} (its MPS pipe, log and shm
   * directories): one per node, so that nodes on one machine never share MPS daemons, and nothing
   * outside target/.
   */
  public Path mpsRoot(String node) {
    return nodeDir(node).resolve("mps");
  }

  /**
   * The node driver's {@code kdra.device-driver.test-only.simulated-gpu-state-file}: what its
   * simulated GPUs hold (MIG instances, compute modes, time slices, MPS daemons).
   */
  public Path simulatedGpuStateFile(String node) {
    return nodeDir(node).resolve("simulated-gpus.json");
  }

  /** The file the node's driver reads its slice-publisher token from, on every connect. */
  public Path publisherTokenFile(String node) {
    return nodeDir(node).resolve("publisher-token");
  }

  /** The kubelet's plugin registry: the driver's registration socket. */
  Path registryDir(String node) {
    return real ? realNode(node).registryDir() : nodeDir(node).resolve("reg");
  }

  /** The kubelet's plugins directory: the driver's DRA socket (and, here, its checkpoint). */
  Path pluginsDir(String node) {
    return real ? realNode(node).pluginsDir() : nodeDir(node).resolve("plugins");
  }

  /**
   * The node's driver checkpoint, as this JVM reaches it; a driver in a private mount keeps it on
   * that mount ({@link #driverCheckpointFile}).
   */
  public Path checkpointFile(String node) {
    PrivateTmpfs mount = driverMount(node);
    return mount != null
        ? mount.fromOutside(mountedCheckpointFile(mount))
        : driverCheckpointFile(node);
  }

  /** The node's driver checkpoint, as its driver names it. */
  Path driverCheckpointFile(String node) {
    PrivateTmpfs mount = driverMount(node);
    return mount != null
        ? mountedCheckpointFile(mount)
        : pluginsDir(node).resolve(real ? Stack.DRIVER + "/checkpoint.json" : "checkpoint.json");
  }

  private static Path mountedCheckpointFile(PrivateTmpfs mount) {
    return mount.dir().resolve("plugin/checkpoint.json");
  }

  /** The private mount the node's driver runs in, if any ({@link SimulatedNode#driverMount}). */
  private PrivateTmpfs driverMount(String node) {
    return nodes.stream()
        .filter(n -> n.name().equals(node))
        .map(SimulatedNode::driverMount)
        .filter(java.util.Objects::nonNull)
        .findFirst()
        .orElse(null);
  }

  /** UIDs of the claims in the node's driver checkpoint (prepared, not yet unprepared). */
  public Set<String> checkpointClaims(String node) {
    Path file = checkpointFile(node);
    Set<String> uids = new TreeSet<>();
    if (Files.exists(file)) {
      try {
        new ObjectMapper()
            .readTree(file.toFile())
            .path("preparedClaims")
            .fieldNames()
            .forEachRemaining(uids::add);
      } catch (IOException e) {
        throw new UncheckedIOException(e);
      }
    }
    return uids;
  }

  /**
   * Where the node's driver writes CDI specs (on a real node: containerd's cdi_spec_dirs), as this
   * JVM reaches it; a driver in a private mount writes them on that mount ({@link #driverCdiDir}).
   */
  public Path cdiDir(String node) {
    PrivateTmpfs mount = driverMount(node);
    return mount != null ? mount.fromOutside(driverCdiDir(node)) : driverCdiDir(node);
  }

  /** Where the node's driver writes CDI specs, as its driver names it. */
  Path driverCdiDir(String node) {
    PrivateTmpfs mount = driverMount(node);
    if (mount != null) {
      return mount.dir().resolve("cdi");
    }
    return real ? realNode(node).cdiDir() : nodeDir(node).resolve("cdi");
  }

  /** The real nodes' names (none on a stack of test kubelets). */
  List<String> realNodeNames() {
    synchronized (realNodes) {
      return List.copyOf(realNodes.keySet());
    }
  }

  private List<RealNode> realNodeList() {
    synchronized (realNodes) {
      return new ArrayList<>(realNodes.values());
    }
  }

  /** Stops the test kubelets. */
  void stopKubelets() {
    kubelets.values().forEach(TestKubelet::close);
  }

  /**
   * Stops the real nodes, every process, mount and cgroup of theirs, without touching the API
   * server (their Node objects stay). Idempotent.
   */
  public void stopRealNodes() {
    realNodeList().parallelStream().forEach(RealNode::stopProcesses);
  }

  /** Every process, mount and cgroup of the real nodes, and their Node objects. */
  void closeRealNodes() {
    realNodeList().parallelStream().forEach(RealNode::close);
  }

  /** Removes the nodes' objects: Node, node Lease, and the driver pod a real node's kubelet ran. */
  void deleteObjects() {
    for (SimulatedNode node : nodes) {
      Stack.quietly(() -> client.nodes().withName(node.name()).delete());
      Stack.quietly(
          () ->
              client
                  .leases()
                  .inNamespace(TestKubelet.NODE_LEASE_NAMESPACE)
                  .withName(node.name())
                  .delete());
      Stack.quietly(
          () ->
              client
                  .pods()
                  .inNamespace(KdraChart.NAMESPACE)
                  .withName(KdraChart.RELEASE + "-" + KdraChart.DRIVER + "-" + node.name())
                  .withGracePeriod(0)
                  .delete());
    }
  }

  /** Writes what the kubelets prepared, the real nodes' own dumps and the CDI specs into dir. */
  void dumpTo(Path dir) throws IOException {
    StringBuilder k = new StringBuilder();
    kubelets
        .values()
        .forEach(kl -> k.append(kl.node).append(": ").append(kl.prepared()).append('\n'));
    TestFiles.write(dir.resolve("kubelets.txt"), k.toString());
    synchronized (realNodes) {
      realNodes.forEach((n, node) -> node.dumpTo(dir.resolve("node-" + n)));
    }
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
  }
}
