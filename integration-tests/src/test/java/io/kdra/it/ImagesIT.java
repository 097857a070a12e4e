package io.kdra.it;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import com.fasterxml.jackson.databind.ObjectMapper;
import io.fabric8.kubernetes.api.model.HasMetadata;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.PodBuilder;
import io.fabric8.kubernetes.api.model.PodSpec;
import io.fabric8.kubernetes.api.model.PodTemplateSpec;
import io.fabric8.kubernetes.api.model.apps.DaemonSet;
import io.fabric8.kubernetes.api.model.apps.Deployment;
import io.fabric8.kubernetes.api.model.resource.v1.ResourceSlice;
import io.fabric8.kubernetes.client.Config;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.utils.Serialization;
import io.kdra.it.chart.HelmTemplate;
import io.kdra.it.chart.KdraChart;
import io.kdra.it.controlplane.ControlPlane;
import io.kdra.it.nodes.RealNode;
import io.kdra.it.nodes.RealNodeBinaries;
import io.kdra.it.registry.LocalRegistry;
import io.kdra.it.services.BuiltImages;
import io.kdra.it.services.Dra;
import io.kdra.it.services.Stack;
import io.kdra.it.support.ServiceProcess;
import io.kdra.it.support.TestFiles;
import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.extension.ExtensionContext;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.api.extension.TestWatcher;

/**
 * The four images, as the build made them ({@code <service>/target/container-image/}), pushed to a
 * {@link LocalRegistry} and run where users run them: pulled by a real node's containerd ({@link
 * RealNode}) and started from the chart's own pod templates (its security contexts, mounts, probes
 * and configuration), each as a Pod bound to the node by name (this test runs no
 * kube-controller-manager or kube-scheduler; {@code HelmInstallIT} installs the chart on a complete
 * control plane). The chart's values for a cluster without a pod network put the pods on the host's
 * network, each service on a port of its own, with the API server in place of the {@code
 * kubernetes} Service. Each container must pass the chart's readiness probe as the kubelet runs it,
 * and runs as the intended user: 185 without a capability for the three Deployments; root without a
 * capability and without privilege escalation for the device-driver (the kubelet's and CDI's host
 * directories belong to root).
 */
@ExtendWith(ControlPlane.class)
class ImagesIT {

  private static final String NODE = "img-a";
  private static final List<String> SERVICES = BuiltImages.SERVICES;
  private static final Duration READY_TIMEOUT = Duration.ofSeconds(240);

  /** Quarkus' start-up line: {@code ... started in 2.345s. Listening on: ...}. */
  private static final Pattern STARTED = Pattern.compile("started in (\\d+\\.\\d+)s");

  private static final HttpClient HTTP =
      HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(2)).build();

  private static KubernetesClient client;
  private static LocalRegistry registry;
  private static RealNode node;
  private static final Map<String, Integer> PORTS = new LinkedHashMap<>();

  /** The slice-publisher's inventory gRPC, a port of its own (the chart's 9000). */
  private static int publisherGrpcPort;

  private static final Map<String, Pod> PODS = new LinkedHashMap<>();
  private static final Map<String, Long> READY_MILLIS = new LinkedHashMap<>();
  private static final Map<String, String> IMAGES = new LinkedHashMap<>();

  @BeforeAll
  static void imagesRunOnARealNode(ControlPlane.Running cp) throws Exception {
    BuiltImages.assumeRunnable();
    client = cp.client();
    KdraChart.install(client);
    registry = LocalRegistry.start();
    node =
        RealNode.start(
            NODE,
            Path.of("target", "rn", NODE).toAbsolutePath(),
            RealNodeBinaries.fromCache(),
            client,
            cp.server().getKubeConfigYaml());
    SERVICES.forEach(s -> PORTS.put(s, ServiceProcess.freePort()));
    publisherGrpcPort = ServiceProcess.freePort();

    Config admin = Config.fromKubeconfig(cp.server().getKubeConfigYaml());
    URI api = URI.create(admin.getMasterUrl());
    List<HasMetadata> chart = render(api);
    for (HasMetadata o : chart) {
      // the services' configuration, and the inventory gRPC's certificate and CA
      if (o.getKind().equals("ConfigMap") || o.getKind().equals("Secret")) {
        client.resource(o).forceConflicts().serverSideApply();
      }
    }
    // what kube-controller-manager's root-CA publisher would have put there
    client
        .configMaps()
        .inNamespace(KdraChart.NAMESPACE)
        .resource(
            new io.fabric8.kubernetes.api.model.ConfigMapBuilder()
                .withNewMetadata()
                .withName("kube-root-ca.crt")
                .endMetadata()
                .addToData("ca.crt", BuiltImages.caCertificate(admin))
                .build())
        .forceConflicts()
        .serverSideApply();
    for (String service : SERVICES) {
      PodTemplateSpec template = template(chart, service);
      String image = template.getSpec().getContainers().get(0).getImage();
      // <registry>/<repository>:<tag>, as the chart's image values render it
      String repositoryAndTag = image.substring(registry.address.length() + 1);
      String repository = repositoryAndTag.substring(0, repositoryAndTag.lastIndexOf(':'));
      String tag = repositoryAndTag.substring(repositoryAndTag.lastIndexOf(':') + 1);
      long pushStart = System.nanoTime();
      IMAGES.put(service, registry.push(BuiltImages.archive(service), repository, tag));
      System.out.printf(
          "[images] pushed %s in %d ms%n", image, (System.nanoTime() - pushStart) / 1_000_000);
      assertThat(IMAGES.get(service)).isEqualTo(image);
    }
    Map<String, Long> created = new LinkedHashMap<>();
    for (String service : SERVICES) {
      created.put(service, System.nanoTime());
      PODS.put(service, client.resource(pod(template(chart, service), service)).create());
    }
    // the start-up time: from the pod's creation (the image not yet pulled) until the service
    // first answers its readiness check, polled here more often than the chart's probe
    try {
      await()
          .atMost(READY_TIMEOUT)
          .pollInterval(Duration.ofMillis(100))
          .untilAsserted(
              () -> {
                for (String service : SERVICES) {
                  if (!READY_MILLIS.containsKey(service) && ready(service)) {
                    READY_MILLIS.put(
                        service, (System.nanoTime() - created.get(service)) / 1_000_000);
                  }
                }
                assertThat(READY_MILLIS.keySet()).containsExactlyInAnyOrderElementsOf(SERVICES);
              });
    } catch (AssertionError | RuntimeException e) {
      dump("startup");
      throw e;
    }
  }

  @RegisterExtension
  static final TestWatcher DUMP_ON_FAILURE =
      new TestWatcher() {
        @Override
        public void testFailed(ExtensionContext context, Throwable cause) {
          dump(context.getRequiredTestMethod().getName());
        }
      };

  /** The node's logs (the containers' too), its runtime's view and the pods, for a failure. */
  private static void dump(String what) {
    Path target = Path.of("target", "it-dumps", "ImagesIT", what).toAbsolutePath();
    if (node != null) {
      node.dumpTo(target);
    }
    for (Pod pod : PODS.values()) {
      Pod current = Dra.get(client, pod);
      if (current != null) {
        TestFiles.write(
            target.resolve("pods").resolve(pod.getMetadata().getName() + ".yaml"),
            Serialization.asYaml(current));
      }
    }
    System.out.println("[images] " + what + " failed; logs and pods in " + target);
  }

  @AfterAll
  static void podsNodeAndRegistryGone() {
    try {
      if (client != null) {
        for (Pod pod : PODS.values()) {
          // gracefully: the leaders release their Leases for the next test's services
          client.resource(pod).delete();
        }
        if (node != null) {
          await()
              .atMost(Duration.ofSeconds(120))
              .until(() -> PODS.values().stream().allMatch(p -> Dra.get(client, p) == null));
        }
        // the publisher's slices for this node; no later test must see them
        client.resources(ResourceSlice.class).list().getItems().stream()
            .filter(s -> NODE.equals(s.getSpec().getNodeName()))
            .forEach(s -> client.resource(s).delete());
      }
    } finally {
      if (node != null) {
        node.close();
      }
      if (registry != null) {
        registry.close();
      }
    }
  }

  /**
   * Each image, started by the real kubelet from the chart's pod template, passes the chart's
   * readiness probe (the pod's Ready condition) and says how long it took to start.
   */
  @Test
  void everyImageStartsAndPassesTheChartsReadinessProbe() {
    await()
        .atMost(READY_TIMEOUT)
        .untilAsserted(
            () -> {
              for (String service : SERVICES) {
                Pod pod = Dra.get(client, PODS.get(service));
                assertThat(pod.getStatus().getConditions())
                    .as(service + " Ready")
                    .anyMatch(c -> c.getType().equals("Ready") && c.getStatus().equals("True"));
              }
            });
    // the line comes once every startup observer has run, which may be after the first ready
    await()
        .atMost(Duration.ofSeconds(60))
        .untilAsserted(
            () -> {
              for (String service : SERVICES) {
                assertThat(quarkusStartup(service)).as(service + " start-up line").isNotNull();
              }
            });
    StringBuilder report =
        new StringBuilder(
            "service\tcompressed MiB\tready after create (ms)\tQuarkus started in (s)\n");
    for (String service : SERVICES) {
      Pod pod = Dra.get(client, PODS.get(service));
      assertThat(pod.getStatus().getContainerStatuses().get(0).getImage())
          .isEqualTo(IMAGES.get(service));
      String started = quarkusStartup(service);
      long compressed = registry.compressedSize("kdra/" + service, tag(service));
      report.append(
          String.format(
              "%s\t%.1f\t%d\t%s%n",
              service, compressed / 1048576.0, READY_MILLIS.get(service), started));
    }
    System.out.print(
        "[images] start-up on a real node (all four pods created at once):\n" + report);
    TestFiles.write(Path.of("target", "image-benchmarks.txt").toAbsolutePath(), report.toString());
  }

  /**
   * The Deployments' processes run as 185 with no capability; the device-driver's as root with no
   * capability and no way to gain one (no_new_privs), as the chart's security contexts say.
   */
  @Test
  void everyImageRunsAsTheUserTheChartIntends() throws Exception {
    for (String service : SERVICES) {
      // the image's own default, for a pod without a securityContext
      assertThat(registry.config("kdra/" + service, tag(service)).path("User").asText())
          .as(service + " image user")
          .isEqualTo("185");
      Map<String, String> status = processStatus(PODS.get(service));
      String uid = service.equals("device-driver") ? "0" : "185";
      assertThat(status.get("Uid").split("\\s+")).as(service + " uids").containsOnly(uid);
      assertThat(status.get("Gid").split("\\s+")).as(service + " gids").containsOnly(uid);
      assertThat(status.get("CapEff")).as(service + " capabilities").isEqualTo("0000000000000000");
      assertThat(status.get("CapPrm")).as(service + " permitted").isEqualTo("0000000000000000");
      assertThat(status.get("NoNewPrivs")).as(service + " no_new_privs").isEqualTo("1");
    }
  }

  /** The seconds Quarkus says the service took to start, from its container's log; or null. */
  private static String quarkusStartup(String service) {
    return node.containerLog(Dra.get(client, PODS.get(service)), service).stream()
        .map(STARTED::matcher)
        .filter(Matcher::find)
        .map(m -> m.group(1))
        .findFirst()
        .orElse(null);
  }

  /** The chart, rendered for this node and registry, every component on. */
  private static List<HasMetadata> render(URI api) {
    List<String> values =
        new ArrayList<>(
            List.of(
                "imageRegistry=" + registry.address,
                "driverNames.gpu=" + Stack.DRIVER,
                "computeClassBridge.enabled=true",
                "computeClassBridge.installComputeClassCRD=true",
                "claimController.config.leader-election.lease-name=" + KdraChart.CONTROLLER_LEASE,
                "slicePublisher.config.leader-election.lease-name=" + KdraChart.PUBLISHER_LEASE,
                "computeClassBridge.config.leader-election.lease-name=" + KdraChart.BRIDGE_LEASE,
                // the real node's directories, which its kubelet and containerd use
                "deviceDriver.kubeletDir=" + node.pluginsDir().getParent(),
                "deviceDriver.cdiDir=" + node.cdiDir(),
                // no pod network: the host's, with each service on a port of its own, and the API
                // server in place of the kubernetes Service (no kube-proxy)
                "hostNetwork=true",
                "apiServer.host=" + api.getHost(),
                "apiServer.port=" + api.getPort(),
                "slicePublisher.grpcPort=" + publisherGrpcPort,
                // the Service's name needs cluster DNS and a Service network
                "deviceDriver.config.publisher.address=127.0.0.1:" + publisherGrpcPort,
                // the pod is bound to the node by name: no node labels to match
                "deviceDriver.affinity=null"));
    Map<String, String> components =
        Map.of(
            "slice-publisher",
            "slicePublisher",
            "device-driver",
            "deviceDriver",
            "claim-controller",
            "claimController",
            "computeclass-bridge",
            "computeClassBridge");
    // each service on a free port of the host's network
    components.forEach((service, key) -> values.add(key + ".httpPort=" + PORTS.get(service)));
    String yaml =
        HelmTemplate.render(
            ServiceProcess.moduleDir("helm").resolve("kdra"),
            KdraChart.RELEASE,
            KdraChart.NAMESPACE,
            ControlPlane.VERSION,
            values);
    List<HasMetadata> objects = new ArrayList<>();
    for (String doc : yaml.split("(?m)^---\\s*$")) {
      if (!doc.lines().allMatch(l -> l.isBlank() || l.trim().startsWith("#"))) {
        objects.add(Serialization.unmarshal(doc));
      }
    }
    return objects;
  }

  private static PodTemplateSpec template(List<HasMetadata> chart, String service) {
    for (HasMetadata o : chart) {
      if (!service.equals(o.getMetadata().getLabels().get("app.kubernetes.io/component"))) {
        continue;
      }
      if (o instanceof Deployment d) {
        return d.getSpec().getTemplate();
      }
      if (o instanceof DaemonSet ds) {
        return ds.getSpec().getTemplate();
      }
    }
    throw new IllegalStateException("the chart renders no workload for " + service);
  }

  /**
   * The chart's pod template as the one Pod its controller would make, with what this cluster lacks
   * (see the class comment).
   */
  private static Pod pod(PodTemplateSpec template, String service) {
    PodSpec spec = Serialization.clone(template.getSpec());
    spec.setNodeName(NODE);
    spec.setTerminationGracePeriodSeconds(5L);
    return new PodBuilder()
        .withMetadata(Serialization.clone(template.getMetadata()))
        .editMetadata()
        .withName(KdraChart.RELEASE + "-" + service + "-" + NODE)
        .withNamespace(KdraChart.NAMESPACE)
        .endMetadata()
        .withSpec(spec)
        .build();
  }

  private static boolean ready(String service) {
    try {
      return HTTP.send(
                  HttpRequest.newBuilder(
                          URI.create("http://127.0.0.1:" + PORTS.get(service) + "/q/health/ready"))
                      .timeout(Duration.ofSeconds(2))
                      .build(),
                  HttpResponse.BodyHandlers.discarding())
              .statusCode()
          == 200;
    } catch (IOException e) {
      return false;
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      return false;
    }
  }

  /** {@code /proc/<pid>/status} of the container's process, as key to value. */
  private static Map<String, String> processStatus(Pod pod) throws Exception {
    String id = Dra.get(client, pod).getStatus().getContainerStatuses().get(0).getContainerID();
    String inspect = node.crictl("inspect", id.substring(id.indexOf("://") + 3));
    long pid = new ObjectMapper().readTree(inspect).path("info").path("pid").asLong();
    assertThat(pid).as("the container's pid (crictl inspect)").isPositive();
    Map<String, String> status = new LinkedHashMap<>();
    for (String line : Files.readAllLines(Path.of("/proc", Long.toString(pid), "status"))) {
      int colon = line.indexOf(':');
      status.put(line.substring(0, colon), line.substring(colon + 1).trim());
    }
    return status;
  }

  private static String tag(String service) {
    return IMAGES.get(service).substring(IMAGES.get(service).lastIndexOf(':') + 1);
  }
}
