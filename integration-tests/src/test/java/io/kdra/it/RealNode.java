package io.kdra.it;

import io.fabric8.kubernetes.api.model.Node;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.client.KubernetesClient;
import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.net.Inet4Address;
import java.net.InetAddress;
import java.net.NetworkInterface;
import java.net.SocketException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.nio.file.attribute.PosixFilePermissions;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.TimeUnit;
import java.util.stream.Collectors;
import java.util.stream.Stream;

/**
 * One real Kubernetes node for the end-to-end tests: the real kubelet with its own containerd
 * 2.x (CDI on, runc), against the suite's API server, built by
 * {@code integration-tests/scripts/build-node.sh}. Nothing system-wide changes:
 * <ul>
 *   <li>containerd and the kubelet run in a private mount namespace (held by a sleeping process)
 *       with plain files bind-mounted over the kernel tunables the kubelet would rewrite for the
 *       whole machine, tmpfs over the paths they hard-code ({@code /run/containerd},
 *       {@code /run/netns}, {@code /var/lib/kubelet} for the device-plugin socket,
 *       {@code /var/lib/cni}) and {@code /var/log} (the kubelet's container log links) bound to
 *       the node's directory;</li>
 *   <li>every process of the node, containers included, lives in the node's cgroup
 *       ({@link NodeCgroups}, also the kubelet's {@code cgroupRoot}), so that stopping it, or
 *       reaping what a killed test JVM left, ends exactly those;</li>
 *   <li>ports come free from the kernel, sockets and state live in {@code target/rn/<node>}.</li>
 * </ul>
 * Pods get an {@code eth0} that leads nowhere (the {@code kdra-isolated} CNI plugin); images are
 * {@code k8s.local/busybox:1} and the pause image, imported from the cache (no registry can be
 * reached). The API server cannot reach a loopback kubelet, so container logs are read from the
 * kubelet's {@code podLogsDir} ({@link #containerLog}).
 */
final class RealNode implements AutoCloseable {

  /** The busybox image every node has; pods must use {@code imagePullPolicy: Never}. */
  static final String BUSYBOX = "k8s.local/busybox:1";
  static final String PAUSE = "k8s.local/pause:3.10";

  private static final Duration START_TIMEOUT = Duration.ofSeconds(180);
  private static final Duration STOP_GRACE = Duration.ofSeconds(15);
  /** What the kubelet writes machine-wide unless these are files of our own (kubelet's setupKernelTunables). */
  private static final List<String> KERNEL_TUNABLES = List.of("vm/overcommit_memory",
      "vm/panic_on_oom", "kernel/panic", "kernel/panic_on_oops", "kernel/keys/root_maxkeys",
      "kernel/keys/root_maxbytes");
  /** Paths containerd and the kubelet hard-code: a tmpfs of the node's own over each. */
  private static final List<Path> HARD_CODED = List.of(Path.of("/run/containerd"),
      Path.of("/run/netns"), Path.of("/var/lib/kubelet"), Path.of("/var/lib/cni"));
  /** In each mount point the harness made: the harness may remove it again. */
  private static final String MOUNT_POINT_MARKER = ".kdra-real-node";

  private static final java.net.http.HttpClient HTTP = java.net.http.HttpClient.newBuilder()
      .connectTimeout(Duration.ofSeconds(2)).build();

  final String name;
  final Path dir;
  private final RealNodeBinaries binaries;
  private final KubernetesClient client;
  private final String kubeconfig;
  private final NodeCgroups cgroups;
  private final Thread hook;
  private Process holder;
  private Process containerd;
  private Process kubelet;
  private int kubeletStarts;
  private final int kubeletPort = ServiceProcess.freePort();
  private final int healthzPort = ServiceProcess.freePort();

  private RealNode(String name, Path dir, RealNodeBinaries binaries, KubernetesClient client,
      String kubeconfig) {
    this.name = name;
    this.dir = dir;
    this.binaries = binaries;
    this.client = client;
    this.kubeconfig = kubeconfig;
    this.cgroups = NodeCgroups.forNode(name);
    this.hook = new Thread(this::killAll, "real-node-" + name);
  }

  /**
   * Starts node {@code name} (containerd, images, kubelet) and returns once its Node is Ready and
   * schedulable; the previous contents of its directory are deleted first.
   *
   * @param kubeconfig the admin kubeconfig of the suite's API server (the kubelet's identity)
   */
  static RealNode start(String name, Path dir, RealNodeBinaries binaries,
      KubernetesClient client, String kubeconfig) {
    RealNode node = new RealNode(name, dir, binaries, client, kubeconfig);
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
      throw new IllegalStateException("the checkout's path is too long for the node's unix"
          + " sockets (" + longest + "): clone it into a shorter directory");
    }
    Stack.deleteRecursively(dir);
    // first: a node cgroup keeps other runs from removing the shared mount points meanwhile
    cgroups.create();
    writeConfiguration();
    startHolder();
    startContainerd();
    importImages();
    startKubelet();
    awaitReady();
    System.out.printf("[real-node] %s Ready in %d ms (kubelet %s, containerd %s); logs in %s%n",
        name, (System.nanoTime() - started) / 1_000_000, binaries.k8sVersion(),
        binaries.containerdVersion(), dir.resolve("logs"));
  }

  /** Whether this JVM runs as root, which real nodes need. */
  static boolean runsAsRoot() {
    try {
      return "0".equals(String.valueOf(Files.getAttribute(Path.of("/proc/self"), "unix:uid")));
    } catch (IOException | UnsupportedOperationException | IllegalArgumentException e) {
      return false;
    }
  }

  Path kubeletRoot() {
    return dir.resolve("k");
  }

  /** The kubelet's plugin watcher's directory: the device-driver's registration socket. */
  Path registryDir() {
    return kubeletRoot().resolve("plugins_registry");
  }

  /** Where kubelet plugins keep their sockets and state ({@code <root-dir>/plugins}). */
  Path pluginsDir() {
    return kubeletRoot().resolve("plugins");
  }

  /** containerd's {@code cdi_spec_dirs}: the device-driver writes its CDI specs here. */
  Path cdiDir() {
    return dir.resolve("cdi");
  }

  Path podLogsDir() {
    return dir.resolve("pod-logs");
  }

  Path logsDir() {
    return dir.resolve("logs");
  }

  Path kubeletLog() {
    return logsDir().resolve("kubelet.log");
  }

  private Path conf() {
    return dir.resolve("conf");
  }

  private Path containerdSocket() {
    return dir.resolve("run/containerd.sock");
  }

  private void writeConfiguration() {
    try {
      for (String d : List.of("conf", "logs", "run", "cdi", "pod-logs", "varlog", "k",
          "cni/bin", "cni/net.d", "containerd")) {
        Files.createDirectories(dir.resolve(d));
      }
      try (InputStream plugin = RealNode.class.getResourceAsStream("/realnode/kdra-isolated")) {
        Path target = dir.resolve("cni/bin/kdra-isolated");
        Files.copy(plugin, target, StandardCopyOption.REPLACE_EXISTING);
        Files.setPosixFilePermissions(target, PosixFilePermissions.fromString("rwxr-xr-x"));
      }
      Stack.write(dir.resolve("cni/net.d/10-kdra.conflist"), "{\"cniVersion\":\"1.0.0\","
          + "\"name\":\"kdra-isolated\",\"plugins\":[{\"type\":\"kdra-isolated\"}]}\n");
      Stack.write(conf().resolve("kubeconfig"), kubeconfig);
      Stack.write(conf().resolve("containerd.toml"), containerdConfig());
      Stack.write(conf().resolve("kubelet.yaml"), kubeletConfig());
      StringBuilder binds = new StringBuilder();
      for (String tunable : KERNEL_TUNABLES) {
        Path live = Path.of("/proc/sys").resolve(tunable);
        if (!Files.exists(live)) {
          continue;
        }
        // the node's own copy, starting from the machine's value; the kubelet rewrites this one
        Path copy = conf().resolve("sysctl").resolve(tunable.replace('/', '.'));
        Stack.write(copy, Files.readString(live));
        binds.append("mount --bind ").append(copy).append(' ').append(live).append('\n');
      }
      StringBuilder tmpfs = new StringBuilder();
      for (Path p : HARD_CODED) {
        ensureMountPoint(p);
        tmpfs.append("mount -t tmpfs -o mode=0755 tmpfs ").append(p).append('\n');
      }
      Stack.write(conf().resolve("ns.sh"), "#!/bin/sh\n"
          + "# the node's mount namespace (RealNode): private mounts only\n"
          + "set -e\n"
          + "mount --make-rprivate /\n"
          + binds
          + tmpfs
          + "mount --bind " + dir.resolve("varlog") + " /var/log\n"
          + "touch " + dir.resolve("run/ns.ready") + "\n"
          + "exec sleep infinity\n");
      String join = cgroups.procsFiles().stream().map(f -> "echo $$ > " + f)
          .collect(Collectors.joining("\n"));
      Stack.write(conf().resolve("holder.sh"), "#!/bin/sh\n"
          + "# joins the node's cgroup, then holds its mount namespace\n"
          + "set -e\n" + join + "\n"
          + "exec unshare --mount --propagation private sh " + conf().resolve("ns.sh") + "\n");
      // "$1" is the holder's pid; the rest is the command to run inside the node
      Stack.write(conf().resolve("enter.sh"), "#!/bin/sh\n"
          + "# runs a command in the node: its cgroup and its mount namespace\n"
          + "set -e\n" + join + "\n"
          + "holder=$1; shift\n"
          + "exec nsenter -t \"$holder\" -m -- \"$@\"\n");
    } catch (IOException e) {
      throw new UncheckedIOException("writing the configuration of node " + name, e);
    }
  }

  /**
   * A directory for a tmpfs of the node's own, created when missing, with a marker file inside
   * (hidden under the tmpfs in every node) that says the harness made it: so that it is removed
   * once no node runs any more, also when the JVM that made it was killed.
   */
  private static void ensureMountPoint(Path p) throws IOException {
    synchronized (RealNode.class) {
      if (!Files.isDirectory(p)) {
        Files.createDirectories(p);
        Files.writeString(p.resolve(MOUNT_POINT_MARKER), "made by the kdra real-node ITs\n");
      }
    }
  }

  /**
   * Removes the mount-point directories the harness made (those with only its marker inside),
   * once no node of any run is left (one that another run's node still mounts over must stay).
   */
  static void removeMountPoints() {
    synchronized (RealNode.class) {
      boolean anyNode = NodeCgroups.hierarchies().stream().anyMatch(h -> {
        try (Stream<Path> dirs = Files.list(h)) {
          return dirs.anyMatch(d -> NodeCgroups.owner(d.getFileName().toString()).isPresent());
        } catch (IOException e) {
          return true;
        }
      });
      if (anyNode) {
        return;
      }
      for (Path p : HARD_CODED) {
        try (Stream<Path> entries = Files.list(p)) {
          if (entries.map(e -> e.getFileName().toString()).toList()
              .equals(List.of(MOUNT_POINT_MARKER))) {
            Files.delete(p.resolve(MOUNT_POINT_MARKER));
            Files.delete(p);
          }
        } catch (IOException e) {
          // missing, not ours, or in use: leave it
        }
      }
    }
  }

  private String containerdConfig() {
    Path c = dir.resolve("containerd");
    return "version = 3\n"
        + "root = \"" + c.resolve("root") + "\"\n"
        + "state = \"" + c.resolve("state") + "\"\n"
        + "[grpc]\n"
        + "  address = \"" + containerdSocket() + "\"\n"
        + "[ttrpc]\n"
        + "  address = \"" + containerdSocket() + ".ttrpc\"\n"
        + "[debug]\n"
        + "  address = \"" + dir.resolve("run/containerd-debug.sock") + "\"\n"
        + "[plugins]\n"
        + "  [plugins.'io.containerd.internal.v1.opt']\n"
        + "    path = \"" + c.resolve("opt") + "\"\n"
        + "  [plugins.'io.containerd.nri.v1.nri']\n"
        + "    disable = true\n"
        + "  [plugins.'io.containerd.cri.v1.images'.pinned_images]\n"
        + "    sandbox = '" + PAUSE + "'\n"
        + "  [plugins.'io.containerd.cri.v1.runtime']\n"
        + "    # CDI is always on in containerd 2.x; the device-driver writes its specs here\n"
        + "    cdi_spec_dirs = ['" + cdiDir() + "']\n"
        + "    # no CAP_SYS_RESOURCE in CI's sandbox: an oom_score_adj below containerd's fails\n"
        + "    restrict_oom_score_adj = true\n"
        + "    [plugins.'io.containerd.cri.v1.runtime'.containerd.runtimes.runc.options]\n"
        + "      BinaryName = '" + binaries.runc() + "'\n"
        + "      Root = '" + c.resolve("runc") + "'\n"
        + "      SystemdCgroup = false\n"
        + "    [plugins.'io.containerd.cri.v1.runtime'.cni]\n"
        + "      bin_dirs = ['" + dir.resolve("cni/bin") + "']\n"
        + "      conf_dir = '" + dir.resolve("cni/net.d") + "'\n"
        + "      # no CNI loopback plugin needed (none is installed): containerd brings lo up\n"
        + "      use_internal_loopback = true\n"
        + "  [plugins.'io.containerd.grpc.v1.cri']\n"
        + "    stream_server_address = '127.0.0.1'\n"
        + "    stream_server_port = '0'\n";
  }

  private String kubeletConfig() {
    return "apiVersion: kubelet.config.k8s.io/v1beta1\n"
        + "kind: KubeletConfiguration\n"
        + "# the CI sandbox has cgroup v1, which 1.36 refuses by default\n"
        + "failCgroupV1: false\n"
        + "cgroupDriver: cgroupfs\n"
        + "# the node's own cgroup (NodeCgroups): pods go below it, never into the machine's\n"
        + "cgroupRoot: /" + cgroups.name + "\n"
        + "failSwapOn: false\n"
        + "containerRuntimeEndpoint: unix://" + containerdSocket() + "\n"
        + "address: 127.0.0.1\n"
        + "port: " + kubeletPort + "\n"
        + "readOnlyPort: 0\n"
        + "healthzBindAddress: 127.0.0.1\n"
        + "healthzPort: " + healthzPort + "\n"
        + "authentication: {anonymous: {enabled: false}, webhook: {enabled: false}}\n"
        + "authorization: {mode: AlwaysAllow}\n"
        + "podLogsDir: " + podLogsDir() + "\n"
        + "# the images are imported, never pulled: never collect them\n"
        + "imageGCHighThresholdPercent: 100\n"
        + "evictionHard: {memory.available: \"100Mi\", nodefs.available: \"1%\","
        + " imagefs.available: \"1%\"}\n";
  }

  private void startHolder() {
    holder = start("ns", List.of("sh", conf().resolve("holder.sh").toString()));
    await("its mount namespace", Duration.ofSeconds(30), holder,
        () -> Files.exists(dir.resolve("run/ns.ready")));
    // for a person debugging the node: sh conf/enter.sh $(cat run/holder.pid) <command>
    Stack.write(dir.resolve("run/holder.pid"), holder.pid() + "\n");
  }

  /** A process of the node, output appended to {@code logs/<log>.log}. */
  private Process start(String log, List<String> command) {
    try {
      ProcessBuilder b = new ProcessBuilder(command).redirectErrorStream(true)
          .redirectOutput(ProcessBuilder.Redirect.appendTo(logsDir().resolve(log + ".log")
              .toFile()));
      // containerd finds its shim on PATH; the CNI plugin needs ip, nsenter and sysctl
      b.environment().put("PATH", binaries.bin() + ":/usr/local/sbin:/usr/local/bin:/usr/sbin"
          + ":/usr/bin:/sbin:/bin");
      return b.start();
    } catch (IOException e) {
      throw new UncheckedIOException("starting " + log + " of node " + name, e);
    }
  }

  private Process inNode(String log, List<String> command) {
    List<String> c = new ArrayList<>(List.of("sh", conf().resolve("enter.sh").toString(),
        Long.toString(holder.pid())));
    c.addAll(command);
    return start(log, c);
  }

  private void startContainerd() {
    containerd = inNode("containerd", List.of(binaries.bin().resolve("containerd").toString(),
        "--config", conf().resolve("containerd.toml").toString()));
    await("containerd's socket", Duration.ofSeconds(60), containerd,
        () -> Files.exists(containerdSocket()));
  }

  /** The cached pause and busybox images into the node's containerd (retried until it serves). */
  private void importImages() {
    for (String image : List.of("pause", "busybox")) {
      await("the " + image + " image imported", Duration.ofSeconds(60), containerd, () ->
          run(List.of(binaries.bin().resolve("ctr").toString(), "--address",
              containerdSocket().toString(), "-n", "k8s.io", "images", "import", "--base-name",
              "k8s.local/" + image, binaries.images().resolve(image + "-oci.tar").toString()))
              .exitCode() == 0);
    }
  }

  /** Starts the kubelet (again, after {@link #stopKubelet}: same root dir, same state). */
  void startKubelet() {
    kubeletStarts++;
    kubelet = inNode("kubelet", List.of(binaries.bin().resolve("kubelet").toString(),
        "--config", conf().resolve("kubelet.yaml").toString(),
        "--kubeconfig", conf().resolve("kubeconfig").toString(),
        "--root-dir", kubeletRoot().toString(),
        "--hostname-override", name,
        // an address of this machine: no DNS look-up of the node name
        "--node-ip", nodeIp(),
        "--node-labels", Stack.TEST_LABEL + "=real-node",
        "--v=2"));
  }

  /** Stops the kubelet as systemd would (SIGTERM); its pods keep running under containerd. */
  void stopKubelet() {
    stop(kubelet, "kubelet");
  }

  boolean kubeletAlive() {
    return kubelet != null && kubelet.isAlive();
  }

  /** How often the kubelet was started on this node. */
  int kubeletStarts() {
    return kubeletStarts;
  }

  private void awaitReady() {
    await("the kubelet's healthz", START_TIMEOUT, kubelet, this::kubeletHealthy);
    await("its Node Ready", START_TIMEOUT, kubelet, () -> {
      Node n = client.nodes().withName(name).get();
      return n != null && n.getStatus() != null && n.getStatus().getConditions() != null
          && n.getStatus().getConditions().stream().anyMatch(c -> c.getType().equals("Ready")
              && c.getStatus().equals("True"));
    });
    // what the node lifecycle controller of kube-controller-manager (absent here) would do
    await("the not-ready taint lifted", Duration.ofSeconds(30), kubelet, () -> {
      Node n = client.nodes().withName(name).edit(x -> {
        if (x.getSpec().getTaints() != null) {
          x.getSpec().getTaints().removeIf(t -> t.getKey().startsWith("node.kubernetes.io/"));
        }
        return x;
      });
      return n.getSpec().getTaints() == null || n.getSpec().getTaints().isEmpty();
    });
  }

  private boolean kubeletHealthy() {
    try {
      var r = HTTP.send(java.net.http.HttpRequest.newBuilder(java.net.URI.create(
              "http://127.0.0.1:" + healthzPort + "/healthz")).timeout(Duration.ofSeconds(3))
              .build(), java.net.http.HttpResponse.BodyHandlers.ofString());
      return r.statusCode() == 200;
    } catch (IOException e) {
      return false;
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      return false;
    }
  }

  /** The kubelet started again answers its health check and its Node is Ready. */
  void awaitKubeletReady() {
    awaitReady();
  }

  /**
   * The lines a container wrote (stdout and stderr, without the CRI log prefix), from the
   * kubelet's pod logs directory; empty while there are none.
   */
  List<String> containerLog(Pod pod, String container) {
    Path podDir = podLogsDir().resolve(pod.getMetadata().getNamespace() + "_"
        + pod.getMetadata().getName() + "_" + uid(pod));
    Path dirOfContainer = podDir.resolve(container);
    if (!Files.isDirectory(dirOfContainer)) {
      return List.of();
    }
    List<String> lines = new ArrayList<>();
    try (Stream<Path> files = Files.list(dirOfContainer)) {
      for (Path f : files.filter(f -> f.getFileName().toString().endsWith(".log")).sorted()
          .toList()) {
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

  private String uid(Pod pod) {
    if (pod.getMetadata().getUid() != null) {
      return pod.getMetadata().getUid();
    }
    Pod current = client.pods().inNamespace(pod.getMetadata().getNamespace())
        .withName(pod.getMetadata().getName()).get();
    return current == null ? "none" : current.getMetadata().getUid();
  }

  /** {@code crictl} against the node's containerd, e.g. {@code ps -a}; its output. */
  String crictl(String... args) {
    List<String> c = new ArrayList<>(List.of(binaries.bin().resolve("crictl").toString(),
        "-c", "/dev/null", "--runtime-endpoint", "unix://" + containerdSocket(), "--timeout",
        "10s"));
    c.addAll(List.of(args));
    return run(c).output();
  }

  /**
   * Copies what explains a failure into {@code target}: the kubelet's, containerd's and every
   * container's logs, the runtime's view of pods and containers, and the CDI specs.
   */
  void dumpTo(Path target) {
    try {
      Files.createDirectories(target);
      copyTree(logsDir(), target.resolve("logs"));
      copyTree(podLogsDir(), target.resolve("pod-logs"));
      copyTree(cdiDir(), target.resolve("cdi"));
      if (containerd != null && containerd.isAlive()) {
        Stack.write(target.resolve("crictl-pods.txt"), crictl("pods"));
        Stack.write(target.resolve("crictl-ps.txt"), crictl("ps", "-a"));
      }
      Stack.write(target.resolve("processes.txt"), cgroups.processes().stream()
          .map(p -> p + " " + ProcessHandle.of(p).flatMap(h -> h.info().commandLine())
              .orElse("?")).collect(Collectors.joining("\n")) + "\n");
    } catch (IOException | RuntimeException e) {
      Stack.write(target.resolve("node-dump-error.txt"), e.toString());
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

  /**
   * Stops the node: the kubelet and containerd as a shutdown would (SIGTERM), then every process
   * left in its cgroup (shims, containers, the namespace holder; SIGKILL), which takes its mount
   * namespace and every mount in it along; removes its cgroups, its Node object and the runtime
   * state in its directory (the logs stay for a look). Idempotent.
   */
  @Override
  public void close() {
    stop(kubelet, "kubelet");
    stop(containerd, "containerd");
    killAll();
    try {
      client.nodes().withName(name).withGracePeriod(0).delete();
    } catch (RuntimeException e) {
      System.out.println("[real-node] deleting Node " + name + ": " + e);
    }
    for (String state : List.of("containerd", "k", "cni/state")) {
      Stack.deleteRecursively(dir.resolve(state));
    }
    try {
      Runtime.getRuntime().removeShutdownHook(hook);
    } catch (IllegalStateException shuttingDown) {
      // the hook runs anyway
    }
  }

  private void killAll() {
    cgroups.killAndRemove(Duration.ofSeconds(30));
    removeMountPoints();
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
        throw new IllegalStateException("node " + name + ": waiting for " + what + ", the process"
            + " exited with " + process.exitValue() + "; logs in " + logsDir());
      }
      ServiceProcess.sleep(250);
    }
    throw new IllegalStateException("node " + name + ": no " + what + " after " + timeout
        + (last == null ? "" : " (last: " + last + ")") + "; logs in " + logsDir());
  }

  record Result(int exitCode, String output) {}

  private static Result run(List<String> command) {
    try {
      Process p = new ProcessBuilder(command).redirectErrorStream(true).start();
      String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
      if (!p.waitFor(60, TimeUnit.SECONDS)) {
        p.destroyForcibly();
        return new Result(-1, out + "\n(timed out)");
      }
      return new Result(p.exitValue(), out);
    } catch (IOException e) {
      return new Result(-1, e.toString());
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      return new Result(-1, "interrupted");
    }
  }

  /** A global IPv4 address of this machine, else loopback. */
  private static String nodeIp() {
    try {
      for (NetworkInterface i : Collections.list(NetworkInterface.getNetworkInterfaces())) {
        if (!i.isUp() || i.isLoopback()) {
          continue;
        }
        Optional<InetAddress> v4 = Collections.list(i.getInetAddresses()).stream()
            .filter(a -> a instanceof Inet4Address && !a.isLinkLocalAddress()).findFirst();
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
