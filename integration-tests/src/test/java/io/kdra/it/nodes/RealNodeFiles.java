package io.kdra.it.nodes;

import io.kdra.it.support.ServiceProcess;
import io.kdra.it.support.TestFiles;
import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.stream.Collectors;
import java.util.stream.Stream;

/**
 * The layout of one {@link RealNode}'s directory and the files that configure it: containerd's and
 * the kubelet's configuration, the CNI plugin, and the scripts that make and enter the node's mount
 * namespace (the bind mounts and tmpfs that keep the machine unchanged), plus the shared mount
 * points those need.
 */
final class RealNodeFiles {

  /**
   * What the kubelet writes machine-wide unless these are files of our own (kubelet's
   * setupKernelTunables).
   */
  private static final List<String> KERNEL_TUNABLES =
      List.of(
          "vm/overcommit_memory",
          "vm/panic_on_oom",
          "kernel/panic",
          "kernel/panic_on_oops",
          "kernel/keys/root_maxkeys",
          "kernel/keys/root_maxbytes");

  /**
   * Paths containerd and the kubelet hard-code: a tmpfs of the node's own over each (a {@link
   * MultiNodeCluster}'s node binds its kubelet directory over {@code /var/lib/kubelet} instead).
   */
  private static final List<Path> HARD_CODED =
      List.of(
          Path.of("/run/containerd"),
          Path.of("/run/netns"),
          Path.of("/var/lib/kubelet"),
          Path.of("/var/lib/cni"));

  /**
   * Where a node of a {@link MultiNodeCluster} shows its CDI directory: the container runtimes'
   * default, which a DRA driver's chart writes to unless told otherwise.
   */
  private static final Path STANDARD_CDI_DIR = Path.of("/var/run/cdi");

  /**
   * The kubelet's default root directory, which DRA drivers' charts mount unless told otherwise.
   */
  private static final Path STANDARD_KUBELET_DIR = Path.of("/var/lib/kubelet");

  /** In each mount point the harness made: the harness may remove it again. */
  private static final String MOUNT_POINT_MARKER = ".kdra-real-node";

  final Path dir;
  private final RealNodeBinaries binaries;
  private final NodeCgroups cgroups;
  private final String kubeconfig;

  /** Where pods get host-reachable addresses; null: the isolated plugin, no network. */
  private final PodNetwork network;

  /** The node's own network namespace and pod range; null: the host's network. */
  private final RealNode.OwnNetwork own;

  /** The kubelet's {@code featureGates}, sorted; empty: the version's defaults. */
  private final Map<String, Boolean> featureGates;

  final int kubeletPort;
  final int healthzPort;

  RealNodeFiles(
      Path dir,
      RealNodeBinaries binaries,
      NodeCgroups cgroups,
      String kubeconfig,
      PodNetwork network) {
    this(dir, binaries, cgroups, kubeconfig, network, null, Map.of());
  }

  RealNodeFiles(
      Path dir,
      RealNodeBinaries binaries,
      NodeCgroups cgroups,
      String kubeconfig,
      PodNetwork network,
      RealNode.OwnNetwork own,
      Map<String, Boolean> featureGates) {
    this.network = network;
    this.own = own;
    this.featureGates = new TreeMap<>(featureGates);
    // a network of its own: the kubelet's usual ports, nobody else's there
    this.kubeletPort = own != null ? 10250 : ServiceProcess.freePort();
    this.healthzPort = own != null ? 10248 : ServiceProcess.freePort();
    this.dir = dir;
    this.binaries = binaries;
    this.cgroups = cgroups;
    this.kubeconfig = kubeconfig;
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

  Path conf() {
    return dir.resolve("conf");
  }

  /** Where the kubelet serves and answers its health check. */
  String kubeletAddress() {
    return own != null ? own.nodeIp() : "127.0.0.1";
  }

  Path containerdSocket() {
    return dir.resolve("run/containerd.sock");
  }

  /** Writes every file the node's processes need (after its cgroup exists). */
  void write() {
    try {
      for (String d :
          List.of(
              "conf",
              "logs",
              "run",
              "cdi",
              "pod-logs",
              "varlog",
              "k",
              "cni/bin",
              "cni/net.d",
              "containerd")) {
        Files.createDirectories(dir.resolve(d));
      }
      if (own != null) {
        TestFiles.write(dir.resolve("cni/net.d/10-kdra.conflist"), standardCniConfig());
      } else {
        String plugin = network == null ? "kdra-isolated" : "kdra-bridge";
        try (InputStream in = RealNodeFiles.class.getResourceAsStream("/realnode/" + plugin)) {
          Path target = dir.resolve("cni/bin/" + plugin);
          Files.copy(in, target, StandardCopyOption.REPLACE_EXISTING);
          Files.setPosixFilePermissions(target, PosixFilePermissions.fromString("rwxr-xr-x"));
        }
        TestFiles.write(
            dir.resolve("cni/net.d/10-kdra.conflist"),
            network != null
                ? network.cniConfig()
                : "{\"cniVersion\":\"1.0.0\","
                    + "\"name\":\"kdra-isolated\",\"plugins\":[{\"type\":\"kdra-isolated\"}]}\n");
      }
      TestFiles.write(conf().resolve("kubeconfig"), kubeconfig);
      if (own != null) {
        // the node's own copy, as kubeadm's nodes have /etc/kubernetes/pki/ca.crt
        Files.copy(own.clusterCa(), clusterCa(), StandardCopyOption.REPLACE_EXISTING);
      }
      TestFiles.write(conf().resolve("containerd.toml"), containerdConfig());
      TestFiles.write(conf().resolve("kubelet.yaml"), kubeletConfig());
      StringBuilder binds = new StringBuilder();
      for (String tunable : KERNEL_TUNABLES) {
        Path live = Path.of("/proc/sys").resolve(tunable);
        if (!Files.exists(live)) {
          continue;
        }
        // the node's own copy, starting from the machine's value; the kubelet rewrites this one
        Path copy = conf().resolve("sysctl").resolve(tunable.replace('/', '.'));
        TestFiles.write(copy, Files.readString(live));
        binds.append("mount --bind ").append(copy).append(' ').append(live).append('\n');
      }
      StringBuilder mounts = new StringBuilder();
      for (Path p : HARD_CODED) {
        ensureMountPoint(p);
        if (own != null && p.equals(STANDARD_KUBELET_DIR)) {
          // a cluster node as users have them: the kubelet's directory and CDI's at their usual
          // paths, where a DRA driver's DaemonSet mounts them by default
          mounts.append("mount --bind ").append(kubeletRoot()).append(' ').append(p).append('\n');
        } else {
          mounts.append("mount -t tmpfs -o mode=0755 tmpfs ").append(p).append('\n');
        }
      }
      if (own != null) {
        ensureMountPoint(STANDARD_CDI_DIR);
        mounts
            .append("mount --bind ")
            .append(cdiDir())
            .append(' ')
            .append(STANDARD_CDI_DIR)
            .append('\n');
      }
      TestFiles.write(
          conf().resolve("ns.sh"),
          "#!/bin/sh\n"
              + "# the node's mount namespace (RealNode): private mounts only\n"
              + "set -e\n"
              + "mount --make-rprivate /\n"
              + binds
              + mounts
              + "mount --bind "
              + dir.resolve("varlog")
              + " /var/log\n"
              + "touch "
              + dir.resolve("run/ns.ready")
              + "\n"
              + "exec sleep infinity\n");
      String join =
          cgroups.procsFiles().stream()
              .map(f -> "echo $$ > " + f)
              .collect(Collectors.joining("\n"));
      TestFiles.write(
          conf().resolve("holder.sh"),
          "#!/bin/sh\n"
              + "# joins the node's cgroup, then holds its mount namespace\n"
              + "set -e\n"
              + join
              + "\n"
              + "exec unshare --mount "
              + (own != null ? "--net " : "")
              + "--propagation private sh "
              + conf().resolve("ns.sh")
              + "\n");
      // "$1" is the holder's pid; the rest is the command to run inside the node
      TestFiles.write(
          conf().resolve("enter.sh"),
          "#!/bin/sh\n"
              + "# runs a command in the node: its cgroup and its mount namespace\n"
              + "set -e\n"
              + join
              + "\n"
              + "holder=$1; shift\n"
              + "exec nsenter -t \"$holder\" -m "
              + (own != null ? "-n " : "")
              + "-- \"$@\"\n");
    } catch (IOException e) {
      throw new UncheckedIOException("writing the configuration of node " + dir, e);
    }
  }

  /**
   * The standard CNI plugins: a bridge {@code cni0} in the node's namespace, the node's pod range
   * from host-local, portmap for hostPorts; the node routes (no masquerade: pods see each other's
   * addresses, which NetworkPolicy needs).
   */
  private String standardCniConfig() {
    return "{\"cniVersion\":\"1.0.0\",\"name\":\"kdra-cluster\",\"plugins\":["
        + "{\"type\":\"bridge\",\"bridge\":\"cni0\",\"isGateway\":true,\"ipMasq\":false,"
        + "\"hairpinMode\":true,\"ipam\":{\"type\":\"host-local\",\"ranges\":[[{\"subnet\":\""
        + own.podCidr()
        + "\"}]],\"routes\":[{\"dst\":\"0.0.0.0/0\"}],\"dataDir\":\""
        + dir.resolve("cni/ipam")
        + "\"}},"
        + "{\"type\":\"portmap\",\"capabilities\":{\"portMappings\":true}}]}\n";
  }

  /**
   * A directory for a tmpfs of the node's own, created when missing, with a marker file inside
   * (hidden under the tmpfs in every node) that says the harness made it: so that it is removed
   * once no node runs any more, also when the JVM that made it was killed.
   */
  private static void ensureMountPoint(Path p) throws IOException {
    synchronized (RealNodeFiles.class) {
      if (!Files.isDirectory(p)) {
        Files.createDirectories(p);
        Files.writeString(p.resolve(MOUNT_POINT_MARKER), "made by the kdra real-node ITs\n");
      }
    }
  }

  /**
   * Removes the mount-point directories the harness made (those with only its marker inside), once
   * no node of any run is left (one that another run's node still mounts over must stay).
   */
  static void removeMountPoints() {
    synchronized (RealNodeFiles.class) {
      boolean anyNode =
          NodeCgroups.hierarchies().stream()
              .anyMatch(
                  h -> {
                    try (Stream<Path> dirs = Files.list(h)) {
                      return dirs.anyMatch(
                          d -> NodeCgroups.owner(d.getFileName().toString()).isPresent());
                    } catch (IOException e) {
                      return true;
                    }
                  });
      if (anyNode) {
        return;
      }
      for (Path p : Stream.concat(HARD_CODED.stream(), Stream.of(STANDARD_CDI_DIR)).toList()) {
        try (Stream<Path> entries = Files.list(p)) {
          if (entries
              .map(e -> e.getFileName().toString())
              .toList()
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
        + "root = \""
        + c.resolve("root")
        + "\"\n"
        + "state = \""
        + c.resolve("state")
        + "\"\n"
        + "[grpc]\n"
        + "  address = \""
        + containerdSocket()
        + "\"\n"
        + "[ttrpc]\n"
        + "  address = \""
        + containerdSocket()
        + ".ttrpc\"\n"
        + "[debug]\n"
        + "  address = \""
        + dir.resolve("run/containerd-debug.sock")
        + "\"\n"
        + "[plugins]\n"
        + "  [plugins.'io.containerd.internal.v1.opt']\n"
        + "    path = \""
        + c.resolve("opt")
        + "\"\n"
        + "  [plugins.'io.containerd.nri.v1.nri']\n"
        + "    disable = true\n"
        + "  [plugins.'io.containerd.cri.v1.images'.pinned_images]\n"
        + "    sandbox = '"
        + RealNode.PAUSE
        + "'\n"
        + "  [plugins.'io.containerd.cri.v1.runtime']\n"
        + "    # CDI is always on in containerd 2.x; the device-driver writes its specs here\n"
        + "    cdi_spec_dirs = ['"
        + cdiDir()
        + "']\n"
        + "    # no CAP_SYS_RESOURCE in CI's sandbox: an oom_score_adj below containerd's fails\n"
        + "    restrict_oom_score_adj = true\n"
        + "    [plugins.'io.containerd.cri.v1.runtime'.containerd.runtimes.runc.options]\n"
        + "      BinaryName = '"
        + binaries.runc()
        + "'\n"
        + "      Root = '"
        + c.resolve("runc")
        + "'\n"
        + "      SystemdCgroup = false\n"
        + "    [plugins.'io.containerd.cri.v1.runtime'.cni]\n"
        + "      bin_dirs = ['"
        + (own != null ? own.cniPlugins() : dir.resolve("cni/bin"))
        + "']\n"
        + "      conf_dir = '"
        + dir.resolve("cni/net.d")
        + "'\n"
        + (own != null
            ? "      # the standard loopback plugin brings lo up\n"
                + "      use_internal_loopback = false\n"
            : "      # no CNI loopback plugin needed (none is installed): containerd brings lo up\n"
                + "      use_internal_loopback = true\n")
        + "  [plugins.'io.containerd.grpc.v1.cri']\n"
        + "    stream_server_address = '127.0.0.1'\n"
        + "    stream_server_port = '0'\n";
  }

  String kubeletConfig() {
    return "apiVersion: kubelet.config.k8s.io/v1beta1\n"
        + "kind: KubeletConfiguration\n"
        + "# the CI sandbox has cgroup v1, which 1.36 refuses by default\n"
        + "failCgroupV1: false\n"
        + "cgroupDriver: cgroupfs\n"
        + "# the node's own cgroup (NodeCgroups): pods go below it, never into the machine's\n"
        + "cgroupRoot: /"
        + cgroups.name
        + "\n"
        + "failSwapOn: false\n"
        + featureGatesLine(featureGates)
        // on the machine's own network (no namespace of its own) the kubelet would add chains and
        // a DROP rule for localnet to the machine's iptables, which no run removes; they serve
        // other components of a user's node (kube-proxy), which such a node does not run
        + (own == null ? "makeIPTablesUtilChains: false\n" : "")
        + "containerRuntimeEndpoint: unix://"
        + containerdSocket()
        + "\n"
        + "address: "
        + kubeletAddress()
        + "\n"
        + (own != null
            ? "clusterDNS: [" + own.clusterDns() + "]\nclusterDomain: cluster.local\n"
            : "")
        + "port: "
        + kubeletPort
        + "\n"
        + "readOnlyPort: 0\n"
        + "healthzBindAddress: "
        + kubeletAddress()
        + "\n"
        + "healthzPort: "
        + healthzPort
        + "\n"
        + kubeletAuth()
        + "podLogsDir: "
        + podLogsDir()
        + "\n"
        + "# the images are imported, never pulled: never collect them\n"
        + "imageGCHighThresholdPercent: 100\n"
        + "evictionHard: {memory.available: \"100Mi\", nodefs.available: \"1%\","
        + " imagefs.available: \"1%\"}\n";
  }

  /**
   * Who may call the kubelet. A cluster node's, as kubeadm configures it: clients with a
   * certificate of the cluster's CA (the API server's, for logs and exec) or a token the API server
   * vouches for, each allowed what the API server's authorizer allows it ({@code nodes/proxy},
   * {@code nodes/log}, ...). A node beside the suite's API server, which cannot reach it: nobody.
   */
  private String kubeletAuth() {
    if (own == null) {
      return "authentication: {anonymous: {enabled: false}, webhook: {enabled: false}}\n"
          + "authorization: {mode: AlwaysAllow}\n";
    }
    return "authentication:\n"
        + "  anonymous: {enabled: false}\n"
        + "  webhook: {enabled: true}\n"
        + "  x509: {clientCAFile: "
        + clusterCa()
        + "}\n"
        + "authorization: {mode: Webhook}\n";
  }

  /** The cluster's CA in the node's configuration (a node of a {@link MultiNodeCluster}). */
  Path clusterCa() {
    return conf().resolve("ca.crt");
  }

  /** The kubelet's {@code featureGates} line; none for no gates (the version's defaults). */
  static String featureGatesLine(Map<String, Boolean> gates) {
    if (gates.isEmpty()) {
      return "";
    }
    return new TreeMap<>(gates)
        .entrySet().stream()
            .map(g -> g.getKey() + ": " + g.getValue())
            .collect(Collectors.joining(", ", "featureGates: {", "}\n"));
  }
}
