package io.kdra.it.demo;

import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.resource.v1.ResourceClaim;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.kdra.it.controlplane.ControlPlane;
import io.kdra.it.karpenter.ScaleOutScenario;
import io.kdra.it.nodes.RealNode;
import io.kdra.it.nodes.TestKubelet;
import io.kdra.it.services.Dra;
import io.kdra.it.services.RealPods;
import io.kdra.it.services.Stack;
import io.kdra.it.support.OwnerOnly;
import io.kdra.it.support.TestFiles;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

/**
 * The harness's control plane (kube-apiserver, etcd, kube-controller-manager, kube-scheduler), the
 * four services as processes and two nodes ({@link DemoNodes}): {@link RealNode}s (the real kubelet
 * and containerd) as root, else (or with {@code --test-kubelet}) Node objects with a {@link
 * TestKubelet} each. {@code bin/demo} without {@code --cluster}.
 */
final class ProcessCluster implements DemoCluster {

  private static final long SETTLE_TIMEOUT_MS = 90_000;

  /** A real node's pod also waits for its sandbox and container: as {@link RealPods} does. */
  private static final long REAL_SETTLE_TIMEOUT_MS = RealPods.POD_TIMEOUT.toMillis();

  private final DemoSteps steps;
  private final Path kubeconfigFile;
  private final boolean real;
  private final boolean writeKubeconfig;
  private final boolean scaleOut;
  private ControlPlane.Running controlPlane;
  private Stack stack;
  private boolean stopped;

  /**
   * The demo's two nodes ({@link DemoNodes}).
   *
   * @param writeKubeconfig write the admin kubeconfig as soon as the API server is up (not with
   *     {@code --once}: it would be gone before anyone could use it)
   */
  ProcessCluster(DemoSteps steps, Path kubeconfigFile, boolean real, boolean writeKubeconfig) {
    this(steps, kubeconfigFile, real, writeKubeconfig, false);
  }

  private ProcessCluster(
      DemoSteps steps,
      Path kubeconfigFile,
      boolean real,
      boolean writeKubeconfig,
      boolean scaleOut) {
    this.steps = steps;
    this.kubeconfigFile = kubeconfigFile;
    this.real = real;
    this.writeKubeconfig = writeKubeconfig;
    this.scaleOut = scaleOut;
  }

  /**
   * No node at first, and the bridge with scale-out on ({@link
   * ScaleOutScenario#BRIDGE_PROPERTIES}): the nodes are Karpenter's, each a Node object with a test
   * kubelet ({@link ScaleOutScene}).
   */
  static ProcessCluster forScaleOut(DemoSteps steps, Path kubeconfigFile, boolean writeKubeconfig) {
    return new ProcessCluster(steps, kubeconfigFile, false, writeKubeconfig, true);
  }

  private Path partialKubeconfig() {
    return kubeconfigFile.resolveSibling(kubeconfigFile.getFileName() + ".partial");
  }

  /** The stack, once started. */
  Stack stack() {
    return stack;
  }

  @Override
  public void start() {
    steps.step("starting kube-apiserver and etcd");
    controlPlane = ControlPlane.Running.start();
    if (writeKubeconfig) {
      // now, so that kubectl can watch the rest (the story of --scale-out comes and goes); whole
      // or not at all, for a kubectl that reads it right away
      Path partial = partialKubeconfig();
      OwnerOnly.write(partial, controlPlane.server().getKubeConfigYaml());
      try {
        Files.move(partial, kubeconfigFile, StandardCopyOption.ATOMIC_MOVE);
      } catch (IOException e) {
        throw new UncheckedIOException(e);
      }
    }
    steps.step(
        scaleOut
            ? "starting kube-controller-manager, kube-scheduler, slice-publisher, claim-controller"
                + " and computeclass-bridge (scale-out on: a Karpenter NodePool per ComputeClass"
                + " priority); no node yet"
            : "starting kube-controller-manager, kube-scheduler, "
                + (real ? "a real kubelet with containerd per node, " : "")
                + "slice-publisher, a device-driver per node, claim-controller,"
                + " computeclass-bridge"
                + (real ? "" : " and a test kubelet per node")
                + " (node-a: 2x L4 24Gi, node-b: A100 40Gi, simulated)");
    Map<String, String> properties = new HashMap<>();
    properties.put("kdra.claim-controller.template-mode", "adopt");
    if (scaleOut) {
      properties.putAll(ScaleOutScenario.BRIDGE_PROPERTIES);
    }
    // a complete control plane, so that the Deployments and StatefulSets a user applies get
    // their pods (kube-controller-manager) and pods without our schedulerName get scheduled;
    // kube-controller-manager then makes the claims of templates (the chart's adopt mode)
    stack =
        Stack.start(
            controlPlane.client(),
            controlPlane.server().getKubeConfigYaml(),
            Demo.NAMESPACE,
            scaleOut ? List.of() : real ? DemoNodes.withDeviceNodes() : DemoNodes.simulated(),
            1,
            1,
            properties,
            real,
            controlPlane);
    if (!scaleOut) {
      steps.step("waiting for the drivers' devices in ResourceSlices");
      steps.await(
          "3 devices published",
          settleTimeoutMs(),
          logs(),
          () ->
              Dra.publishedDevices(client(), "node-a") == 2
                  && Dra.publishedDevices(client(), "node-b") == 1);
    }
    steps.step("stack ready");
  }

  @Override
  public KubernetesClient client() {
    return controlPlane.client();
  }

  @Override
  public boolean real() {
    return real;
  }

  @Override
  public long settleTimeoutMs() {
    return real ? REAL_SETTLE_TIMEOUT_MS : SETTLE_TIMEOUT_MS;
  }

  @Override
  public String logs() {
    return "services' logs in integration-tests/target/it-logs/"
        + Demo.NAMESPACE
        + "/"
        + (real ? ", the nodes' in integration-tests/target/rn/<node>/logs/" : "");
  }

  @Override
  public TestKubelet testKubelet(String node) {
    return real ? null : stack.nodes.kubelet(node);
  }

  @Override
  public List<String> containerLog(Pod pod, String container) {
    return stack.nodes.realNode(pod.getSpec().getNodeName()).containerLog(pod, container);
  }

  @Override
  public Path cdiSpec(String node, ResourceClaim claim) {
    return RealPods.spec(stack, node, claim);
  }

  @Override
  public void printAfterReport() {
    List<DemoReport.Service> services =
        stack.services.processNames().stream()
            .map(n -> new DemoReport.Service(n, stack.services.process(n).httpPort))
            .toList();
    DemoReport.services(services).forEach(System.out::println);
    System.out.println(
        "Service logs: " + Path.of("target", "it-logs", Demo.NAMESPACE).toAbsolutePath());
    if (real) {
      System.out.println(
          "Node logs (kubelet, containerd) and pod logs: "
              + Path.of("target", "rn").toAbsolutePath()
              + "/<node>/{logs,pod-logs}");
    }
    System.out.println();
  }

  /** With {@code --once} no kubeconfig: it would be gone before anyone could use it. */
  @Override
  public void printAccess(boolean once) {
    Path kubectl = ControlPlane.kubectl();
    DemoReport.kubectl(
            once,
            kubeconfigFile,
            Files.isExecutable(kubectl) ? kubectl : null,
            ControlPlane.VERSION)
        .forEach(System.out::println);
    if (scaleOut && !once) {
      DemoReport.scaleOutKubectl().forEach(System.out::println);
    }
    System.out.println();
  }

  @Override
  public synchronized void stop() {
    if (stopped) {
      return;
    }
    stopped = true;
    if (stack != null) {
      // no clean-up through the API: the control plane goes too; the real nodes (kubelet,
      // containerd, containers, mounts, cgroups) stop meanwhile
      Thread nodes =
          new Thread(
              () -> {
                try {
                  stack.nodes.stopRealNodes();
                } catch (RuntimeException e) {
                  System.out.println("[demo] stopping the real nodes: " + e);
                }
              },
              "demo-stop-nodes");
      nodes.start();
      try {
        stack.stopProcesses();
      } catch (RuntimeException e) {
        System.out.println("[demo] stopping the services: " + e);
      }
      try {
        nodes.join();
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
      }
      steps.step(real ? "services and real nodes stopped" : "services and kubelets stopped");
    }
    if (controlPlane != null) {
      try {
        controlPlane.close();
        steps.step("control plane stopped");
      } catch (RuntimeException e) {
        System.out.println("[demo] stopping the control plane: " + e);
      }
    }
    TestFiles.deleteRecursively(Path.of("target", "n").toAbsolutePath());
    DemoNodes.removeAllButLogs(Path.of("target", "rn").toAbsolutePath());
    TestFiles.deleteRecursively(Path.of("target", "it-certs").toAbsolutePath());
    // the services' kubeconfigs hold their ServiceAccount tokens
    TestFiles.deleteRecursively(Path.of("target", "it-kubeconfigs").toAbsolutePath());
    try {
      Files.deleteIfExists(kubeconfigFile);
      Files.deleteIfExists(partialKubeconfig());
    } catch (IOException e) {
      // best effort
    }
  }
}
