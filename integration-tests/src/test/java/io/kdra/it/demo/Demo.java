package io.kdra.it.demo;

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
import io.kdra.it.nodes.RealNode;
import io.kdra.it.nodes.TestKubelet;
import io.kdra.it.services.CdiSpec;
import io.kdra.it.services.Dra;
import io.kdra.it.services.RealPods;
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
 * {@code bin/demo}: a cluster ({@link DemoCluster}) with two nodes with simulated GPUs (node-a: two
 * 24Gi L4s, node-b: one 40Gi A100), then the manifests of {@code integration-tests/demo/} applied
 * in name order, and a report of where each pod went with which devices (and, on real nodes, what
 * its container saw of them), or why it is pending. The cluster is the harness's control plane with
 * the four services as processes ({@link ProcessCluster}: real nodes as root, else or with {@code
 * --test-kubelet} test kubelets), or, with {@code --cluster} (root only), the chart installed with
 * its defaults on a multi-node cluster with a pod network, kube-proxy, CoreDNS and NetworkPolicy
 * ({@link ChartCluster}). With {@code --scale-out}, instead of the manifests, the story of {@link
 * ScaleOutScene} on the processes' cluster with no node yet: Karpenter launches the nodes. Keeps
 * running until Ctrl-C, or stops at once with {@code --once}. Runs in {@code integration-tests/}
 * (the harness's paths are relative).
 *
 * <p>Arguments: {@link DemoArgs}.
 */
public final class Demo {

  static final String NAMESPACE = "demo";

  /** The temporary directory that bin/demo made for this run; removed when it stops. */
  static final String TMPDIR_PROPERTY = "kdra.demo.tmpdir";

  /** What the demo prints once it is up and has reported: it runs until stopped from here on. */
  public static final String RUNNING = "[demo] running; Ctrl-C stops everything";

  /** What stays of a real node's directory when the demo stops. */
  public static final Set<String> KEPT_NODE_FILES = Set.of("logs", "pod-logs");

  /** A container waiting for one of these is still on its way; any other reason is its state. */
  private static final Set<String> STARTING = Set.of("ContainerCreating", "PodInitializing");

  private static final long PENDING_STABLE_NANOS = 2_000_000_000L;

  /** Held so that the level sticks: Netty warns about an option unix sockets do not have. */
  private static final java.util.logging.Logger NETTY =
      java.util.logging.Logger.getLogger("io.netty");

  private final DemoSteps steps = new DemoSteps();
  private final List<Pod> applied = new ArrayList<>();
  private final Map<String, Long> unschedulableSince = new HashMap<>();
  private DemoCluster cluster;
  private ScaleOutScene scene;
  private boolean stopped;

  private Demo() {}

  public static void main(String[] argv) throws Exception {
    NETTY.setLevel(java.util.logging.Level.SEVERE);
    DemoArgs args;
    try {
      args = DemoArgs.parse(argv);
    } catch (IllegalArgumentException e) {
      System.err.println(e.getMessage());
      System.exit(2);
      return;
    }
    boolean root = RealNode.runsAsRoot();
    String refusal = args.refusal(root);
    if (refusal != null) {
      System.err.println(refusal);
      System.exit(2);
    }
    boolean once = args.once();
    Path manifests = args.manifests().toAbsolutePath();
    String choice =
        args.scaleOut()
            ? DemoReport.SCALE_OUT_NODES
            : args.cluster() ? null : DemoReport.nodesChoice(args.testKubelet(), root);
    if (choice != null) {
      System.out.println(choice);
    }
    Path kubeconfig = Path.of("..", "target", "demo-kubeconfig.yaml").toAbsolutePath().normalize();
    Demo demo = new Demo();
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
      if (args.cluster()) {
        demo.start(new ChartCluster(demo.steps, kubeconfig));
      } else if (args.scaleOut()) {
        demo.start(ProcessCluster.forScaleOut(demo.steps, kubeconfig, !once));
      } else {
        demo.start(new ProcessCluster(demo.steps, kubeconfig, !args.testKubelet() && root, !once));
      }
      if (args.scaleOut()) {
        demo.scaleOut();
      } else {
        demo.apply(manifests);
        demo.report();
      }
      demo.cluster.printAfterReport();
      demo.cluster.printAccess(once);
    } catch (RuntimeException | Error e) {
      // (an Error too: the JVM would otherwise keep running with the services' threads)
      System.err.println("[demo] failed: " + (e instanceof Error ? e : e.getMessage()));
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

  private synchronized void setCluster(DemoCluster c) {
    cluster = c;
  }

  /** Started here, so that a stop meanwhile (Ctrl-C) stops what started so far. */
  private void start(DemoCluster c) {
    setCluster(c);
    c.start();
  }

  private synchronized ScaleOutScene setScene(ScaleOutScene s) {
    if (stopped) {
      throw new IllegalStateException("stopped");
    }
    scene = s;
    return s;
  }

  /** The scale-out story on the cluster of {@link ProcessCluster#forScaleOut}. */
  private void scaleOut() {
    setScene(new ScaleOutScene(steps, ((ProcessCluster) cluster).stack(), cluster.logs())).run();
    System.out.println();
  }

  private KubernetesClient client() {
    return cluster.client();
  }

  private boolean real() {
    return cluster.real();
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
      steps.step(
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
    steps.step("all pods settled");
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
    if (node != null && real()) {
      return runningOrStuck(current);
    }
    if (node != null) {
      TestKubelet kubelet = cluster.testKubelet(node);
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
    return cluster.containerLog(pod, pod.getSpec().getContainers().get(0).getName());
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
    steps.await(what, cluster.settleTimeoutMs(), cluster.logs(), condition);
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
      if (real()) {
        CdiSpec.read(cluster.cdiSpec(node, claim))
            .ifPresent(
                spec -> {
                  cdiIds.addAll(spec.ids());
                  envNames.addAll(spec.envNames());
                  deviceNodes.addAll(spec.deviceNodes());
                });
      }
    }
    if (!real()) {
      TestKubelet.Prepared prepared = cluster.testKubelet(node).prepared(pod);
      if (prepared != null) {
        cdiIds.addAll(prepared.cdiIds());
      }
    }
    String waiting = real() ? waitingReason(pod) : null;
    String status = waiting != null ? waiting : pod.getStatus().getPhase();
    List<String> seen =
        real() ? DemoReport.seenThroughCdi(containerLog(pod), envNames, deviceNodes) : null;
    return new DemoReport.PodLine(name, node, status, devices, cdiIds, seen, null);
  }

  /** Stops the cluster and removes the temporary files; once. */
  synchronized void stop() {
    if (stopped) {
      return;
    }
    stopped = true;
    steps.step("stopping");
    if (scene != null) {
      // Karpenter first: no node launched or brought up while the cluster stops
      try {
        scene.close();
      } catch (RuntimeException e) {
        System.out.println("[demo] stopping the scale-out scene (Karpenter): " + e);
      }
    }
    if (cluster != null) {
      cluster.stop();
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
    steps.step("stopped");
  }
}
