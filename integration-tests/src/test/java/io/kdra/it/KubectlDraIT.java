package io.kdra.it;

import static io.kdra.it.nodes.SimulatedNode.oneA100;
import static io.kdra.it.nodes.SimulatedNode.twoL4s;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.PodCondition;
import io.fabric8.kubernetes.api.model.ServiceAccountBuilder;
import io.fabric8.kubernetes.api.model.authentication.TokenRequestBuilder;
import io.fabric8.kubernetes.api.model.rbac.ClusterRoleBindingBuilder;
import io.fabric8.kubernetes.api.model.rbac.ClusterRoleBuilder;
import io.fabric8.kubernetes.api.model.rbac.PolicyRuleBuilder;
import io.fabric8.kubernetes.api.model.resource.v1.ResourceClaim;
import io.fabric8.kubernetes.client.Config;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.kdra.it.chart.KdraChart;
import io.kdra.it.controlplane.ControlPlane;
import io.kdra.it.services.Dra;
import io.kdra.it.services.KdraStack;
import io.kdra.it.services.Stack;
import io.kdra.it.support.OwnerOnly;
import io.kdra.it.support.ServiceProcess;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Base64;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * {@code kubectl dra} as an operator runs it: the real kubectl (built with the control plane) finds
 * {@code bin/kubectl-dra} on PATH and runs it against the real API server, through a kubeconfig
 * whose ServiceAccount may only read what the plugin reads. Its explanations are the
 * claim-controller's own: {@code why} prints the message the controller wrote to the pending pod's
 * PodScheduled condition. One stack (node-a: two L4s; node-b: one A100) for every case.
 */
@ExtendWith(ControlPlane.class)
class KubectlDraIT {

  @RegisterExtension
  static final KdraStack STACK = KdraStack.nodes(twoL4s("node-a"), oneA100("node-b"));

  private static final String READER = "kubectl-dra-reader";
  private static final Duration PLUGIN_TIMEOUT = Duration.ofSeconds(120);

  private static Stack stack;
  private static KubernetesClient client;
  private static Path root;
  private static Path work;
  private static Path kubeconfig;

  @BeforeAll
  static void readerAndSlices() throws IOException {
    stack = STACK.get();
    client = stack.client;
    root = ServiceProcess.moduleDir("bin").getParent();
    work = Files.createDirectories(Path.of("target", "it-kubectl-dra").toAbsolutePath());
    kubeconfig = readerKubeconfig();
    await()
        .atMost(Duration.ofSeconds(60))
        .untilAsserted(
            () -> {
              assertThat(Dra.publishedDevices(client, "node-a")).isEqualTo(2);
              assertThat(Dra.publishedDevices(client, "node-b")).isEqualTo(1);
            });
  }

  @AfterAll
  static void removeReader() {
    if (client != null) {
      client.rbac().clusterRoleBindings().withName(READER).delete();
      client.rbac().clusterRoles().withName(READER).delete();
      client.serviceAccounts().inNamespace(stack.namespace).withName(READER).delete();
    }
  }

  @AfterEach
  void noPodsLeft() {
    client
        .resources(ResourceClaim.class)
        .inNamespace(stack.namespace)
        .withName("no-class")
        .delete();
    stack.deletePodsAndAwaitClaimsGone();
  }

  @Test
  void kubectlFindsThePluginAndWhySaysWhatTheControllerSays() throws Exception {
    String ns = stack.namespace;
    assertThat(run("plugin", "list").out()).contains(root.resolve("bin/kubectl-dra").toString());

    stack.createClusterScoped(
        Dra.gpuClass(
            "gpu-80gi",
            "device.capacity[\"" + Stack.DRIVER + "\"].memory.compareTo(quantity(\"80Gi\")) >= 0"));
    client.resource(Dra.template(ns, "big", "gpu-80gi", 1)).create();
    Pod tooBig = client.resource(Dra.podWithTemplate(ns, "too-big", "big")).create();
    client.resource(Dra.claim(ns, "no-class", "tpu-missing", 1)).create();
    Pod wantsTpu = client.resource(Dra.podWithClaim(ns, "wants-tpu", "no-class")).create();
    String tooBigWhy = unschedulable(tooBig);
    String wantsTpuWhy = unschedulable(wantsTpu);
    String claim = Dra.claimOf(client, tooBig, "gpu").getMetadata().getName();
    String filters =
        "claim " + claim + ": request \"gpu\": 0 devices in class \"gpu-80gi\", 0 free";
    // kube-scheduler's shape: the filters' verdict, then what preemption found
    assertThat(tooBigWhy)
        .isEqualTo(
            filters
                + " preemption: 0/2 nodes are available: 2 No preemption victims found for"
                + " incoming pod.");
    assertThat(wantsTpuWhy).contains("device class tpu-missing not found");

    Result pod = run("dra", "why", "pod/too-big", "-n", ns);
    assertThat(pod.status()).isZero();
    assertThat(pod.out())
        .contains(
            "pod/too-big is pending: it cannot be scheduled now",
            "Condition:  PodScheduled=False (Unschedulable): " + tooBigWhy,
            // the plugin's own search, now: the filters alone
            "Why, now:   " + filters);
    // per request, and per node tried
    assertThat(row(pod.out(), claim, "gpu", "gpu-80gi"))
        .containsExactly(claim, "gpu", "gpu-80gi", "1", "0", "-", "0", "-");
    for (String node : List.of("node-a", "node-b")) {
      assertThat(pod.out())
          .contains(
              node
                  + "   claim "
                  + claim
                  + ": request \"gpu\": 0 devices "
                  + "in class \"gpu-80gi\", 0 free; on node "
                  + node);
    }

    Result byClaim = run("dra", "why", "resourceclaim/" + claim, "-n", ns);
    assertThat(byClaim.status()).isZero();
    assertThat(byClaim.out())
        .contains(
            "pod " + ns + "/too-big waits for it",
            "Why, now:      request \"gpu\": 0 devices in class \"gpu-80gi\", 0 free");

    Result tpu = run("dra", "why", "pod/wants-tpu", "-n", ns);
    assertThat(tpu.out())
        .contains(
            "Condition:  PodScheduled=False (Unschedulable): " + wantsTpuWhy,
            "Why, now:   claim no-class: request \"gpu\": device class tpu-missing not found");

    Result missing = run("dra", "why", "pod/nope", "-n", ns);
    assertThat(missing.status()).isEqualTo(1);
    assertThat(missing.err())
        .contains("error: pods \"nope\" not found in namespace \"" + ns + "\"");
  }

  @Test
  void devicesShowsTheClaimHoldingADeviceAndWhatIfPlacesWithoutWriting() throws Exception {
    String ns = stack.namespace;
    client.resource(Dra.template(ns, "one-gpu", KdraChart.GPU_CLASS, 1)).create();
    Pod holder = client.resource(Dra.podWithTemplate(ns, "holder", "one-gpu")).create();
    // the claim is allocated before the pod is bound: wait for both
    await()
        .atMost(Duration.ofSeconds(90))
        .untilAsserted(
            () -> {
              assertThat(Dra.devices(Dra.claimOf(client, holder, "gpu"))).hasSize(1);
              assertThat(Dra.get(client, holder).getSpec().getNodeName()).isNotNull();
            });
    ResourceClaim held = Dra.claimOf(client, holder, "gpu");
    String[] poolDevice = Dra.devices(held).get(0).split("/");
    String node = Dra.get(client, holder).getSpec().getNodeName();

    Result devices = run("dra", "devices");
    assertThat(devices.status()).isZero();
    assertThat(devices.out().lines().findFirst().orElseThrow().split(" +"))
        .containsExactly("NODE", "DRIVER", "POOL", "DEVICE", "CLASSES", "CLAIM", "TAINTS");
    List<String> row = row(devices.out(), node, Stack.DRIVER, poolDevice[0], poolDevice[1]);
    assertThat(row.get(4).split(",")).contains(KdraChart.GPU_CLASS);
    assertThat(row.get(5)).isEqualTo(ns + "/" + held.getMetadata().getName());
    assertThat(devices.out().lines().skip(1)).hasSize(3);

    Path fits = manifest("fits.yaml", ns, "one-more", 1);
    Result yes = run("dra", "what-if", "-f", fits.toString(), "-n", ns);
    assertThat(yes.status()).as(yes.err()).isZero();
    assertThat(row(yes.out(), "pod/" + ns + "/worker")).startsWith("pod/" + ns + "/worker", "yes");

    // three devices, one held: four cannot fit, and the allocator says why
    Path tooMany = manifest("too-many.yaml", ns, "four", 4);
    Result no = run("dra", "what-if", "-f", tooMany.toString(), "-n", ns);
    assertThat(no.status()).isEqualTo(3);
    assertThat(row(no.out(), "pod/" + ns + "/worker"))
        .containsExactly(
            "pod/" + ns + "/worker",
            "no",
            "-",
            "claim worker-gpu-what-if: request \"gpu\": 3 devices in class \""
                + KdraChart.GPU_CLASS
                + "\", 2 free (1 allocated to other claims), 4 needed");
    // nothing was written
    assertThat(
            Dra.get(
                client,
                new io.fabric8.kubernetes.api.model.PodBuilder()
                    .withNewMetadata()
                    .withNamespace(ns)
                    .withName("worker")
                    .endMetadata()
                    .build()))
        .isNull();
  }

  /** A template for {@code count} GPUs of the chart's class and a pod "worker" using it. */
  private static Path manifest(String file, String ns, String template, int count)
      throws IOException {
    Path f = work.resolve(file);
    Files.writeString(
        f,
        String.join(
            "\n",
            "apiVersion: resource.k8s.io/v1",
            "kind: ResourceClaimTemplate",
            "metadata: {name: " + template + "}",
            "spec:",
            "  spec:",
            "    devices:",
            "      requests:",
            "      - name: gpu",
            "        exactly: {deviceClassName: "
                + KdraChart.GPU_CLASS
                + ", allocationMode: "
                + "ExactCount, count: "
                + count
                + "}",
            "---",
            "apiVersion: v1",
            "kind: Pod",
            "metadata: {name: worker, namespace: " + ns + "}",
            "spec:",
            "  resourceClaims: [{name: gpu, resourceClaimTemplateName: " + template + "}]",
            "  containers: [{name: app, image: app:1}]",
            ""));
    return f;
  }

  /** The PodScheduled=False message the controller writes for the pod, once it has. */
  private static String unschedulable(Pod pod) {
    return await()
        .atMost(Duration.ofSeconds(60))
        .until(
            () -> {
              Pod current = Dra.get(client, pod);
              PodCondition c =
                  current.getStatus() == null || current.getStatus().getConditions() == null
                      ? null
                      : current.getStatus().getConditions().stream()
                          .filter(x -> "PodScheduled".equals(x.getType()))
                          .findFirst()
                          .orElse(null);
              return c != null && "False".equals(c.getStatus()) ? c.getMessage() : null;
            },
            java.util.Objects::nonNull);
  }

  /** The cells of the first table row whose first cells are {@code first}. */
  private static List<String> row(String out, String... first) {
    return out.lines()
        .map(l -> List.of(l.split(" {3,}")))
        .filter(
            cells ->
                cells.size() >= first.length
                    && cells.subList(0, first.length).equals(List.of(first)))
        .findFirst()
        .orElseThrow(() -> new AssertionError("no row " + List.of(first) + " in:\n" + out));
  }

  record Result(int status, String out, String err) {}

  /** The real kubectl, with bin/ on PATH and the reader's kubeconfig. */
  private static Result run(String... args) throws Exception {
    List<String> command = new ArrayList<>();
    command.add(kubectl().toString());
    command.addAll(List.of(args));
    Path out = Files.createTempFile(work, "out", ".txt");
    Path err = Files.createTempFile(work, "err", ".txt");
    ProcessBuilder b =
        new ProcessBuilder(command).redirectOutput(out.toFile()).redirectError(err.toFile());
    b.environment().put("PATH", root.resolve("bin") + ":" + System.getenv("PATH"));
    b.environment().put("KUBECONFIG", kubeconfig.toString());
    Process p = b.start();
    if (!p.waitFor(PLUGIN_TIMEOUT.toSeconds(), TimeUnit.SECONDS)) {
      p.destroyForcibly();
      throw new AssertionError("kubectl " + List.of(args) + " did not finish");
    }
    Result r = new Result(p.exitValue(), Files.readString(out), Files.readString(err));
    System.out.println(
        "[kubectl-dra] kubectl "
            + String.join(" ", args)
            + " -> "
            + r.status()
            + "\n"
            + r.out()
            + r.err());
    return r;
  }

  private static Path kubectl() throws IOException {
    try (Stream<Path> dirs = Files.list(ControlPlane.cacheDir().resolve("k8s"))) {
      return dirs.filter(
              d ->
                  d.getFileName().toString().startsWith(ControlPlane.VERSION + "-linux-")
                      && !d.getFileName().toString().contains(".partial"))
          .map(d -> d.resolve("kubectl"))
          .filter(Files::isExecutable)
          .findFirst()
          .orElseThrow(() -> new IllegalStateException("no kubectl in the control plane cache"));
    }
  }

  /**
   * A kubeconfig for a ServiceAccount that may get and list what {@code kubectl dra} reads, and
   * nothing else: the least an operator needs to run it.
   */
  private static Path readerKubeconfig() throws IOException {
    String ns = stack.namespace;
    client
        .resource(
            new ClusterRoleBuilder()
                .withNewMetadata()
                .withName(READER)
                .endMetadata()
                .withRules(
                    new PolicyRuleBuilder()
                        .withApiGroups("")
                        .withResources(
                            "nodes",
                            "pods",
                            "namespaces",
                            "persistentvolumeclaims",
                            "persistentvolumes")
                        .withVerbs("get", "list")
                        .build(),
                    new PolicyRuleBuilder()
                        .withApiGroups("storage.k8s.io")
                        .withResources(
                            "storageclasses", "csinodes", "csidrivers", "csistoragecapacities")
                        .withVerbs("get", "list")
                        .build(),
                    new PolicyRuleBuilder()
                        .withApiGroups("resource.k8s.io")
                        .withResources(
                            "resourceclaims",
                            "resourceclaimtemplates",
                            "resourceslices",
                            "deviceclasses",
                            "devicetaintrules")
                        .withVerbs("get", "list")
                        .build())
                .build())
        .createOr(x -> x.update());
    client
        .resource(
            new ServiceAccountBuilder()
                .withNewMetadata()
                .withName(READER)
                .withNamespace(ns)
                .endMetadata()
                .build())
        .createOr(x -> x.update());
    client
        .resource(
            new ClusterRoleBindingBuilder()
                .withNewMetadata()
                .withName(READER)
                .endMetadata()
                .withNewRoleRef()
                .withApiGroup("rbac.authorization.k8s.io")
                .withKind("ClusterRole")
                .withName(READER)
                .endRoleRef()
                .addNewSubject()
                .withKind("ServiceAccount")
                .withName(READER)
                .withNamespace(ns)
                .endSubject()
                .build())
        .createOr(x -> x.update());
    String token =
        client
            .serviceAccounts()
            .inNamespace(ns)
            .withName(READER)
            .tokenRequest(
                new TokenRequestBuilder()
                    .withNewSpec()
                    .withExpirationSeconds(3600L)
                    .endSpec()
                    .build())
            .getStatus()
            .getToken();
    Config admin = client.getConfiguration();
    Path ca = work.resolve("ca.crt");
    if (admin.getCaCertFile() != null && !admin.getCaCertFile().isBlank()) {
      ca = Path.of(admin.getCaCertFile()).toAbsolutePath();
    } else {
      Files.writeString(
          ca,
          new String(Base64.getDecoder().decode(admin.getCaCertData()), StandardCharsets.UTF_8));
    }
    Path file = work.resolve("reader-kubeconfig.yaml");
    OwnerOnly.write(file, KdraChart.kubeconfig(admin, ca, READER, token));
    return file;
  }
}
