package io.kdra.it.controlplane;

import io.fabric8.kubernetes.api.model.rbac.ClusterRoleBindingBuilder;
import io.fabric8.kubernetes.client.Config;
import io.fabric8.kubernetes.client.ConfigBuilder;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientBuilder;
import io.kdra.it.support.Leftovers;
import io.kdra.it.support.ServiceProcess;
import io.kdra.it.support.TestFiles;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.SecureRandom;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HexFormat;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;

/**
 * The multi-node cluster's etcd and kube-apiserver, started by the test itself (not kube-api-test,
 * whose API server authorizes with RBAC only and serves a self-signed certificate for loopback):
 * the API server listens on the host's end of the cluster's bridge, authorizes with {@code
 * Node,RBAC} and admits with {@code NodeRestriction} (and the default plugins, Pod Security and
 * ServiceAccount among them), and knows every client by a static token: the admin (system:masters),
 * each node ({@code system:node:<name>} in {@code system:nodes}: the Node authorizer's identity),
 * kube-proxy, kube-scheduler and kube-controller-manager. etcd stays on loopback. It reaches the
 * kubelets (logs, exec, port-forward) as kubeadm's does ({@link #kubeletClientFlags}).
 *
 * <p>Its directory has a name {@link ControlPlaneProcesses}' reaper deletes, and both processes are
 * recorded there, so that a killed JVM's are ended by the next run.
 */
public final class ClusterApiServer implements AutoCloseable {

  public static final String ADMIN = "kdra-admin";
  public static final String KUBE_PROXY = "system:kube-proxy";

  private static final Duration READY_TIMEOUT = Duration.ofSeconds(120);

  public final Path dir;
  final Path binaries;
  public final Config admin;
  private final Map<String, String> tokens;
  private final List<Process> processes;

  private ClusterApiServer(
      Path dir, Path binaries, Config admin, Map<String, String> tokens, List<Process> processes) {
    this.dir = dir;
    this.binaries = binaries;
    this.admin = admin;
    this.tokens = tokens;
    this.processes = processes;
  }

  /** The CA every client trusts. */
  public Path caFile() {
    return dir.resolve(ClusterPki.CA_CERT);
  }

  public KubernetesClient client() {
    return new KubernetesClientBuilder().withConfig(admin).build();
  }

  /** A kubeconfig (its token inside) that authenticates as {@code user}, one of the known ones. */
  public String kubeconfig(String user) {
    String token = tokens.get(user);
    if (token == null) {
      throw new IllegalArgumentException("the API server knows no token of " + user);
    }
    return Kubeconfigs.kubeconfig(admin, caFile(), user, token);
  }

  /** The user name of node {@code node} (what the Node authorizer expects). */
  public static String nodeUser(String node) {
    return "system:node:" + node;
  }

  /**
   * Starts etcd and kube-apiserver on {@code address} (which must exist on this machine) and
   * returns once the API server is ready.
   *
   * @param nodes the names of the nodes that will join: each gets a token of its own
   */
  public static ClusterApiServer start(
      Path binaries, String address, List<String> nodes, Path logDir) {
    Path dir;
    try {
      dir = ControlPlaneProcesses.privateDirectory();
      Files.createDirectories(logDir);
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
    ClusterPki.write(
        dir,
        List.of(address, "127.0.0.1", ClusterAddresses.KUBERNETES_SERVICE_IP),
        List.of(
            "kubernetes",
            "kubernetes.default",
            "kubernetes.default.svc",
            "kubernetes.default.svc.cluster.local"));
    // kube-scheduler's and kube-controller-manager's, then the cluster's own
    Path tokenFile = UpstreamControllers.writeTokenFile(dir);
    Map<String, String> tokens = new LinkedHashMap<>();
    StringBuilder csv = new StringBuilder();
    csv.append(tokenLine(tokens, ADMIN, "system:masters"));
    csv.append(tokenLine(tokens, KUBE_PROXY, null));
    nodes.forEach(n -> csv.append(tokenLine(tokens, nodeUser(n), "system:nodes")));
    try {
      Files.writeString(tokenFile, csv, java.nio.file.StandardOpenOption.APPEND);
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
    int etcdPort = ServiceProcess.freePort();
    int peerPort = ServiceProcess.freePort();
    int apiPort = ServiceProcess.freePort();
    List<Process> processes = new ArrayList<>();
    Config admin =
        new ConfigBuilder()
            .withMasterUrl("https://" + address + ":" + apiPort)
            .withCaCertFile(dir.resolve(ClusterPki.CA_CERT).toString())
            .withOauthToken(tokens.get(ADMIN))
            .withNamespace("default")
            .build();
    ClusterApiServer server = new ClusterApiServer(dir, binaries, admin, tokens, processes);
    try {
      String etcdUrl = "http://127.0.0.1:" + etcdPort;
      String peerUrl = "http://127.0.0.1:" + peerPort;
      server.launch(
          logDir.resolve("etcd.log"),
          List.of(
              binaries.resolve("etcd-server").toString(),
              "--name=kdra",
              "--data-dir=" + dir.resolve("etcd"),
              "--listen-client-urls=" + etcdUrl,
              "--advertise-client-urls=" + etcdUrl,
              "--listen-peer-urls=" + peerUrl,
              "--initial-advertise-peer-urls=" + peerUrl,
              "--initial-cluster=kdra=" + peerUrl,
              "--unsafe-no-fsync=true"));
      List<String> args =
          new ArrayList<>(
              List.of(
                  binaries.resolve("kube-apiserver").toString(),
                  "--bind-address=" + address,
                  "--advertise-address=" + address,
                  "--secure-port=" + apiPort,
                  "--etcd-servers=" + etcdUrl,
                  "--cert-dir=" + dir.resolve("certs"),
                  "--tls-cert-file=" + dir.resolve(ClusterPki.SERVING_CERT),
                  "--tls-private-key-file=" + dir.resolve(ClusterPki.SERVING_KEY),
                  "--client-ca-file=" + dir.resolve(ClusterPki.CA_CERT),
                  "--token-auth-file=" + tokenFile,
                  "--authorization-mode=Node,RBAC",
                  "--enable-admission-plugins=NodeRestriction",
                  "--service-account-issuer=https://kubernetes.default.svc",
                  "--service-account-key-file=" + dir.resolve(ClusterPki.SERVICE_ACCOUNT_KEY),
                  "--service-account-signing-key-file="
                      + dir.resolve(ClusterPki.SERVICE_ACCOUNT_KEY),
                  "--service-cluster-ip-range=" + ClusterAddresses.SERVICE_CIDR,
                  "--allow-privileged=true",
                  // the API server runs on the host, where no kube-proxy routes ClusterIPs (they
                  // exist only in the nodes' namespaces, one range for every cluster on the
                  // machine): it calls webhooks (the chart's opaque-config webhook) at their
                  // endpoints' pod IPs instead
                  "--enable-aggregator-routing=true",
                  "--v=1"));
      args.addAll(kubeletClientFlags(dir));
      WorkloadApi.apiServerFlags(ControlPlane.VERSION).forEach((f, v) -> args.add(f + "=" + v));
      server.launch(logDir.resolve("kube-apiserver.log"), args);
      server.awaitReady();
      server.allowKubeletApi();
    } catch (RuntimeException e) {
      server.close();
      throw e;
    }
    return server;
  }

  /**
   * How the API server calls the kubelets, as kubeadm (1.37) starts it: with a client certificate
   * of the cluster's CA, which each kubelet trusts ({@code authentication.x509.clientCAFile}), at
   * the node's InternalIP first (the Hostname, the node's name, resolves nowhere); kubeadm sets no
   * {@code --kubelet-certificate-authority}, as the kubelets serve self-signed certificates.
   */
  static List<String> kubeletClientFlags(Path dir) {
    return List.of(
        "--kubelet-client-certificate=" + dir.resolve(ClusterPki.KUBELET_CLIENT_CERT),
        "--kubelet-client-key=" + dir.resolve(ClusterPki.KUBELET_CLIENT_KEY),
        "--kubelet-preferred-address-types=InternalIP,ExternalIP,Hostname");
  }

  /**
   * kubeadm's {@code kubeadm:apiserver-kubelet-client} ClusterRoleBinding: the kubelets ask the API
   * server (webhook authorization) whether its client may call them.
   */
  private void allowKubeletApi() {
    try (KubernetesClient c = client()) {
      c.rbac()
          .clusterRoleBindings()
          .resource(
              new ClusterRoleBindingBuilder()
                  .withNewMetadata()
                  .withName("kubeadm:apiserver-kubelet-client")
                  .endMetadata()
                  .withNewRoleRef()
                  .withApiGroup("rbac.authorization.k8s.io")
                  .withKind("ClusterRole")
                  .withName("system:kubelet-api-admin")
                  .endRoleRef()
                  .addNewSubject()
                  .withApiGroup("rbac.authorization.k8s.io")
                  .withKind("User")
                  .withName(ClusterPki.KUBELET_CLIENT_USER)
                  .endSubject()
                  .build())
          .create();
    }
  }

  private static String tokenLine(Map<String, String> tokens, String user, String group) {
    byte[] token = new byte[24];
    new SecureRandom().nextBytes(token);
    String t = HexFormat.of().formatHex(token);
    tokens.put(user, t);
    return t + "," + user + "," + user + (group == null ? "" : ",\"" + group + "\"") + "\n";
  }

  private void launch(Path log, List<String> command) {
    try {
      Process p =
          new ProcessBuilder(command)
              .redirectErrorStream(true)
              .redirectOutput(ProcessBuilder.Redirect.appendTo(log.toFile()))
              .start();
      processes.add(p);
      Leftovers.entry(p.toHandle(), List.of(dir))
          .ifPresent(e -> ControlPlaneProcesses.leftovers().record(List.of(e)));
    } catch (IOException e) {
      throw new UncheckedIOException("starting " + command.get(0), e);
    }
  }

  private void awaitReady() {
    long deadline = System.nanoTime() + READY_TIMEOUT.toNanos();
    Exception last = null;
    try (KubernetesClient c = client()) {
      while (System.nanoTime() < deadline) {
        for (Process p : processes) {
          if (!p.isAlive()) {
            throw new IllegalStateException(
                p.info().command().orElse("?") + " exited with " + p.exitValue() + "; see its log");
          }
        }
        try {
          String ready = c.raw("/readyz");
          if ("ok".equals(ready)) {
            return;
          }
        } catch (RuntimeException e) {
          last = e;
        }
        ServiceProcess.sleep(250);
      }
    }
    throw new IllegalStateException(
        "the multi-node API server is not ready after " + READY_TIMEOUT, last);
  }

  @Override
  public void close() {
    // the API server before etcd
    for (int i = processes.size() - 1; i >= 0; i--) {
      Process p = processes.get(i);
      p.destroy();
      try {
        if (!p.waitFor(15, TimeUnit.SECONDS)) {
          p.destroyForcibly().waitFor(10, TimeUnit.SECONDS);
        }
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
        p.destroyForcibly();
      }
    }
    TestFiles.deleteRecursively(dir);
  }
}
