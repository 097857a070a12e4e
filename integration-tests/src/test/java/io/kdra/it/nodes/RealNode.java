package io.kdra.it.nodes;

import io.fabric8.kubernetes.api.model.Node;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.kdra.it.support.Commands;
import io.kdra.it.support.ServiceProcess;
import io.kdra.it.support.TestFiles;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.Inet4Address;
import java.net.InetAddress;
import java.net.NetworkInterface;
import java.net.SocketException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.TimeUnit;
import java.util.stream.Collectors;
import java.util.stream.Stream;

/**
 * One real Kubernetes node for the end-to-end tests: the real kubelet with its own containerd 2.x
 * (CDI on, runc), against the suite's API server, built by {@code
 * integration-tests/scripts/build-node.sh}. Nothing system-wide changes:
 *
 * <ul>
 *   <li>containerd and the kubelet run in a private mount namespace (held by a sleeping process)
 *       with plain files bind-mounted over the kernel tunables the kubelet would rewrite for the
 *       whole machine, tmpfs over the paths they hard-code ({@code /run/containerd}, {@code
 *       /run/netns}, {@code /var/lib/kubelet} for the device-plugin socket, {@code /var/lib/cni})
 *       and {@code /var/log} (the kubelet's container log links) bound to the node's directory; a
 *       node of a {@link MultiNodeCluster} shows its kubelet and CDI directories at the usual
 *       {@code /var/lib/kubelet} and {@code /var/run/cdi}, as a user's node does;
 *   <li>every process of the node, containers included, lives in the node's cgroup ({@link
 *       NodeCgroups}, also the kubelet's {@code cgroupRoot}), so that stopping it, or reaping what
 *       a killed test JVM left, ends exactly those;
 *   <li>ports come free from the kernel, sockets and state live in {@code target/rn/<node>}.
 * </ul>
 *
 * Pods get an {@code eth0} that leads nowhere (the {@code kdra-isolated} CNI plugin), or, on a
 * {@link PodNetwork}, an address the host reaches (the {@code kdra-bridge} plugin); images are
 * {@code k8s.local/busybox:1} and the pause image, imported from the cache (no registry can be
 * reached). The suite's API server cannot reach a loopback kubelet, so container logs are read from
 * the kubelet's {@code podLogsDir} ({@link #containerLog}); a node of a {@link MultiNodeCluster}
 * serves them to its API server too ({@code kubectl logs}, {@code kubectl exec}).
 */
public final class RealNode implements AutoCloseable {

  /** The busybox image every node has; pods must use {@code imagePullPolicy: Never}. */
  public static final String BUSYBOX = "k8s.local/busybox:1";

  static final String PAUSE = "k8s.local/pause:3.10";

  private static final Duration START_TIMEOUT = Duration.ofSeconds(180);
  private static final Duration STOP_GRACE = Duration.ofSeconds(15);

  private static final java.net.http.HttpClient HTTP =
      java.net.http.HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(2)).build();

  public final String name;
  final Path dir;
  private final RealNodeBinaries binaries;
  private final KubernetesClient client;
  private final NodeCgroups cgroups;
  private final RealNodeFiles files;
  private final Thread hook;
  private final OwnNetwork own;
  private Process holder;
  private Process containerd;
  private Process kubelet;

  private RealNode(
      String name,
      Path dir,
      RealNodeBinaries binaries,
      KubernetesClient client,
      String kubeconfig,
      PodNetwork network,
      OwnNetwork own,
      Map<String, Boolean> featureGates) {
    this.name = name;
    this.dir = dir;
    this.binaries = binaries;
    this.client = client;
    this.own = own;
    this.cgroups = NodeCgroups.forNode(name);
    this.files = new RealNodeFiles(dir, binaries, cgroups, kubeconfig, network, own, featureGates);
    this.hook = new Thread(this::killAll, "real-node-" + name);
  }

  /**
   * Starts node {@code name} (containerd, images, kubelet) and returns once its Node is Ready and
   * schedulable; the previous contents of its directory are deleted first.
   *
   * @param kubeconfig the admin kubeconfig of the suite's API server (the kubelet's identity)
   */
  public static RealNode start(
      String name,
      Path dir,
      RealNodeBinaries binaries,
      KubernetesClient client,
      String kubeconfig) {
    return start(name, dir, binaries, client, kubeconfig, (PodNetwork) null);
  }

  /**
   * As {@link #start(String, Path, RealNodeBinaries, KubernetesClient, String)}, the pods on {@code
   * network} (addresses the host reaches) instead of an {@code eth0} that leads nowhere.
   */
  public static RealNode start(
      String name,
      Path dir,
      RealNodeBinaries binaries,
      KubernetesClient client,
      String kubeconfig,
      PodNetwork network) {
    return start(new RealNode(name, dir, binaries, client, kubeconfig, network, null, Map.of()));
  }

  /**
   * As {@link #start(String, Path, RealNodeBinaries, KubernetesClient, String)}, the kubelet with
   * these {@code featureGates} in its configuration (a gate left out keeps the version's default).
   */
  public static RealNode start(
      String name,
      Path dir,
      RealNodeBinaries binaries,
      KubernetesClient client,
      String kubeconfig,
      Map<String, Boolean> featureGates) {
    return start(new RealNode(name, dir, binaries, client, kubeconfig, null, null, featureGates));
  }

  /**
   * A node of a {@link MultiNodeCluster}: in a network namespace of its own (with its mount
   * namespace and cgroup), pods on the standard CNI plugins in its pod range.
   *
   * @param kubeconfig the node's own identity ({@code system:node:<name>})
   */
  public static RealNode start(
      String name,
      Path dir,
      RealNodeBinaries binaries,
      KubernetesClient client,
      String kubeconfig,
      OwnNetwork own) {
    return start(new RealNode(name, dir, binaries, client, kubeconfig, null, own, Map.of()));
  }

  /**
   * A node's own network namespace, in a cluster whose API server calls the kubelet.
   *
   * @param nodeIp its address (the kubelet's {@code --node-ip}, where it serves)
   * @param podCidr its pods' range (host-local)
   * @param cniPlugins the directory of the standard CNI plugins
   * @param clusterDns the kubelet's {@code clusterDNS}
   * @param clusterCa the cluster's CA: the kubelet trusts the client certificates it signed (the
   *     API server's, for logs and exec), as a kubeadm node does
   * @param join joins the namespace, held by the process with the given pid, to the cluster's
   *     network; called once it exists, before containerd starts
   */
  record OwnNetwork(
      String nodeIp,
      String podCidr,
      Path cniPlugins,
      String clusterDns,
      Path clusterCa,
      java.util.function.LongConsumer join) {}

  private static RealNode start(RealNode node) {
    String name = node.name;
    Runtime.getRuntime().addShutdownHook(node.hook);
    try {
      node.startAll();
      return node;
    } catch (RuntimeException | Error e) {
      node.dumpTo(Path.of("target", "it-dumps", "real-node-start", name).toAbsolutePath());
      node.close();
      throw e;
    }
  }

  private void startAll() {
    long started = System.nanoTime();
    // the longest unix socket of the node; the kernel takes 107 bytes at most
    Path longest = pluginsDir().resolve("gpu.kdra.io/dra.sock");
    if (longest.toString().getBytes(StandardCharsets.UTF_8).length > 107) {
      throw new IllegalStateException(
          "the checkout's path is too long for the node's unix"
              + " sockets ("
              + longest
              + "): clone it into a shorter directory");
    }
    TestFiles.deleteRecursively(dir);
    // first: a node cgroup keeps other runs from removing the shared mount points meanwhile
    cgroups.create();
    files.write();
    startHolder();
    if (own != null) {
      own.join().accept(holder.pid());
    }
    startContainerd();
    importImages();
    startKubelet();
    awaitReady();
    System.out.printf(
        "[real-node] %s Ready in %d ms (kubelet %s, containerd %s); logs in %s%n",
        name,
        (System.nanoTime() - started) / 1_000_000,
        binaries.k8sVersion(),
        binaries.containerdVersion(),
        dir.resolve("logs"));
  }

  /** Whether this JVM runs as root, which real nodes need. */
  public static boolean runsAsRoot() {
    try {
      return "0".equals(String.valueOf(Files.getAttribute(Path.of("/proc/self"), "unix:uid")));
    } catch (IOException | UnsupportedOperationException | IllegalArgumentException e) {
      return false;
    }
  }

  /** The kubelet's plugin watcher's directory: the device-driver's registration socket. */
  public Path registryDir() {
    return files.registryDir();
  }

  /** Where kubelet plugins keep their sockets and state ({@code <root-dir>/plugins}). */
  public Path pluginsDir() {
    return files.pluginsDir();
  }

  /** containerd's {@code cdi_spec_dirs}: the device-driver writes its CDI specs here. */
  public Path cdiDir() {
    return files.cdiDir();
  }

  Path logsDir() {
    return files.logsDir();
  }

  private void startHolder() {
    holder = start("ns", List.of("sh", files.conf().resolve("holder.sh").toString()));
    await(
        "its mount namespace",
        Duration.ofSeconds(30),
        holder,
        () -> Files.exists(dir.resolve("run/ns.ready")));
    // for a person debugging the node: sh conf/enter.sh $(cat run/holder.pid) <command>
    TestFiles.write(dir.resolve("run/holder.pid"), holder.pid() + "\n");
  }

  /** A process of the node, output appended to {@code logs/<log>.log}. */
  private Process start(String log, List<String> command) {
    try {
      ProcessBuilder b =
          new ProcessBuilder(command)
              .redirectErrorStream(true)
              .redirectOutput(
                  ProcessBuilder.Redirect.appendTo(files.logsDir().resolve(log + ".log").toFile()));
      // containerd finds its shim on PATH; the CNI plugin needs ip, nsenter and sysctl
      b.environment()
          .put(
              "PATH",
              binaries.bin()
                  + ":/usr/local/sbin:/usr/local/bin:/usr/sbin"
                  + ":/usr/bin:/sbin:/bin");
      return b.start();
    } catch (IOException e) {
      throw new UncheckedIOException("starting " + log + " of node " + name, e);
    }
  }

  /**
   * Starts a process in the node (its cgroup, mount and, if it has one, network namespace), output
   * to {@code logs/<log>.log}: kube-proxy, say. It ends with the node.
   */
  Process startInNode(String log, List<String> command) {
    return inNode(log, command);
  }

  private Process inNode(String log, List<String> command) {
    List<String> c =
        new ArrayList<>(
            List.of(
                "sh", files.conf().resolve("enter.sh").toString(), Long.toString(holder.pid())));
    c.addAll(command);
    return start(log, c);
  }

  /** The node's {@code binary} from the cache, started in the node, output to its log. */
  private Process startBinary(String binary, String... args) {
    List<String> command = new ArrayList<>(List.of(binaries.bin().resolve(binary).toString()));
    command.addAll(List.of(args));
    return inNode(binary, command);
  }

  private void startContainerd() {
    containerd =
        startBinary("containerd", "--config", files.conf().resolve("containerd.toml").toString());
    await(
        "containerd's socket",
        Duration.ofSeconds(60),
        containerd,
        () -> Files.exists(files.containerdSocket()));
  }

  /** The cached pause and busybox images into the node's containerd (retried until it serves). */
  private void importImages() {
    for (String image : List.of("pause", "busybox")) {
      await(
          "the " + image + " image imported",
          Duration.ofSeconds(60),
          containerd,
          () ->
              ctrImport(binaries.images().resolve(image + "-oci.tar"), "k8s.local/" + image)
                      .exitCode()
                  == 0);
    }
  }

  /**
   * Imports an OCI archive into the node's containerd as {@code <baseName>:<its tag>}, for pods
   * with {@code imagePullPolicy: Never} (no registry can be reached).
   */
  public void importImage(Path archive, String baseName) {
    Commands.Result r = ctrImport(archive, baseName);
    if (r.exitCode() != 0) {
      throw new IllegalStateException(
          "node " + name + ": importing " + archive + ": " + r.output());
    }
  }

  /** {@code ctr images import} into the kubelet's namespace of the node's containerd. */
  private Commands.Result ctrImport(Path archive, String baseName) {
    return run(
        List.of(
            binaries.bin().resolve("ctr").toString(),
            "--address",
            files.containerdSocket().toString(),
            "-n",
            "k8s.io",
            "images",
            "import",
            "--base-name",
            baseName,
            archive.toString()));
  }

  /** Starts the kubelet (again, after {@link #stopKubelet}: same root dir, same state). */
  public void startKubelet() {
    kubelet =
        startBinary(
            "kubelet",
            "--config",
            files.conf().resolve("kubelet.yaml").toString(),
            "--kubeconfig",
            files.conf().resolve("kubeconfig").toString(),
            "--root-dir",
            // a cluster node as users have them: its kubelet directory is bound over
            // /var/lib/kubelet, and paths the kubelet sees must be those a driver pod sees
            // (per-pod registration sockets are named to fit 108 bytes as the pod sees them)
            own != null ? "/var/lib/kubelet" : files.kubeletRoot().toString(),
            "--hostname-override",
            name,
            // an address of this machine: no DNS look-up of the node name
            "--node-ip",
            own != null ? own.nodeIp() : nodeIp(),
            "--node-labels",
            NodeRegistration.TEST_LABEL + "=real-node",
            "--v=2");
  }

  /** Stops the kubelet as systemd would (SIGTERM); its pods keep running under containerd. */
  public void stopKubelet() {
    stop(kubelet, "kubelet");
  }

  private void awaitReady() {
    await("the kubelet's healthz", START_TIMEOUT, kubelet, this::kubeletHealthy);
    await(
        "its Node Ready",
        START_TIMEOUT,
        kubelet,
        () -> {
          Node n = client.nodes().withName(name).get();
          return n != null
              && n.getStatus() != null
              && n.getStatus().getConditions() != null
              && n.getStatus().getConditions().stream()
                  .anyMatch(c -> c.getType().equals("Ready") && c.getStatus().equals("True"));
        });
    // what the node lifecycle controller of kube-controller-manager (absent here) would do
    await(
        "the not-ready taint lifted",
        Duration.ofSeconds(30),
        kubelet,
        () -> {
          Node n =
              client
                  .nodes()
                  .withName(name)
                  .edit(
                      x -> {
                        if (x.getSpec().getTaints() != null) {
                          x.getSpec()
                              .getTaints()
                              .removeIf(t -> t.getKey().startsWith("node.kubernetes.io/"));
                        }
                        return x;
                      });
          return n.getSpec().getTaints() == null || n.getSpec().getTaints().isEmpty();
        });
  }

  private boolean kubeletHealthy() {
    try {
      var r =
          HTTP.send(
              java.net.http.HttpRequest.newBuilder(
                      java.net.URI.create(
                          "http://"
                              + files.kubeletAddress()
                              + ":"
                              + files.healthzPort
                              + "/healthz"))
                  .timeout(Duration.ofSeconds(3))
                  .build(),
              java.net.http.HttpResponse.BodyHandlers.ofString());
      return r.statusCode() == 200;
    } catch (IOException e) {
      return false;
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      return false;
    }
  }

  /** The kubelet started again answers its health check and its Node is Ready. */
  public void awaitKubeletReady() {
    awaitReady();
  }

  /** The kubelet's log directory of one container of the pod. */
  private Path containerLogDir(Pod pod, String container) {
    return files
        .podLogsDir()
        .resolve(
            pod.getMetadata().getNamespace() + "_" + pod.getMetadata().getName() + "_" + uid(pod))
        .resolve(container);
  }

  /**
   * The lines a container wrote (stdout and stderr, without the CRI log prefix), from the kubelet's
   * pod logs directory; empty while there are none.
   */
  public List<String> containerLog(Pod pod, String container) {
    Path dirOfContainer = containerLogDir(pod, container);
    if (!Files.isDirectory(dirOfContainer)) {
      return List.of();
    }
    List<String> lines = new ArrayList<>();
    try (Stream<Path> logs = Files.list(dirOfContainer)) {
      for (Path f :
          logs.filter(f -> f.getFileName().toString().endsWith(".log")).sorted().toList()) {
        for (String line : Files.readAllLines(f, StandardCharsets.UTF_8)) {
          // <time> <stream> <P|F> <text>
          String[] parts = line.split(" ", 4);
          lines.add(parts.length == 4 ? parts[3] : line);
        }
      }
    } catch (IOException e) {
      return List.of();
    }
    return lines;
  }

  /**
   * The lines of one run of a container, {@code <restart>.log}: the kubelet's container garbage
   * collection removes a dead sandbox's containers with their logs, so earlier runs' lines may be
   * gone.
   */
  public List<String> containerLog(Pod pod, String container, int restart) {
    Path file = containerLogDir(pod, container).resolve(restart + ".log");
    try {
      return Files.readAllLines(file, StandardCharsets.UTF_8).stream()
          .map(
              line -> {
                String[] parts = line.split(" ", 4);
                return parts.length == 4 ? parts[3] : line;
              })
          .toList();
    } catch (IOException e) {
      return List.of();
    }
  }

  private String uid(Pod pod) {
    if (pod.getMetadata().getUid() != null) {
      return pod.getMetadata().getUid();
    }
    Pod current =
        client
            .pods()
            .inNamespace(pod.getMetadata().getNamespace())
            .withName(pod.getMetadata().getName())
            .get();
    return current == null ? "none" : current.getMetadata().getUid();
  }

  /** {@code crictl} against the node's containerd, e.g. {@code ps -a}; its output. */
  public String crictl(String... args) {
    List<String> c =
        new ArrayList<>(
            List.of(
                binaries.bin().resolve("crictl").toString(),
                "-c",
                "/dev/null",
                "--runtime-endpoint",
                "unix://" + files.containerdSocket(),
                "--timeout",
                "10s"));
    c.addAll(List.of(args));
    return run(c).output();
  }

  /**
   * Copies what explains a failure into {@code target}: the kubelet's, containerd's and every
   * container's logs, the runtime's view of pods and containers, and the CDI specs.
   */
  public void dumpTo(Path target) {
    try {
      Files.createDirectories(target);
      copyTree(files.logsDir(), target.resolve("logs"));
      copyTree(files.podLogsDir(), target.resolve("pod-logs"));
      copyTree(cdiDir(), target.resolve("cdi"));
      if (containerd != null && containerd.isAlive()) {
        TestFiles.write(target.resolve("crictl-pods.txt"), crictl("pods"));
        TestFiles.write(target.resolve("crictl-ps.txt"), crictl("ps", "-a"));
      }
      TestFiles.write(
          target.resolve("processes.txt"),
          cgroups.processes().stream()
                  .map(
                      p ->
                          p
                              + " "
                              + ProcessHandle.of(p)
                                  .flatMap(h -> h.info().commandLine())
                                  .orElse("?"))
                  .collect(Collectors.joining("\n"))
              + "\n");
    } catch (IOException | RuntimeException e) {
      TestFiles.write(target.resolve("node-dump-error.txt"), e.toString());
    }
  }

  private static void copyTree(Path from, Path to) throws IOException {
    if (!Files.isDirectory(from)) {
      return;
    }
    try (Stream<Path> walk = Files.walk(from)) {
      for (Path p : walk.filter(Files::isRegularFile).toList()) {
        Path t = to.resolve(from.relativize(p).toString());
        Files.createDirectories(t.getParent());
        Files.copy(p, t, StandardCopyOption.REPLACE_EXISTING);
      }
    }
  }

  /** Stops the node: {@link #stopProcesses}, then removes its Node object. Idempotent. */
  @Override
  public void close() {
    stopProcesses();
    try {
      client.nodes().withName(name).withGracePeriod(0).delete();
    } catch (RuntimeException e) {
      System.out.println("[real-node] deleting Node " + name + ": " + e);
    }
  }

  /**
   * Stops the node without touching the API server (which may be stopping too, as when a demo
   * ends): the kubelet and containerd as a shutdown would (SIGTERM), then every process left in its
   * cgroup (shims, containers, the namespace holder; SIGKILL), which takes its mount namespace and
   * every mount in it along; removes its cgroups and the runtime state in its directory (the logs
   * stay for a look). Idempotent.
   */
  public void stopProcesses() {
    stop(kubelet, "kubelet");
    stop(containerd, "containerd");
    killAll();
    for (String state : List.of("containerd", "k", "cni/state")) {
      TestFiles.deleteRecursively(dir.resolve(state));
    }
    try {
      Runtime.getRuntime().removeShutdownHook(hook);
    } catch (IllegalStateException shuttingDown) {
      // the hook runs anyway
    }
  }

  private void killAll() {
    cgroups.killAndRemove(Duration.ofSeconds(30));
    RealNodeFiles.removeMountPoints();
  }

  private void stop(Process p, String what) {
    if (p == null || !p.isAlive()) {
      return;
    }
    // enter.sh execs nsenter, which execs the command: one pid all along
    p.destroy();
    try {
      if (!p.waitFor(STOP_GRACE.toSeconds(), TimeUnit.SECONDS)) {
        System.out.println("[real-node] " + name + ": " + what + " ignored SIGTERM; SIGKILL");
        p.destroyForcibly();
        p.waitFor(10, TimeUnit.SECONDS);
      }
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      p.destroyForcibly();
    }
  }

  private interface Check {
    boolean ok() throws Exception;
  }

  /** Waits for a state of the node; fails early when the process behind it has exited. */
  private void await(String what, Duration timeout, Process process, Check check) {
    long deadline = System.nanoTime() + timeout.toNanos();
    Exception last = null;
    while (System.nanoTime() < deadline) {
      try {
        if (check.ok()) {
          return;
        }
      } catch (Exception e) {
        last = e;
      }
      if (!process.isAlive()) {
        throw new IllegalStateException(
            "node "
                + name
                + ": waiting for "
                + what
                + ", the process"
                + " exited with "
                + process.exitValue()
                + "; logs in "
                + files.logsDir());
      }
      ServiceProcess.sleep(250);
    }
    throw new IllegalStateException(
        "node "
            + name
            + ": no "
            + what
            + " after "
            + timeout
            + (last == null ? "" : " (last: " + last + ")")
            + "; logs in "
            + files.logsDir());
  }

  private static Commands.Result run(List<String> command) {
    return Commands.run(Duration.ofSeconds(60), command);
  }

  /** A global IPv4 address of this machine, else loopback. */
  private static String nodeIp() {
    try {
      for (NetworkInterface i : Collections.list(NetworkInterface.getNetworkInterfaces())) {
        if (!i.isUp() || i.isLoopback()) {
          continue;
        }
        Optional<InetAddress> v4 =
            Collections.list(i.getInetAddresses()).stream()
                .filter(a -> a instanceof Inet4Address && !a.isLinkLocalAddress())
                .findFirst();
        if (v4.isPresent()) {
          return v4.get().getHostAddress();
        }
      }
    } catch (SocketException e) {
      // loopback then
    }
    return "127.0.0.1";
  }
}
