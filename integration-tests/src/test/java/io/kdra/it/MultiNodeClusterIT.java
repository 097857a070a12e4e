package io.kdra.it;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import io.fabric8.kubernetes.api.model.Node;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.PodBuilder;
import io.fabric8.kubernetes.api.model.Service;
import io.fabric8.kubernetes.api.model.ServiceBuilder;
import io.fabric8.kubernetes.client.Config;
import io.fabric8.kubernetes.client.ConfigBuilder;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientBuilder;
import io.fabric8.kubernetes.client.KubernetesClientException;
import io.fabric8.kubernetes.client.dsl.ExecWatch;
import io.fabric8.kubernetes.client.dsl.base.PatchContext;
import io.fabric8.kubernetes.client.dsl.base.PatchType;
import io.kdra.it.controlplane.ClusterAddresses;
import io.kdra.it.controlplane.ClusterApiServer;
import io.kdra.it.nodes.KernelFeatures;
import io.kdra.it.nodes.MultiNodeCluster;
import io.kdra.it.nodes.RealNode;
import io.kdra.it.services.RealPods;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.MethodOrderer;
import org.junit.jupiter.api.Order;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestMethodOrder;

/**
 * The multi-node test cluster ({@link MultiNodeCluster}) does what a user's cluster does: three
 * real nodes, each its own identity; pods reach each other across nodes by pod IP; ClusterIP
 * Services route across nodes, the {@code kubernetes} Service to the API server among them; cluster
 * DNS resolves Service names; a NetworkPolicy is enforced; a pod's log and an exec in it come
 * through the API server from the pod's kubelet, as {@code kubectl logs} and {@code kubectl exec}
 * get them.
 */
@TestMethodOrder(MethodOrderer.OrderAnnotation.class)
class MultiNodeClusterIT {

  private static final int NODES = 3;
  private static final String NAMESPACE = "default";
  private static final Duration POD_TIMEOUT = Duration.ofSeconds(120);

  /**
   * A shell function call that prints {@code /} of {@code <host> <port>} (its arguments) and fails
   * when nothing came: HTTP by hand through busybox nc (Debian's static busybox wget crashes).
   */
  private static final String GET =
      "get() { out=$(busybox printf 'GET / HTTP/1.0\\r\\n\\r\\n' | busybox nc -w 3 \"$1\" \"$2\")"
          + " && [ -n \"$out\" ] && echo \"$out\"; }; get";

  private static MultiNodeCluster cluster;
  private static KubernetesClient client;

  @BeforeAll
  static void startCluster() {
    Assumptions.assumeTrue(
        MultiNodeCluster.available(), "a multi-node cluster needs root, ip and nsenter");
    cluster = MultiNodeCluster.start(NODES, Path.of("target", "mn"));
    client = cluster.client;
    // kube-controller-manager makes the namespace's ServiceAccount, which pods need
    await()
        .atMost(Duration.ofSeconds(60))
        .until(
            () ->
                client.serviceAccounts().inNamespace(NAMESPACE).withName("default").get() != null);
  }

  @AfterAll
  static void stopCluster() {
    if (cluster != null) {
      cluster.dumpTo(Path.of("target", "it-dumps", "multi-node").toAbsolutePath());
      cluster.close();
    }
  }

  @Test
  @Order(1)
  void everyNodeIsReadyUnderItsOwnIdentity() {
    for (int i = 0; i < NODES; i++) {
      String ip = cluster.network.addresses.nodeIp(i);
      Node node = client.nodes().withName(MultiNodeCluster.nodeName(i)).get();
      assertThat(node).as(MultiNodeCluster.nodeName(i)).isNotNull();
      assertThat(node.getStatus().getConditions())
          .anyMatch(c -> c.getType().equals("Ready") && c.getStatus().equals("True"));
      assertThat(node.getStatus().getAddresses())
          .anyMatch(a -> a.getType().equals("InternalIP") && a.getAddress().equals(ip));
    }
    // the Node authorizer and NodeRestriction know node-a as node-a: it may change its own Node,
    // not node-b's
    try (KubernetesClient nodeA = clientAs(ClusterApiServer.nodeUser("node-a"))) {
      // a merge patch without resourceVersion: the kubelet writes its Node's status meanwhile
      nodeA.nodes().withName("node-a").patch(PatchContext.of(PatchType.JSON_MERGE), probe("own"));
      assertThatThrownBy(
              () ->
                  nodeA
                      .nodes()
                      .withName("node-b")
                      .patch(PatchContext.of(PatchType.JSON_MERGE), probe("other")))
          .isInstanceOf(KubernetesClientException.class)
          .satisfies(e -> assertThat(((KubernetesClientException) e).getCode()).isEqualTo(403));
    }
  }

  @Test
  @Order(2)
  void aPodsLogAndAnExecComeThroughTheApiServer() throws Exception {
    String name = "talker";
    client
        .pods()
        .inNamespace(NAMESPACE)
        .resource(
            new PodBuilder(pod(name, "node-b", Map.of()))
                .editSpec()
                .editFirstContainer()
                .withCommand("sh", "-c", "echo said-on-node-b; exec sleep 3600")
                .endContainer()
                .endSpec()
                .build())
        .create();
    Pod running =
        client
            .pods()
            .inNamespace(NAMESPACE)
            .withName(name)
            .waitUntilCondition(
                p ->
                    p != null
                        && p.getStatus() != null
                        && "Running".equals(p.getStatus().getPhase()),
                POD_TIMEOUT.toSeconds(),
                TimeUnit.SECONDS);
    // the line is in the kubelet's log file; then the API server must hand it out (kubectl logs)
    await().atMost(POD_TIMEOUT).until(() -> log(running).contains("said-on-node-b"));
    assertThat(client.pods().inNamespace(NAMESPACE).withName(name).getLog())
        .contains("said-on-node-b");
    // kubectl exec: the API server upgrades the connection to the kubelet's, which streams from
    // containerd
    try (ExecWatch exec =
        client
            .pods()
            .inNamespace(NAMESPACE)
            .withName(name)
            .inContainer("main")
            .redirectingOutput()
            .exec("sh", "-c", "echo exec-answered-$((6 * 7))")) {
      assertThat(exec.exitCode().get(POD_TIMEOUT.toSeconds(), TimeUnit.SECONDS)).isZero();
      // the output ends when the connection does, right after the exit code
      assertThat(new String(exec.getOutput().readAllBytes(), StandardCharsets.UTF_8))
          .contains("exec-answered-42");
    }
  }

  @Test
  @Order(3)
  void aPodReachesAPodOnAnotherNodeByItsAddress() {
    Pod server = runningServer("web-b", "node-b", "hello-from-b");
    Pod client = probe("probe-pod-ip", "node-a", server.getStatus().getPodIP() + " 8080");
    assertThat(log(client)).contains("hello-from-b");
  }

  @Test
  @Order(4)
  void aClusterIpServiceRoutesAcrossNodesAndToTheApiServer() {
    runningServer("web-c", "node-c", "hello-from-c");
    Service service =
        client
            .services()
            .inNamespace(NAMESPACE)
            .resource(
                new ServiceBuilder()
                    .withNewMetadata()
                    .withName("web-c")
                    .endMetadata()
                    .withNewSpec()
                    .withSelector(Map.of("app", "web-c"))
                    .addNewPort()
                    .withPort(80)
                    .withNewTargetPort(8080)
                    .endPort()
                    .endSpec()
                    .build())
            .create();
    Pod viaService = probe("probe-service", "node-a", service.getSpec().getClusterIP() + " 80");
    assertThat(log(viaService)).contains("hello-from-c");
    // the kubernetes Service's ClusterIP reaches the API server: plain HTTP to its TLS port gets
    // Go's answer to that (TLS itself is checked by in-cluster clients: CoreDNS, the policies)
    Pod api =
        probe(
            "probe-kubernetes-service", "node-b", ClusterAddresses.KUBERNETES_SERVICE_IP + " 443");
    assertThat(log(api)).contains("Client sent an HTTP request to an HTTPS server");
  }

  @Test
  @Order(5)
  void serviceNamesResolveThroughClusterDns() {
    cluster.withDns();
    String clusterIp =
        client.services().inNamespace(NAMESPACE).withName("web-c").get().getSpec().getClusterIP();
    Pod resolved =
        run(
            "probe-dns",
            "node-a",
            "for i in $(busybox seq 30); do"
                + " busybox nslookup web-c.default.svc.cluster.local && break; sleep 1; done; "
                + GET
                + " web-c 80");
    assertThat(log(resolved)).contains(clusterIp).contains("hello-from-c");
  }

  @Test
  @Order(6)
  void aNetworkPolicyIsEnforced() {
    Assumptions.assumeTrue(
        KernelFeatures.policyQueue() != KernelFeatures.PolicyQueue.NONE,
        "kube-network-policies needs a netfilter queue: this kernel has neither"
            + " CONFIG_NFT_QUEUE nor CONFIG_NETFILTER_XT_TARGET_NFQUEUE");
    cluster.withNetworkPolicies();
    Pod guarded = runningServer("guarded", "node-b", "guarded-text");
    String target = guarded.getStatus().getPodIP() + " 8080";
    // open before the policy
    assertThat(log(probe("stranger-before", "node-a", target))).contains("guarded-text");
    client
        .network()
        .networkPolicies()
        .inNamespace(NAMESPACE)
        .resource(
            new io.fabric8.kubernetes.api.model.networking.v1.NetworkPolicyBuilder()
                .withNewMetadata()
                .withName("guarded")
                .endMetadata()
                .withNewSpec()
                .withNewPodSelector()
                .withMatchLabels(Map.of("app", "guarded"))
                .endPodSelector()
                .withPolicyTypes("Ingress")
                .addNewIngress()
                .addNewFrom()
                .withNewPodSelector()
                .withMatchLabels(Map.of("role", "friend"))
                .endPodSelector()
                .endFrom()
                .endIngress()
                .endSpec()
                .build())
        .create();
    // a pod the policy does not admit: refused once the policy is in force (within a minute)
    Pod stranger =
        run(
            "stranger-after",
            "node-a",
            "for i in $(busybox seq 60); do "
                + GET
                + " "
                + target
                + " || { echo refused; exit 0; }; sleep 1; done; exit 1");
    assertThat(log(stranger)).contains("refused");
    // the policy's friend still gets in
    Pod friend =
        client
            .pods()
            .inNamespace(NAMESPACE)
            .resource(
                new PodBuilder(pod("friend", "node-c", Map.of("role", "friend")))
                    .editSpec()
                    .withRestartPolicy("Never")
                    .editFirstContainer()
                    .withCommand(
                        "sh",
                        "-c",
                        "for i in $(busybox seq 30); do "
                            + GET
                            + " "
                            + target
                            + " && exit 0; sleep 1; done; exit 1")
                    .endContainer()
                    .endSpec()
                    .build())
            .create();
    Pod done = awaitFinished(friend.getMetadata().getName());
    assertThat(done.getStatus().getPhase()).as(log(done)).isEqualTo("Succeeded");
    assertThat(log(done)).contains("guarded-text");
  }

  private static KubernetesClient clientAs(String user) {
    String token =
        cluster
            .api
            .kubeconfig(user)
            .lines()
            .filter(l -> l.trim().startsWith("token: "))
            .map(l -> l.trim().substring("token: ".length()))
            .findFirst()
            .orElseThrow();
    Config c = new ConfigBuilder(cluster.api.admin).withOauthToken(token).build();
    return new KubernetesClientBuilder().withConfig(c).build();
  }

  /** A busybox httpd on {@code node} that serves {@code text}; returns it Running and Ready. */
  private static Pod runningServer(String name, String node, String text) {
    client
        .pods()
        .inNamespace(NAMESPACE)
        .resource(
            new PodBuilder(pod(name, node, Map.of("app", name)))
                .editSpec()
                .editFirstContainer()
                .withCommand(
                    "sh",
                    "-c",
                    "mkdir -p /tmp/w && echo "
                        + text
                        + " > /tmp/w/index.html && exec busybox httpd -f -p 8080 -h /tmp/w")
                .addNewPort()
                .withContainerPort(8080)
                .endPort()
                .withNewReadinessProbe()
                .withNewTcpSocket()
                .withNewPort(8080)
                .endTcpSocket()
                .withPeriodSeconds(1)
                .endReadinessProbe()
                .endContainer()
                .endSpec()
                .build())
        .create();
    return client
        .pods()
        .inNamespace(NAMESPACE)
        .withName(name)
        .waitUntilCondition(
            p ->
                p != null
                    && p.getStatus() != null
                    && p.getStatus().getConditions() != null
                    && p.getStatus().getConditions().stream()
                        .anyMatch(c -> c.getType().equals("Ready") && c.getStatus().equals("True")),
            POD_TIMEOUT.toSeconds(),
            java.util.concurrent.TimeUnit.SECONDS);
  }

  /**
   * A pod on {@code node} that fetches {@code /} from {@code target} ({@code <host> <port>}),
   * retrying for a while; returns it Succeeded.
   */
  private static Pod probe(String name, String node, String target) {
    return run(
        name,
        node,
        "for i in $(busybox seq 30); do "
            + GET
            + " "
            + target
            + " && exit 0; sleep 1; done; exit 1");
  }

  /** A pod on {@code node} that runs {@code script} once; returns it when it Succeeded. */
  private static Pod run(String name, String node, String script) {
    client
        .pods()
        .inNamespace(NAMESPACE)
        .resource(
            new PodBuilder(pod(name, node, Map.of()))
                .editSpec()
                .withRestartPolicy("Never")
                .editFirstContainer()
                .withCommand("sh", "-c", script)
                .endContainer()
                .endSpec()
                .build())
        .create();
    Pod done = awaitFinished(name);
    assertThat(done.getStatus().getPhase())
        .as("pod %s on %s: %s", name, node, log(done))
        .isEqualTo("Succeeded");
    return done;
  }

  private static Pod awaitFinished(String name) {
    return RealPods.awaitFinished(client, NAMESPACE, name);
  }

  private static String log(Pod pod) {
    return String.join("\n", cluster.node(pod.getSpec().getNodeName()).containerLog(pod, "main"));
  }

  private static Pod pod(String name, String node, Map<String, String> labels) {
    return new PodBuilder()
        .withNewMetadata()
        .withName(name)
        .withLabels(labels)
        .endMetadata()
        .withNewSpec()
        .withNodeName(node)
        .withAutomountServiceAccountToken(false)
        .withTerminationGracePeriodSeconds(1L)
        .addNewContainer()
        .withName("main")
        .withImage(RealNode.BUSYBOX)
        .withImagePullPolicy("Never")
        .endContainer()
        .endSpec()
        .build();
  }

  private static String probe(String value) {
    return "{\"metadata\":{\"labels\":{\"kdra.io/probe\":\"" + value + "\"}}}";
  }
}
