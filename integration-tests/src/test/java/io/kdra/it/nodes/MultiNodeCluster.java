package io.kdra.it.nodes;

import io.fabric8.kubernetes.client.KubernetesClient;
import io.kdra.it.controlplane.ClusterAddresses;
import io.kdra.it.controlplane.ClusterApiServer;
import io.kdra.it.controlplane.ControlPlane;
import io.kdra.it.controlplane.ControlPlaneProcesses;
import io.kdra.it.controlplane.UpstreamControllers;
import io.kdra.it.support.OwnerOnly;
import io.kdra.it.support.ServiceProcess;
import io.kdra.it.support.TestFiles;
import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;

/**
 * A Kubernetes cluster of real parts, shaped like a user's: its own etcd and kube-apiserver (Node
 * authorizer, NodeRestriction, Pod Security), kube-controller-manager and kube-scheduler, and
 * several real nodes ({@link RealNode}: kubelet and containerd), each in a network namespace of its
 * own with its own identity, joined by a bridge the test makes ({@link ClusterNetwork}). Pods get
 * addresses from the standard CNI plugins, a /24 per node, routed between the nodes; kube-proxy
 * (iptables mode, inside each node's namespace) routes ClusterIP Services, the {@code kubernetes}
 * Service to the API server among them.
 *
 * <p>Nothing system-wide changes: the bridge and its routes, the veths and network namespaces are
 * the test's own, every iptables rule lives in a node's namespace, and each node's processes in its
 * cgroup. Stopping the cluster removes them; after a killed JVM the next run does ({@link
 * NodeCgroups#reapLeftovers}, {@link ControlPlaneProcesses#reapLeftovers}, and the bridge of a slot
 * no run holds).
 */
public final class MultiNodeCluster implements AutoCloseable {

  private static final Duration KUBE_PROXY_TIMEOUT = Duration.ofSeconds(120);
  private static final Duration ADDON_TIMEOUT = Duration.ofSeconds(180);
  private static final HttpClient HTTP =
      HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(2)).build();

  public final ClusterNetwork network;
  public final ClusterApiServer api;
  public final KubernetesClient client;
  public final List<RealNode> nodes = new ArrayList<>();
  private final ClusterNetworkBinaries networkBinaries;
  private UpstreamControllers controllers;

  private MultiNodeCluster(
      ClusterNetwork network, ClusterApiServer api, ClusterNetworkBinaries networkBinaries) {
    this.network = network;
    this.api = api;
    this.client = api.client();
    this.networkBinaries = networkBinaries;
  }

  /** Whether this machine can run one: root, {@code ip} and {@code nsenter}. */
  public static boolean available() {
    return ClusterNetwork.available();
  }

  /**
   * Ends and removes what runs killed with SIGKILL left of their clusters (API server, etcd and the
   * controllers, the nodes with everything in their cgroups, the bridges); what {@link #start} does
   * first. Runs still going keep theirs.
   */
  public static void reapLeftovers() {
    ControlPlaneProcesses.reapLeftovers();
    NodeCgroups.reapLeftovers();
    ClusterNetwork.reapLeftovers();
  }

  /** The name of node {@code i}: {@code node-a}, {@code node-b}, ... */
  public static String nodeName(int i) {
    return "node-" + (char) ('a' + i);
  }

  /**
   * Starts a cluster of {@code count} nodes and returns once every node is Ready and kube-proxy
   * serves on each.
   *
   * @param workDir the nodes' directories (short: their unix sockets must fit 107 bytes)
   */
  public static MultiNodeCluster start(int count, Path workDir) {
    if (count < 1 || count > ClusterAddresses.MAX_NODES) {
      throw new IllegalArgumentException("1 to " + ClusterAddresses.MAX_NODES + " nodes");
    }
    RealNodeBinaries nodeBinaries = RealNodeBinaries.fromCache();
    ClusterNetworkBinaries networkBinaries = ClusterNetworkBinaries.fromCache();
    // where build-control-plane.sh put kube-apiserver, etcd and the controllers of this version
    Path controlPlane = ControlPlane.kubectl().getParent();
    reapLeftovers();
    long started = System.nanoTime();
    Path logs = workDir.resolve("control-plane");
    TestFiles.deleteRecursively(logs);
    List<String> names = new ArrayList<>();
    for (int i = 0; i < count; i++) {
      names.add(nodeName(i));
    }
    ClusterNetwork network = ClusterNetwork.create();
    ClusterApiServer api;
    try {
      api = ClusterApiServer.start(controlPlane, network.addresses.gateway(), names, logs);
    } catch (RuntimeException e) {
      network.close();
      throw e;
    }
    MultiNodeCluster cluster = new MultiNodeCluster(network, api, networkBinaries);
    try {
      cluster.controllers =
          UpstreamControllers.start(controlPlane, api.dir, api.admin, api.caFile(), logs, Map.of());
      cluster.startNodes(names, workDir, nodeBinaries);
    } catch (RuntimeException | Error e) {
      cluster.close();
      throw e;
    }
    System.out.printf(
        "[multi-node] %d nodes Ready with kube-proxy in %d ms on %s%n",
        count, (System.nanoTime() - started) / 1_000_000, network);
    return cluster;
  }

  /** The nodes in parallel: each takes most of its start waiting for its own processes. */
  private void startNodes(List<String> names, Path workDir, RealNodeBinaries nodeBinaries) {
    ClusterAddresses a = network.addresses;
    ExecutorService pool = Executors.newFixedThreadPool(names.size());
    try {
      List<Future<RealNode>> starts = new ArrayList<>();
      for (int i = 0; i < names.size(); i++) {
        int index = i;
        String name = names.get(i);
        starts.add(
            pool.submit(
                () -> {
                  RealNode node =
                      RealNode.start(
                          name,
                          workDir.resolve(name).toAbsolutePath(),
                          nodeBinaries,
                          client,
                          api.kubeconfig(ClusterApiServer.nodeUser(name)),
                          new RealNode.OwnNetwork(
                              a.nodeIp(index),
                              a.podCidr(index),
                              networkBinaries.cniPlugins(),
                              ClusterAddresses.DNS_SERVICE_IP,
                              api.caFile(),
                              holder -> network.join(holder, index, names.size())));
                  synchronized (nodes) {
                    nodes.add(node);
                  }
                  startKubeProxy(node, a.nodeIp(index));
                  return node;
                }));
      }
      List<RuntimeException> failures = new ArrayList<>();
      for (Future<RealNode> f : starts) {
        try {
          f.get();
        } catch (java.util.concurrent.ExecutionException e) {
          failures.add(
              e.getCause() instanceof RuntimeException r
                  ? r
                  : new IllegalStateException(e.getCause()));
        } catch (InterruptedException e) {
          Thread.currentThread().interrupt();
          throw new IllegalStateException("interrupted while nodes start", e);
        }
      }
      if (!failures.isEmpty()) {
        RuntimeException first = failures.get(0);
        failures.stream().skip(1).forEach(first::addSuppressed);
        throw first;
      }
      nodes.sort(java.util.Comparator.comparing(n -> n.name));
    } finally {
      pool.shutdownNow();
    }
  }

  /** kube-proxy in the node's namespaces, as {@code system:kube-proxy}; waits for its healthz. */
  private void startKubeProxy(RealNode node, String nodeIp) {
    Path conf = node.dir.resolve("conf");
    Path kubeconfig = conf.resolve("kube-proxy.kubeconfig");
    OwnerOnly.write(kubeconfig, api.kubeconfig(ClusterApiServer.KUBE_PROXY));
    Path config = conf.resolve("kube-proxy.yaml");
    TestFiles.write(
        config,
        "apiVersion: kubeproxy.config.k8s.io/v1alpha1\n"
            + "kind: KubeProxyConfiguration\n"
            + "clientConnection: {kubeconfig: "
            + kubeconfig
            + "}\n"
            + "hostnameOverride: "
            + node.name
            + "\n"
            + "mode: iptables\n"
            + "clusterCIDR: "
            + network.addresses.clusterCidr()
            + "\n"
            + "healthzBindAddress: "
            + nodeIp
            + ":10256\n"
            + "metricsBindAddress: 127.0.0.1:10249\n"
            + "# conntrack's table size is the machine's, not the namespace's: leave it alone\n"
            + "conntrack: {maxPerCore: 0, min: 0, tcpEstablishedTimeout: 0s,"
            + " tcpCloseWaitTimeout: 0s}\n");
    Process proxy =
        node.startInNode(
            "kube-proxy",
            List.of(networkBinaries.kubeProxy().toString(), "--config=" + config, "--v=2"));
    long deadline = System.nanoTime() + KUBE_PROXY_TIMEOUT.toNanos();
    URI healthz = URI.create("http://" + nodeIp + ":10256/healthz");
    while (System.nanoTime() < deadline) {
      if (!proxy.isAlive()) {
        throw new IllegalStateException(
            "kube-proxy of "
                + node.name
                + " exited with "
                + proxy.exitValue()
                + "; see "
                + node.logsDir().resolve("kube-proxy.log"));
      }
      try {
        HttpResponse<String> r =
            HTTP.send(
                HttpRequest.newBuilder(healthz).timeout(Duration.ofSeconds(3)).build(),
                HttpResponse.BodyHandlers.ofString());
        if (r.statusCode() == 200) {
          return;
        }
      } catch (IOException e) {
        // not listening yet
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
        throw new IllegalStateException(e);
      }
      ServiceProcess.sleep(250);
    }
    throw new IllegalStateException(
        "kube-proxy of " + node.name + " is not healthy after " + KUBE_PROXY_TIMEOUT);
  }

  /**
   * Cluster DNS: CoreDNS (two replicas, one image made by build-cluster-network.sh) behind the
   * {@code kube-dns} Service at {@link ClusterAddresses#DNS_SERVICE_IP}, the kubelets' {@code
   * clusterDNS}; returns once both replicas are Ready.
   */
  public MultiNodeCluster withDns() {
    apply("coredns", networkBinaries.coreDnsImage(), networkBinaries.image("coredns"));
    client
        .apps()
        .deployments()
        .inNamespace("kube-system")
        .withName("coredns")
        .waitUntilCondition(
            d ->
                d != null
                    && d.getStatus() != null
                    && Integer.valueOf(2).equals(d.getStatus().getReadyReplicas()),
            ADDON_TIMEOUT.toSeconds(),
            java.util.concurrent.TimeUnit.SECONDS);
    return this;
  }

  /**
   * NetworkPolicy: kube-network-policies as a hostNetwork DaemonSet, one pod in each node's network
   * namespace; returns once every node's is Ready.
   */
  public MultiNodeCluster withNetworkPolicies() {
    apply(
        "kube-network-policies",
        networkBinaries.networkPoliciesImage(),
        networkBinaries.image("kube-network-policies"));
    client
        .apps()
        .daemonSets()
        .inNamespace("kube-system")
        .withName("kube-network-policies")
        .waitUntilCondition(
            d ->
                d != null
                    && d.getStatus() != null
                    && d.getStatus().getNumberReady() != null
                    && d.getStatus().getNumberReady() == nodes.size(),
            ADDON_TIMEOUT.toSeconds(),
            java.util.concurrent.TimeUnit.SECONDS);
    if (KernelFeatures.policyQueue() == KernelFeatures.PolicyQueue.XT_NFQUEUE) {
      nodes.forEach(MultiNodeCluster::queueNewForwardedConnections);
    }
    return this;
  }

  /**
   * On a kernel without nftables' queue expression kube-network-policies' own rules are refused,
   * but its queue listener runs: this rule in the node's namespace hands it every new connection
   * that the node forwards (the pods' traffic), as its rules would have handed those of pods with a
   * policy; it decides each one (a pod without a policy is let through). {@code --queue-bypass}:
   * while nobody listens, packets pass, as with its rules.
   */
  private static void queueNewForwardedConnections(RealNode node) {
    Process p =
        node.startInNode(
            "nfqueue-rule",
            List.of(
                "iptables",
                "-I",
                "FORWARD",
                "-m",
                "conntrack",
                "--ctstate",
                "NEW",
                "-j",
                "NFQUEUE",
                "--queue-num",
                "100",
                "--queue-bypass"));
    try {
      if (!p.waitFor(30, java.util.concurrent.TimeUnit.SECONDS) || p.exitValue() != 0) {
        throw new IllegalStateException(
            "the NFQUEUE rule in "
                + node.name
                + " failed; see "
                + node.logsDir().resolve("nfqueue-rule.log"));
      }
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new IllegalStateException(e);
    }
  }

  /** Imports the add-on's image into every node, then applies its manifest. */
  private void apply(String addon, String image, Path archive) {
    String repository = image.substring(0, image.lastIndexOf(':'));
    nodes.forEach(n -> n.importImage(archive, repository));
    String manifest;
    try (java.io.InputStream in =
        MultiNodeCluster.class.getResourceAsStream("/multinode/" + addon + ".yaml")) {
      manifest =
          new String(in.readAllBytes(), java.nio.charset.StandardCharsets.UTF_8)
              .replace("${IMAGE}", image)
              .replace("${DNS_IP}", ClusterAddresses.DNS_SERVICE_IP);
    } catch (IOException e) {
      throw new java.io.UncheckedIOException(e);
    }
    client
        .load(
            new java.io.ByteArrayInputStream(
                manifest.getBytes(java.nio.charset.StandardCharsets.UTF_8)))
        .create();
  }

  public RealNode node(String name) {
    return nodes.stream()
        .filter(n -> n.name.equals(name))
        .findFirst()
        .orElseThrow(() -> new IllegalArgumentException("no node " + name));
  }

  /** Copies every node's and the control plane's logs into {@code target}. */
  public void dumpTo(Path target) {
    nodes.forEach(n -> n.dumpTo(target.resolve(n.name)));
  }

  /** Stops the nodes, the controllers, the API server and etcd, and deletes the bridge. */
  @Override
  public void close() {
    List<RuntimeException> failures = new ArrayList<>();
    for (RealNode n : nodes) {
      try {
        // the API server goes too: no Node to delete
        n.stopProcesses();
      } catch (RuntimeException e) {
        failures.add(e);
      }
    }
    if (controllers != null) {
      controllers.close();
    }
    client.close();
    api.close();
    network.close();
    if (!failures.isEmpty()) {
      throw failures.get(0);
    }
  }
}
