package io.kdra.it;

import static io.kdra.it.SimulatedNode.oneA100;
import static io.kdra.it.SimulatedNode.twoL4s;

import io.fabric8.kubernetes.api.model.HasMetadata;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.PodCondition;
import io.fabric8.kubernetes.api.model.PodResourceClaim;
import io.fabric8.kubernetes.api.model.resource.v1.DeviceRequestAllocationResult;
import io.fabric8.kubernetes.api.model.resource.v1.ResourceClaim;
import io.fabric8.kubernetes.api.model.resource.v1.ResourceClaimTemplate;
import io.fabric8.kubernetes.client.KubernetesClient;
import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.concurrent.CountDownLatch;
import java.util.function.BooleanSupplier;
import java.util.stream.Stream;

/**
 * {@code bin/demo}: the local control plane, the four services as processes, two simulated
 * nodes (node-a: two 24Gi L4s, node-b: one 40Gi A100) with a test kubelet each, then the
 * manifests of {@code integration-tests/demo/} applied in name order, and a report of where each
 * pod went with which devices, or why it is pending. Keeps running until Ctrl-C, or stops at once
 * with {@code --once}. Runs in {@code integration-tests/} (the harness's paths are relative).
 *
 * <p>Arguments: {@code [--once] [manifest directory]}.
 */
public final class Demo {

  static final String NAMESPACE = "demo";
  /** The temporary directory that bin/demo made for this run; removed when it stops. */
  static final String TMPDIR_PROPERTY = "kdra.demo.tmpdir";
  /** What the demo prints once it is up and has reported: it runs until stopped from here on. */
  static final String RUNNING = "[demo] running; Ctrl-C stops everything";
  private static final long SETTLE_TIMEOUT_MS = 90_000;
  private static final long PENDING_STABLE_NANOS = 2_000_000_000L;

  /** Held so that the level sticks: Netty warns about an option unix sockets do not have. */
  private static final java.util.logging.Logger NETTY =
      java.util.logging.Logger.getLogger("io.netty");

  private final long t0 = System.nanoTime();
  private final List<Pod> applied = new ArrayList<>();
  private final Map<String, Long> unschedulableSince = new HashMap<>();
  private final Path kubeconfigFile;
  private ControlPlane.Running controlPlane;
  private Stack stack;
  private boolean stopped;

  private Demo(Path kubeconfigFile) {
    this.kubeconfigFile = kubeconfigFile;
  }

  public static void main(String[] args) throws Exception {
    NETTY.setLevel(java.util.logging.Level.SEVERE);
    boolean once = false;
    Path manifests = Path.of("demo");
    for (String a : args) {
      if (a.equals("--once")) {
        once = true;
      } else if (a.startsWith("-")) {
        System.err.println("usage: bin/demo [--once] [manifest directory]");
        System.exit(2);
      } else {
        manifests = Path.of(a);
      }
    }
    manifests = manifests.toAbsolutePath();
    Path kubeconfig = Path.of("..", "target", "demo-kubeconfig.yaml").toAbsolutePath().normalize();
    Demo demo = new Demo(kubeconfig);
    CountDownLatch stoppedLatch = new CountDownLatch(1);
    Runtime.getRuntime().addShutdownHook(new Thread(() -> {
      demo.stop();
      stoppedLatch.countDown();
    }, "demo-stop"));
    int status = 0;
    try {
      demo.start();
      demo.apply(manifests);
      demo.report();
      demo.printKubeconfig();
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
    step("starting slice-publisher, a device-driver per node, claim-controller,"
        + " computeclass-bridge and a kubelet per node (node-a: 2x L4 24Gi, node-b: A100 40Gi)");
    stack = Stack.start(controlPlane.client(), controlPlane.server().getKubeConfigYaml(),
        NAMESPACE, List.of(twoL4s("node-a"), oneA100("node-b")), true, 1, Map.of());
    step("waiting for the drivers' devices in ResourceSlices");
    await("3 devices published", () -> Dra.publishedDevices(client(), "node-a") == 2
        && Dra.publishedDevices(client(), "node-b") == 1);
    step("stack ready");
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
      files = list.filter(f -> f.toString().endsWith(".yaml") || f.toString().endsWith(".yml"))
          .sorted().toList();
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
      step("applying " + file.getFileName() + ": " + items.stream()
          .map(i -> i.getKind() + " " + i.getMetadata().getName()).toList());
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
            await("template " + template + " in " + ns(pod), () -> client()
                .resources(ResourceClaimTemplate.class).inNamespace(ns(pod)).withName(template)
                .get() != null);
          }
        }
        client().resource(pod).create();
        applied.add(pod);
      }
      for (Pod pod : pods) {
        await("pod " + ns(pod) + "/" + pod.getMetadata().getName() + " bound or unschedulable",
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
    if (node != null) {
      TestKubelet kubelet = stack.kubelet(node);
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
    long since = unschedulableSince.computeIfAbsent(current.getMetadata().getUid(),
        k -> System.nanoTime());
    return System.nanoTime() - since > PENDING_STABLE_NANOS;
  }

  private static PodCondition scheduled(Pod pod) {
    if (pod.getStatus() == null) {
      return null;
    }
    return pod.getStatus().getConditions().stream()
        .filter(c -> c.getType().equals("PodScheduled")).findFirst().orElse(null);
  }

  private void await(String what, BooleanSupplier condition) {
    long deadline = System.currentTimeMillis() + SETTLE_TIMEOUT_MS;
    while (!condition.getAsBoolean()) {
      if (System.currentTimeMillis() > deadline) {
        throw new IllegalStateException("timed out waiting for " + what
            + "; services' logs in integration-tests/target/it-logs/" + NAMESPACE + "/");
      }
      ServiceProcess.sleep(250);
    }
  }

  private void report() {
    System.out.println();
    System.out.printf("%-16s %-8s %s%n", "POD", "NODE",
        "DEVICES (request: pool/device, then CDI ids), or why it is pending");
    for (Pod seen : applied) {
      Pod pod = Dra.get(client(), seen);
      String name = ns(seen) + "/" + seen.getMetadata().getName();
      if (pod == null) {
        System.out.printf("%-16s %-8s gone%n", name, "-");
        continue;
      }
      String node = pod.getSpec().getNodeName();
      if (node == null) {
        PodCondition c = scheduled(pod);
        String why = c == null ? "not scheduled yet"
            : c.getReason() + ": " + Objects.toString(c.getMessage(), "");
        System.out.printf("%-16s %-8s Pending, %s%n", name, "-", why);
        continue;
      }
      List<String> devices = new ArrayList<>();
      for (PodResourceClaim entry : pod.getSpec().getResourceClaims()) {
        ResourceClaim claim = Dra.claimOf(client(), pod, entry.getName());
        if (claim == null || claim.getStatus() == null
            || claim.getStatus().getAllocation() == null) {
          devices.add(entry.getName() + ": not allocated");
          continue;
        }
        Map<String, List<String>> byRequest = new LinkedHashMap<>();
        for (DeviceRequestAllocationResult r :
            claim.getStatus().getAllocation().getDevices().getResults()) {
          byRequest.computeIfAbsent(r.getRequest(), k -> new ArrayList<>())
              .add(r.getPool() + "/" + r.getDevice());
        }
        byRequest.forEach((request, list) ->
            devices.add(request + ": " + String.join(", ", list)));
      }
      TestKubelet.Prepared prepared = stack.kubelet(node).prepared(pod);
      String cdi = prepared == null ? "not prepared" : String.join(", ", prepared.cdiIds());
      System.out.printf("%-16s %-8s %s%n%-16s %-8s CDI %s%n", name, node,
          String.join(", ", devices), "", "", cdi);
    }
    System.out.println();
  }

  private void printKubeconfig() {
    OwnerOnly.write(kubeconfigFile, controlPlane.server().getKubeConfigYaml());
    System.out.println("Point kubectl at it (while this runs):");
    System.out.println("  export KUBECONFIG=" + kubeconfigFile);
    System.out.println("  kubectl get pods,resourceclaims -n " + NAMESPACE
        + " -o wide; kubectl get resourceslices,deviceclasses,computeclasses");
    System.out.println("Service logs: " + Path.of("target", "it-logs", NAMESPACE)
        .toAbsolutePath());
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
      // no clean-up through the API: the control plane goes too (and on Ctrl-C it may be gone)
      try {
        stack.stopProcesses();
        step("services and kubelets stopped");
      } catch (RuntimeException e) {
        System.out.println("[demo] stopping the services: " + e);
      }
    }
    if (controlPlane != null) {
      try {
        controlPlane.close();
        step("control plane stopped");
      } catch (RuntimeException e) {
        System.out.println("[demo] stopping the control plane: " + e);
      }
    }
    Stack.deleteRecursively(Path.of("target", "n").toAbsolutePath());
    Stack.deleteRecursively(Path.of("target", "it-certs").toAbsolutePath());
    // the services' kubeconfigs hold their ServiceAccount tokens
    Stack.deleteRecursively(Path.of("target", "it-kubeconfigs").toAbsolutePath());
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
        Stack.deleteRecursively(Path.of(tmp));
      } catch (RuntimeException e) {
        System.out.println("[demo] removing " + tmp + ": " + e);
      }
    }
    step("stopped");
  }
}
