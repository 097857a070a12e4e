package io.kdra.it.demo;

import static io.kdra.it.nodes.SimulatedNode.oneA100;
import static io.kdra.it.nodes.SimulatedNode.twoL4s;

import io.fabric8.kubernetes.api.model.Container;
import io.fabric8.kubernetes.api.model.ContainerStateWaiting;
import io.fabric8.kubernetes.api.model.HasMetadata;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.PodCondition;
import io.fabric8.kubernetes.api.model.PodResourceClaim;
import io.fabric8.kubernetes.api.model.resource.v1.DeviceRequestAllocationResult;
import io.fabric8.kubernetes.api.model.resource.v1.ResourceClaim;
import io.fabric8.kubernetes.api.model.resource.v1.ResourceClaimTemplate;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.kdra.it.controlplane.ControlPlane;
import io.kdra.it.nodes.RealNode;
import io.kdra.it.nodes.SimulatedNode;
import io.kdra.it.nodes.TestKubelet;
import io.kdra.it.services.CdiSpec;
import io.kdra.it.services.Dra;
import io.kdra.it.services.RealPods;
import io.kdra.it.services.Stack;
import io.kdra.it.support.OwnerOnly;
import io.kdra.it.support.ServiceProcess;
import io.kdra.it.support.TestFiles;
import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Set;
import java.util.concurrent.CountDownLatch;
import java.util.function.BooleanSupplier;
import java.util.stream.Stream;

/**
 * {@code bin/demo}: the local control plane, the four services as processes, two nodes with
 * simulated GPUs (node-a: two 24Gi L4s, node-b: one 40Gi A100), then the manifests of {@code
 * integration-tests/demo/} applied in name order, and a report of where each pod went with which
 * devices (and, on real nodes, what its container saw of them), or why it is pending. The nodes are
 * {@link RealNode}s (the real kubelet and containerd) when this runs as root, else (or with {@code
 * --test-kubelet}) Node objects with a {@link TestKubelet} each. Keeps running until Ctrl-C, or
 * stops at once with {@code --once}. Runs in {@code integration-tests/} (the harness's paths are
 * relative).
 *
 * <p>Arguments: {@code [--once] [--test-kubelet] [manifest directory]}.
 */
public final class Demo {

  static final String NAMESPACE = "demo";

  /** The temporary directory that bin/demo made for this run; removed when it stops. */
  static final String TMPDIR_PROPERTY = "kdra.demo.tmpdir";

  /** What the demo prints once it is up and has reported: it runs until stopped from here on. */
  public static final String RUNNING = "[demo] running; Ctrl-C stops everything";

  static final String USAGE = "usage: bin/demo [--once] [--test-kubelet] [manifest directory]";
  private static final long SETTLE_TIMEOUT_MS = 90_000;

  /** A real node's pod also waits for its sandbox and container: as {@link RealPods} does. */
  private static final long REAL_SETTLE_TIMEOUT_MS = RealPods.POD_TIMEOUT.toMillis();

  /**
   * Harmless device nodes of this machine that stand in for the simulated GPUs' on real nodes (the
   * machine has no GPU): a container given one through CDI lists it in its /dev.
   */
  private static final List<String> STAND_IN_DEVICE_NODES =
      List.of(
          "/dev/fuse",
          "/dev/vsock",
          "/dev/hwrng",
          "/dev/loop-control",
          "/dev/userfaultfd",
          "/dev/cpu_dma_latency");

  /** What stays of a real node's directory when the demo stops. */
  public static final Set<String> KEPT_NODE_FILES = Set.of("logs", "pod-logs");

  /** A container waiting for one of these is still on its way; any other reason is its state. */
  private static final Set<String> STARTING = Set.of("ContainerCreating", "PodInitializing");

  private static final long PENDING_STABLE_NANOS = 2_000_000_000L;

  /** Held so that the level sticks: Netty warns about an option unix sockets do not have. */
  private static final java.util.logging.Logger NETTY =
      java.util.logging.Logger.getLogger("io.netty");

  private final long t0 = System.nanoTime();
  private final List<Pod> applied = new ArrayList<>();
  private final Map<String, Long> unschedulableSince = new HashMap<>();
  private final Path kubeconfigFile;
  private final boolean real;
  private ControlPlane.Running controlPlane;
  private Stack stack;
  private boolean stopped;

  private Demo(Path kubeconfigFile, boolean real) {
    this.kubeconfigFile = kubeconfigFile;
    this.real = real;
  }

  public static void main(String[] args) throws Exception {
    NETTY.setLevel(java.util.logging.Level.SEVERE);
    boolean once = false;
    boolean testKubelet = false;
    Path manifests = Path.of("demo");
    for (String a : args) {
      if (a.equals("--once")) {
        once = true;
      } else if (a.equals("--test-kubelet")) {
        testKubelet = true;
      } else if (a.startsWith("-")) {
        System.err.println(USAGE);
        System.exit(2);
      } else {
        manifests = Path.of(a);
      }
    }
    manifests = manifests.toAbsolutePath();
    boolean real = !testKubelet && RealNode.runsAsRoot();
    String choice = DemoReport.nodesChoice(testKubelet, RealNode.runsAsRoot());
    if (choice != null) {
      System.out.println(choice);
    }
    Path kubeconfig = Path.of("..", "target", "demo-kubeconfig.yaml").toAbsolutePath().normalize();
    Demo demo = new Demo(kubeconfig, real);
    CountDownLatch stoppedLatch = new CountDownLatch(1);
    Runtime.getRuntime()
        .addShutdownHook(
            new Thread(
                () -> {
                  demo.stop();
                  stoppedLatch.countDown();
                },
                "demo-stop"));
    int status = 0;
    try {
      demo.start();
      demo.apply(manifests);
      demo.report();
      demo.printServices();
      demo.printKubeconfig(once);
    } catch (RuntimeException e) {
      System.err.println("[demo] failed: " + e.getMessage());
      status = 1;
      once = true;
    }
    if (once) {
      demo.stop();
      System.exit(status);
    }
    System.out.println(RUNNING);
    stoppedLatch.await();
  }

  private void step(String what) {
    System.out.printf("[demo] %6.1fs %s%n", (System.nanoTime() - t0) / 1e9, what);
  }

  private void start() {
    step("starting kube-apiserver and etcd");
    controlPlane = ControlPlane.Running.start();
    step(
        "starting kube-controller-manager, kube-scheduler, "
            + (real ? "a real kubelet with containerd per node, " : "")
            + "slice-publisher, a device-driver per node, claim-controller, computeclass-bridge"
            + (real ? "" : " and a test kubelet per node")
            + " (node-a: 2x L4 24Gi, node-b: A100 40Gi, simulated)");
    // a complete control plane, so that the Deployments and StatefulSets a user applies get
    // their pods (kube-controller-manager) and pods without our schedulerName get scheduled;
    // kube-controller-manager then makes the claims of templates (the chart's adopt mode)
    stack =
        Stack.start(
            controlPlane.client(),
            controlPlane.server().getKubeConfigYaml(),
            NAMESPACE,
            real ? realNodes() : List.of(twoL4s("node-a"), oneA100("node-b")),
            1,
            1,
            Map.of("kdra.claim-controller.template-mode", "adopt"),
            real,
            controlPlane);
    step("waiting for the drivers' devices in ResourceSlices");
    await(
        "3 devices published",
        () ->
            Dra.publishedDevices(client(), "node-a") == 2
                && Dra.publishedDevices(client(), "node-b") == 1);
    step("stack ready");
  }

  /**
   * The same simulated GPUs for real nodes, each with a device node of this machine and its uuid in
   * its CDI edits, so that the containers show that they got them.
   */
  private static List<SimulatedNode> realNodes() {
    List<String> nodes =
        STAND_IN_DEVICE_NODES.stream().filter(n -> Files.exists(Path.of(n))).limit(3).toList();
    if (nodes.size() < 3) {
      throw new IllegalStateException(
          "real nodes stand in three of "
              + STAND_IN_DEVICE_NODES
              + " for the simulated GPUs' device nodes; this machine has "
              + nodes
              + ": run bin/demo --test-kubelet");
    }
    return List.of(
        SimulatedNode.l4sWithDeviceNodes("node-a", nodes.get(0), nodes.get(1)),
        SimulatedNode.a100WithDeviceNode("node-b", nodes.get(2)));
  }

  private KubernetesClient client() {
    return controlPlane.client();
  }

  /**
   * Per file: everything but pods, then (once their templates exist) the pods, then waits until
   * each pod is prepared on its node or unschedulable.
   */
  private void apply(Path dir) {
    List<Path> files;
    try (Stream<Path> list = Files.list(dir)) {
      files =
          list.filter(f -> f.toString().endsWith(".yaml") || f.toString().endsWith(".yml"))
              .sorted()
              .toList();
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
    if (files.isEmpty()) {
      throw new IllegalStateException("no manifests in " + dir);
    }
    for (Path file : files) {
      List<HasMetadata> items;
      try (InputStream in = Files.newInputStream(file)) {
        items = client().load(in).items();
      } catch (IOException e) {
        throw new UncheckedIOException(e);
      }
      step(
          "applying "
              + file.getFileName()
              + ": "
              + items.stream().map(i -> i.getKind() + " " + i.getMetadata().getName()).toList());
      List<Pod> pods = new ArrayList<>();
      for (HasMetadata item : items) {
        if (item instanceof Pod pod) {
          pods.add(pod);
        } else {
          client().resource(item).create();
        }
      }
      for (Pod pod : pods) {
        for (PodResourceClaim c : pod.getSpec().getResourceClaims()) {
          String template = c.getResourceClaimTemplateName();
          if (template != null) {
            await(
                "template " + template + " in " + ns(pod),
                () ->
                    client()
                            .resources(ResourceClaimTemplate.class)
                            .inNamespace(ns(pod))
                            .withName(template)
                            .get()
                        != null);
          }
        }
        client().resource(pod).create();
        applied.add(pod);
      }
      for (Pod pod : pods) {
        await(
            "pod " + ns(pod) + "/" + pod.getMetadata().getName() + " bound or unschedulable",
            () -> settled(pod));
      }
    }
    step("all pods settled");
  }

  private static String ns(HasMetadata o) {
    return o.getMetadata().getNamespace();
  }

  private boolean settled(Pod pod) {
    Pod current = Dra.get(client(), pod);
    if (current == null) {
      return false;
    }
    String node = current.getSpec().getNodeName();
    if (node != null && real) {
      return runningOrStuck(current);
    }
    if (node != null) {
      TestKubelet kubelet = stack.nodes.kubelet(node);
      if (kubelet != null && kubelet.prepared(current) != null) {
        if (!"Running".equals(current.getStatus().getPhase())) {
          kubelet.markRunning(current);
        }
        return true;
      }
      return false;
    }
    PodCondition scheduled = scheduled(current);
    if (scheduled == null || !"False".equals(scheduled.getStatus())) {
      unschedulableSince.remove(current.getMetadata().getUid());
      return false;
    }
    // pending only when it stays so past the claim-controller's first retry
    long since =
        unschedulableSince.computeIfAbsent(current.getMetadata().getUid(), k -> System.nanoTime());
    return System.nanoTime() - since > PENDING_STABLE_NANOS;
  }

  /**
   * On a real node: the pod runs (and, when its container lists what it sees as the demo's
   * manifests do, has listed it), or its container waits for a reason other than starting
   * (ErrImageNeverPull for an image the node does not have, for one).
   */
  private boolean runningOrStuck(Pod pod) {
    if (waitingReason(pod) != null) {
      return true;
    }
    if (!"Running".equals(pod.getStatus().getPhase())) {
      return false;
    }
    Container c = pod.getSpec().getContainers().get(0);
    boolean lists =
        c.getCommand() != null && String.join(" ", c.getCommand()).contains(RealPods.LISTED);
    return !lists || containerLog(pod).contains(RealPods.LISTED);
  }

  /** A container's waiting reason other than starting, or null. */
  private static String waitingReason(Pod pod) {
    if (pod.getStatus() == null || pod.getStatus().getContainerStatuses() == null) {
      return null;
    }
    return pod.getStatus().getContainerStatuses().stream()
        .map(s -> s.getState() == null ? null : s.getState().getWaiting())
        .filter(w -> w != null && w.getReason() != null && !STARTING.contains(w.getReason()))
        .map(ContainerStateWaiting::getReason)
        .findFirst()
        .orElse(null);
  }

  private List<String> containerLog(Pod pod) {
    return stack
        .nodes
        .realNode(pod.getSpec().getNodeName())
        .containerLog(pod, pod.getSpec().getContainers().get(0).getName());
  }

  private static PodCondition scheduled(Pod pod) {
    if (pod.getStatus() == null) {
      return null;
    }
    return pod.getStatus().getConditions().stream()
        .filter(c -> c.getType().equals("PodScheduled"))
        .findFirst()
        .orElse(null);
  }

  private void await(String what, BooleanSupplier condition) {
    long deadline =
        System.currentTimeMillis() + (real ? REAL_SETTLE_TIMEOUT_MS : SETTLE_TIMEOUT_MS);
    while (!condition.getAsBoolean()) {
      if (System.currentTimeMillis() > deadline) {
        throw new IllegalStateException(
            "timed out waiting for "
                + what
                + "; services' logs in integration-tests/target/it-logs/"
                + NAMESPACE
                + "/"
                + (real ? ", the nodes' in integration-tests/target/rn/<node>/logs/" : ""));
      }
      ServiceProcess.sleep(250);
    }
  }

  private void report() {
    List<DemoReport.PodLine> lines = new ArrayList<>();
    for (Pod seen : applied) {
      Pod pod = Dra.get(client(), seen);
      String name = ns(seen) + "/" + seen.getMetadata().getName();
      if (pod == null) {
        lines.add(
            new DemoReport.PodLine(name, null, "Gone", List.of(), List.of(), null, "deleted"));
      } else if (pod.getSpec().getNodeName() == null) {
        PodCondition c = scheduled(pod);
        lines.add(
            DemoReport.PodLine.pending(
                name,
                c == null
                    ? "not scheduled yet"
                    : c.getReason() + ": " + Objects.toString(c.getMessage(), "")));
      } else {
        lines.add(bound(name, pod));
      }
    }
    System.out.println();
    DemoReport.pods(lines).forEach(System.out::println);
    System.out.println();
  }

  private DemoReport.PodLine bound(String name, Pod pod) {
    String node = pod.getSpec().getNodeName();
    List<String> devices = new ArrayList<>();
    List<String> cdiIds = new ArrayList<>();
    Set<String> envNames = new LinkedHashSet<>();
    Set<String> deviceNodes = new LinkedHashSet<>();
    for (PodResourceClaim entry : pod.getSpec().getResourceClaims()) {
      ResourceClaim claim = Dra.claimOf(client(), pod, entry.getName());
      if (claim == null || claim.getStatus() == null || claim.getStatus().getAllocation() == null) {
        devices.add(entry.getName() + ": not allocated");
        continue;
      }
      Map<String, List<String>> byRequest = new LinkedHashMap<>();
      for (DeviceRequestAllocationResult r :
          claim.getStatus().getAllocation().getDevices().getResults()) {
        byRequest
            .computeIfAbsent(r.getRequest(), k -> new ArrayList<>())
            .add(r.getPool() + "/" + r.getDevice());
      }
      byRequest.forEach((request, list) -> devices.add(request + ": " + String.join(", ", list)));
      if (real) {
        CdiSpec.read(RealPods.spec(stack, node, claim))
            .ifPresent(
                spec -> {
                  cdiIds.addAll(spec.ids());
                  envNames.addAll(spec.envNames());
                  deviceNodes.addAll(spec.deviceNodes());
                });
      }
    }
    if (!real) {
      TestKubelet.Prepared prepared = stack.nodes.kubelet(node).prepared(pod);
      if (prepared != null) {
        cdiIds.addAll(prepared.cdiIds());
      }
    }
    String waiting = real ? waitingReason(pod) : null;
    String status = waiting != null ? waiting : pod.getStatus().getPhase();
    List<String> seen =
        real ? DemoReport.seenThroughCdi(containerLog(pod), envNames, deviceNodes) : null;
    return new DemoReport.PodLine(name, node, status, devices, cdiIds, seen, null);
  }

  private void printServices() {
    List<DemoReport.Service> services =
        stack.services.processNames().stream()
            .map(n -> new DemoReport.Service(n, stack.services.process(n).httpPort))
            .toList();
    DemoReport.services(services).forEach(System.out::println);
    System.out.println("Service logs: " + Path.of("target", "it-logs", NAMESPACE).toAbsolutePath());
    if (real) {
      System.out.println(
          "Node logs (kubelet, containerd) and pod logs: "
              + Path.of("target", "rn").toAbsolutePath()
              + "/<node>/{logs,pod-logs}");
    }
    System.out.println();
  }

  /** With {@code --once} no kubeconfig: it would be gone before anyone could use it. */
  private void printKubeconfig(boolean once) {
    if (!once) {
      OwnerOnly.write(kubeconfigFile, controlPlane.server().getKubeConfigYaml());
    }
    Path kubectl = ControlPlane.kubectl();
    DemoReport.kubectl(
            once,
            kubeconfigFile,
            Files.isExecutable(kubectl) ? kubectl : null,
            ControlPlane.VERSION)
        .forEach(System.out::println);
    System.out.println();
  }

  /** Stops services, kubelets and the control plane, and removes the temporary files; once. */
  synchronized void stop() {
    if (stopped) {
      return;
    }
    stopped = true;
    step("stopping");
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
      step(real ? "services and real nodes stopped" : "services and kubelets stopped");
    }
    if (controlPlane != null) {
      try {
        controlPlane.close();
        step("control plane stopped");
      } catch (RuntimeException e) {
        System.out.println("[demo] stopping the control plane: " + e);
      }
    }
    TestFiles.deleteRecursively(Path.of("target", "n").toAbsolutePath());
    removeRealNodeFilesButLogs();
    TestFiles.deleteRecursively(Path.of("target", "it-certs").toAbsolutePath());
    // the services' kubeconfigs hold their ServiceAccount tokens
    TestFiles.deleteRecursively(Path.of("target", "it-kubeconfigs").toAbsolutePath());
    try {
      Files.deleteIfExists(kubeconfigFile);
    } catch (IOException e) {
      // best effort
    }
    // bin/demo's temporary directory, this JVM's and the services' java.io.tmpdir: whatever
    // they left there (everything that wrote there has stopped by now)
    String tmp = System.getProperty(TMPDIR_PROPERTY);
    if (tmp != null && !tmp.isBlank()) {
      try {
        TestFiles.deleteRecursively(Path.of(tmp));
      } catch (RuntimeException e) {
        System.out.println("[demo] removing " + tmp + ": " + e);
      }
    }
    step("stopped");
  }

  /**
   * The real nodes' directories, but for their logs (kubelet, containerd, containers'): their
   * configuration holds the admin kubeconfig, the rest is runtime state.
   */
  private static void removeRealNodeFilesButLogs() {
    Path base = Path.of("target", "rn").toAbsolutePath();
    if (!Files.isDirectory(base)) {
      return;
    }
    try (Stream<Path> nodes = Files.list(base)) {
      for (Path node : nodes.toList()) {
        try (Stream<Path> entries = Files.list(node)) {
          for (Path e : entries.toList()) {
            if (!KEPT_NODE_FILES.contains(e.getFileName().toString())) {
              TestFiles.deleteRecursively(e);
            }
          }
        }
      }
    } catch (IOException | UncheckedIOException e) {
      System.out.println("[demo] removing the real nodes' files: " + e);
    }
  }
}
