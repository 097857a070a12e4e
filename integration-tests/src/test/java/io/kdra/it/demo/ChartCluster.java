package io.kdra.it.demo;

import io.fabric8.kubernetes.api.model.ConfigMapBuilder;
import io.fabric8.kubernetes.api.model.NamespaceBuilder;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.PodBuilder;
import io.fabric8.kubernetes.api.model.Service;
import io.fabric8.kubernetes.api.model.apps.Deployment;
import io.fabric8.kubernetes.api.model.resource.v1.ResourceClaim;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.kdra.it.chart.HelmRelease;
import io.kdra.it.controlplane.ClusterApiServer;
import io.kdra.it.controlplane.ControlPlane;
import io.kdra.it.nodes.KernelFeatures;
import io.kdra.it.nodes.MultiNodeCluster;
import io.kdra.it.nodes.NodeRegistration;
import io.kdra.it.nodes.RealNode;
import io.kdra.it.nodes.SimulatedNode;
import io.kdra.it.nodes.TestKubelet;
import io.kdra.it.services.BuiltImages;
import io.kdra.it.services.Dra;
import io.kdra.it.services.RealPods;
import io.kdra.it.support.OwnerOnly;
import io.kdra.it.support.ServiceProcess;
import io.kdra.it.support.TestFiles;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;

/**
 * {@code bin/demo --cluster} (root only): the chart on a cluster shaped like a user's ({@link
 * MultiNodeCluster}: real nodes node-a and node-b, each with its kubelet, containerd and
 * kube-proxy, a pod network, CoreDNS, NetworkPolicy enforced by kube-network-policies, Pod Security
 * admission), installed as docs/user/install.md says, with its defaults (two publishers, two
 * controllers, TLS, the publisher's NetworkPolicy) and only what a user of simulated devices sets:
 * the images' registry (the build's images, imported into each node's containerd as a user loads
 * locally built images), the computeclass-bridge (the demo's ComputeClass), and the simulated
 * inventory per node kind. The nodes carry GKE's accelerator label; release {@code kdra} runs the
 * L4 nodes' driver, a driver-only second release {@code kdra-a100} the A100 nodes' (install.md's
 * second release), each selecting its nodes by that label and reading its inventory from a
 * ConfigMap.
 */
final class ChartCluster implements DemoCluster {

  static final String RELEASE = "kdra";
  static final String A100_RELEASE = "kdra-a100";
  static final String NAMESPACE = "kdra-system";
  static final String DRIVER = "gpu.kdra.io";
  static final String PUBLISHER = RELEASE + "-slice-publisher";
  static final int GRPC_PORT = 9000;

  /** The build names its images {@code localhost/kdra/<service>:<tag>} (podman's local name). */
  private static final String REGISTRY = "localhost";

  /** GKE's node label for its GPU model, which the chart's default driver affinity accepts. */
  private static final String ACCELERATOR = "cloud.google.com/gke-accelerator";

  private static final Map<String, String> ACCELERATORS =
      Map.of("node-a", "nvidia-l4", "node-b", "nvidia-tesla-a100");

  /** Eight JVMs (two of each controller, a driver per node) starting on 2 cores. */
  private static final long ROLLOUT_TIMEOUT_MS = 300_000;

  private static final String DNS_CHECK = "dns-check";

  private final DemoSteps steps;
  private final Path kubeconfigFile;

  /** The values files and Helm's kubeconfig; removed when the demo stops. */
  private final Path dir = Path.of("target", "demo-cluster").toAbsolutePath();

  /** The nodes' directories (short: their unix sockets must fit 107 bytes). */
  private final Path nodesDir = Path.of("target", "dmc");

  private MultiNodeCluster cluster;
  private boolean stopped;

  ChartCluster(DemoSteps steps, Path kubeconfigFile) {
    this.steps = steps;
    this.kubeconfigFile = kubeconfigFile;
  }

  @Override
  public void start() {
    List<SimulatedNode> nodes = DemoNodes.withDeviceNodes();
    List<Path> images = images();
    steps.step(
        "starting a cluster of real nodes node-a and node-b (kubelet, containerd and kube-proxy"
            + " each), a pod network, CoreDNS, kube-network-policies and Pod Security admission");
    MultiNodeCluster started = MultiNodeCluster.start(nodes.size(), nodesDir);
    synchronized (this) {
      cluster = started;
      if (stopped) {
        cluster.close();
        throw new IllegalStateException("stopped while starting");
      }
    }
    // one after the other: the imports' disk writes beside the API server's first writes made
    // those time out on a loaded machine
    steps.step("CoreDNS");
    cluster.withDns();
    steps.step("the images of this build into each node's containerd");
    for (RealNode node : cluster.nodes) {
      for (int i = 0; i < BuiltImages.SERVICES.size(); i++) {
        node.importImage(images.get(i), REGISTRY + "/kdra/" + BuiltImages.SERVICES.get(i));
      }
    }
    steps.step("kube-network-policies");
    if (KernelFeatures.policyQueue() != KernelFeatures.PolicyQueue.NONE) {
      cluster.withNetworkPolicies();
    } else {
      steps.step(
          "no NetworkPolicy enforcement: this kernel has no netfilter queue (CONFIG_NFT_QUEUE or"
              + " CONFIG_NETFILTER_XT_TARGET_NFQUEUE) for kube-network-policies");
    }
    OwnerOnly.write(kubeconfigFile, cluster.api.kubeconfig(ClusterApiServer.ADMIN));
    prepareAsTheInstallGuideSays(nodes);
    steps.step(
        "helm install "
            + RELEASE
            + " (the chart's defaults; node-a's L4s) and "
            + A100_RELEASE
            + " (a driver-only release for node-b's A100) in "
            + NAMESPACE);
    helm(RELEASE, mainValues());
    helm(A100_RELEASE, a100Values());
    steps.step("waiting for two publishers, two controllers, two bridges, the drivers Ready");
    steps.await(
        "the chart's pods Ready and node-a's 2 and node-b's 1 devices published",
        ROLLOUT_TIMEOUT_MS,
        logs(),
        () ->
            readyReplicas(PUBLISHER) == 2
                && readyReplicas(RELEASE + "-claim-controller") == 2
                && readyReplicas(RELEASE + "-computeclass-bridge") == 2
                && Dra.publishedDevices(client(), DRIVER, "node-a") == 2
                && Dra.publishedDevices(client(), DRIVER, "node-b") == 1);
    steps.step("chart ready");
  }

  /** The build's images, or why there are none. */
  private static List<Path> images() {
    List<Path> images = BuiltImages.SERVICES.stream().map(BuiltImages::archive).toList();
    for (Path image : images) {
      if (!Files.isRegularFile(image)) {
        throw new IllegalStateException(
            image
                + " is missing: bin/demo --cluster builds the images when one is missing (or"
                + " ./mvnw -pl slice-publisher,device-driver,claim-controller,computeclass-bridge"
                + " -am package -DskipTests -Dkdra.images=true)");
      }
    }
    try {
      for (String service : BuiltImages.SERVICES) {
        String expected = REGISTRY + "/kdra/" + service + ":" + BuiltImages.appVersion();
        if (!BuiltImages.reference(service).equals(expected)) {
          throw new IllegalStateException(
              BuiltImages.archive(service)
                  + " is "
                  + BuiltImages.reference(service)
                  + ", not the chart's "
                  + expected
                  + ": rebuild the images");
        }
      }
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
    return images;
  }

  /**
   * install.md's steps before {@code helm install}: the nodes labelled (here GKE's accelerator
   * label), the release's namespace at Pod Security level privileged (the driver's host paths), the
   * workloads' namespace at baseline and selected by the bridge, the inventories as ConfigMaps.
   */
  private void prepareAsTheInstallGuideSays(List<SimulatedNode> nodes) {
    for (RealNode node : cluster.nodes) {
      NodeRegistration.onConflictRetry(
          () ->
              client()
                  .nodes()
                  .withName(node.name)
                  .edit(
                      n -> {
                        n.getMetadata().getLabels().put(ACCELERATOR, ACCELERATORS.get(node.name));
                        return n;
                      }));
    }
    createNamespace(NAMESPACE, Map.of("pod-security.kubernetes.io/enforce", "privileged"));
    createNamespace(
        Demo.NAMESPACE,
        Map.of(
            "pod-security.kubernetes.io/enforce", "baseline",
            "computeclass.kdra.io/templates", "enabled"));
    for (SimulatedNode node : nodes) {
      client()
          .configMaps()
          .inNamespace(NAMESPACE)
          .resource(
              new ConfigMapBuilder()
                  .withNewMetadata()
                  .withName(inventoryConfigMap(node.name()))
                  .withNamespace(NAMESPACE)
                  .endMetadata()
                  .addToData("inventory.yaml", node.inventory())
                  .build())
          .create();
    }
  }

  private static String inventoryConfigMap(String node) {
    return "inventory-" + ACCELERATORS.get(node);
  }

  /** The first release: everything but node-b's driver. */
  private static String mainValues() {
    return """
        imageRegistry: %s
        deviceDriver:
          nodeSelector: {%s: %s}
          inventory: {configMap: %s, key: inventory.yaml}
        slicePublisher:
          auth:
            extraServiceAccounts: ["%s:%s-device-driver"]
        computeClassBridge:
          enabled: true
          installComputeClassCRD: true
        """
        .formatted(
            REGISTRY,
            ACCELERATOR,
            ACCELERATORS.get("node-a"),
            inventoryConfigMap("node-a"),
            NAMESPACE,
            A100_RELEASE);
  }

  /** The driver-only second release for the A100 nodes, trusting the first's publisher. */
  private static String a100Values() {
    return """
        imageRegistry: %s
        deviceDriver:
          nodeSelector: {%s: %s}
          inventory: {configMap: %s, key: inventory.yaml}
          publisherCA: {secret: %s-tls}
          config:
            publisher: {address: "%s.%s.svc:%d"}
        slicePublisher: {enabled: false}
        claimController: {enabled: false}
        deviceClasses: {gpu: {enabled: false}, tpu: {enabled: false}}
        admission: {opaqueConfigPolicy: {enabled: false}}
        """
        .formatted(
            REGISTRY,
            ACCELERATOR,
            ACCELERATORS.get("node-b"),
            inventoryConfigMap("node-b"),
            PUBLISHER,
            PUBLISHER,
            NAMESPACE,
            GRPC_PORT);
  }

  private void helm(String release, String values) {
    Path file = dir.resolve(release + "-values.yaml");
    TestFiles.write(file, values);
    HelmRelease.run(
        "install-no-wait",
        ServiceProcess.moduleDir("helm").resolve("kdra"),
        release,
        NAMESPACE,
        kubeconfigFile,
        List.of(file));
  }

  private void createNamespace(String name, Map<String, String> labels) {
    client()
        .namespaces()
        .resource(
            new NamespaceBuilder()
                .withNewMetadata()
                .withName(name)
                .addToLabels(labels)
                .endMetadata()
                .build())
        .create();
  }

  private int readyReplicas(String deployment) {
    Deployment d = client().apps().deployments().inNamespace(NAMESPACE).withName(deployment).get();
    Integer ready = d == null || d.getStatus() == null ? null : d.getStatus().getReadyReplicas();
    return ready == null ? 0 : ready;
  }

  @Override
  public KubernetesClient client() {
    return cluster.client;
  }

  @Override
  public boolean real() {
    return true;
  }

  @Override
  public long settleTimeoutMs() {
    return RealPods.POD_TIMEOUT.toMillis();
  }

  @Override
  public String logs() {
    return "the nodes' logs (kubelet, containerd, kube-proxy) in integration-tests/"
        + nodesDir
        + "/<node>/logs/, the pods' in pod-logs/ beside them";
  }

  @Override
  public TestKubelet testKubelet(String node) {
    return null;
  }

  @Override
  public List<String> containerLog(Pod pod, String container) {
    return cluster.node(pod.getSpec().getNodeName()).containerLog(pod, container);
  }

  @Override
  public Path cdiSpec(String node, ResourceClaim claim) {
    return RealPods.spec(cluster.node(node).cdiDir(), DRIVER, claim);
  }

  @Override
  public void printAfterReport() {
    List<DemoReport.ChartPod> pods = new ArrayList<>();
    for (Pod p : client().pods().inNamespace(NAMESPACE).list().getItems()) {
      pods.add(
          new DemoReport.ChartPod(
              p.getMetadata().getName(), p.getSpec().getNodeName(), p.getStatus().getPodIP()));
    }
    pods.sort(java.util.Comparator.comparing(DemoReport.ChartPod::name));
    DemoReport.chartPods(pods).forEach(System.out::println);
    List<DemoReport.ClusterService> services = new ArrayList<>();
    for (Service s : client().services().inNamespace(NAMESPACE).list().getItems()) {
      services.add(
          new DemoReport.ClusterService(
              s.getMetadata().getName() + "." + NAMESPACE + ".svc",
              s.getSpec().getClusterIP(),
              String.join(
                  ", ",
                  s.getSpec().getPorts().stream()
                      .map(port -> port.getPort() + "/" + port.getProtocol())
                      .toList())));
    }
    DemoReport.clusterServices(services).forEach(System.out::println);
    System.out.println();
    fromInsideAPod().forEach(System.out::println);
    System.out.println();
    kubectlDraFromOutside();
    System.out.println(
        "Node logs (kubelet, containerd, kube-proxy) and pod logs: "
            + nodesDir.toAbsolutePath()
            + "/<node>/{logs,pod-logs}");
    System.out.println();
  }

  /**
   * A busybox pod in the workloads' namespace looks the publisher's Service up through cluster DNS
   * and tries its inventory gRPC port, which the chart's NetworkPolicy keeps for the drivers.
   */
  private List<String> fromInsideAPod() {
    String name = PUBLISHER + "." + NAMESPACE + ".svc.cluster.local";
    Pod pod =
        new PodBuilder()
            .withNewMetadata()
            .withName(DNS_CHECK)
            .withNamespace(Demo.NAMESPACE)
            .endMetadata()
            .withNewSpec()
            .withRestartPolicy("Never")
            .withTerminationGracePeriodSeconds(1L)
            .addNewContainer()
            .withName("main")
            .withImage(RealNode.BUSYBOX)
            .withImagePullPolicy("Never")
            .withCommand(
                "sh",
                "-c",
                "for i in $(busybox seq 10); do busybox nslookup "
                    + name
                    + " && break; sleep 1; done; if busybox nc -w 3 "
                    + name
                    + " "
                    + GRPC_PORT
                    + " </dev/null; then echo "
                    + DemoReport.PORT_OPEN
                    + "; else echo "
                    + DemoReport.PORT_CLOSED
                    + "; fi")
            .endContainer()
            .endSpec()
            .build();
    client().resource(pod).create();
    Pod done = RealPods.awaitFinished(client(), Demo.NAMESPACE, DNS_CHECK);
    return DemoReport.fromInside(
        Demo.NAMESPACE + "/" + DNS_CHECK,
        done.getSpec().getNodeName(),
        PUBLISHER,
        GRPC_PORT,
        containerLog(done, "main"));
  }

  /**
   * {@code bin/kubectl-dra} (the plugin kubectl runs as {@code kubectl dra}) with the kubeconfig.
   */
  private void kubectlDraFromOutside() {
    System.out.println("kubectl dra, from outside the cluster with the kubeconfig below:");
    List<List<String>> commands = new ArrayList<>();
    commands.add(List.of("devices"));
    for (Pod p : client().pods().inNamespace(Demo.NAMESPACE).list().getItems()) {
      if (p.getSpec().getNodeName() == null) {
        commands.add(List.of("why", "pod/" + p.getMetadata().getName(), "-n", Demo.NAMESPACE));
        break;
      }
    }
    for (List<String> args : commands) {
      DemoReport.command("kubectl dra " + String.join(" ", args), kubectlDra(args))
          .forEach(System.out::println);
    }
    System.out.println();
  }

  private List<String> kubectlDra(List<String> args) {
    List<String> command = new ArrayList<>();
    command.add(ServiceProcess.moduleDir("bin").resolve("kubectl-dra").toString());
    command.addAll(args);
    try {
      // as a user runs it after the export the report prints
      ProcessBuilder builder = new ProcessBuilder(command).redirectErrorStream(true);
      builder.environment().put("KUBECONFIG", kubeconfigFile.toString());
      Process p = builder.start();
      String out = new String(p.getInputStream().readAllBytes());
      if (!p.waitFor(60, TimeUnit.SECONDS)) {
        p.destroyForcibly();
      }
      return out.lines().toList();
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new IllegalStateException(e);
    }
  }

  @Override
  public void printAccess(boolean once) {
    Path kubectl = ControlPlane.kubectl();
    DemoReport.clusterKubectl(
            once,
            kubeconfigFile,
            Files.isExecutable(kubectl) ? kubectl : null,
            ControlPlane.VERSION,
            ServiceProcess.moduleDir("bin"))
        .forEach(System.out::println);
    System.out.println();
  }

  /**
   * No uninstall: the cluster goes whole (nodes with every process in their cgroups, controllers,
   * API server, etcd, bridge and namespaces); then what the demo wrote, but for the nodes' logs.
   */
  @Override
  public void stop() {
    MultiNodeCluster running;
    synchronized (this) {
      if (stopped) {
        return;
      }
      stopped = true;
      running = cluster;
    }
    if (running != null) {
      try {
        running.close();
        steps.step("cluster stopped");
      } catch (RuntimeException e) {
        System.out.println("[demo] stopping the cluster: " + e);
      }
    }
    DemoNodes.removeAllButLogs(nodesDir.toAbsolutePath());
    TestFiles.deleteRecursively(dir);
    try {
      Files.deleteIfExists(kubeconfigFile);
    } catch (IOException e) {
      // best effort
    }
  }
}
