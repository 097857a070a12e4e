package io.kdra.it.services;

import io.fabric8.kubeapitest.cert.CertManager;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.kdra.it.chart.KdraChart;
import io.kdra.it.nodes.SimulatedNode;
import io.kdra.it.support.OwnerOnly;
import io.kdra.it.support.PausableProxy;
import io.kdra.it.support.ServiceProcess;
import io.kdra.it.support.TestFiles;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.bouncycastle.asn1.x509.GeneralName;

/**
 * Starts the four kdra services of a stack, each configured as the chart configures it (leader
 * election on the chart's Leases, driver authentication) with the harness's short periods and
 * paths, and with a token of its own ServiceAccount.
 */
final class StackServiceStarts {

  private final KubernetesClient client;
  private final String namespace;
  private final Path logDir;

  /** What every service gets besides its identity, the test's properties included. */
  private final Map<String, String> kube;

  private final ServiceIdentities identities;
  private final StackNodes nodes;
  private final StackServices services;

  /** The publishers' inventory gRPC ports the drivers dial, once they are started. */
  private List<Integer> publisherPorts;

  /** Whether each driver dials them through a {@link PausableProxy} of its own. */
  private boolean publisherLinks;

  /** Whether kube-controller-manager runs beside the stack (its full control plane). */
  private final boolean controllerManager;

  StackServiceStarts(
      KubernetesClient client,
      String namespace,
      Path logDir,
      Map<String, String> properties,
      ServiceIdentities identities,
      StackNodes nodes,
      StackServices services,
      boolean controllerManager) {
    this.controllerManager = controllerManager;
    this.client = client;
    this.namespace = namespace;
    this.logDir = logDir;
    this.kube = serviceProperties();
    this.kube.putAll(properties);
    this.identities = identities;
    this.nodes = nodes;
    this.services = services;
  }

  /**
   * What every service gets besides its identity: no OpenTelemetry SDK (no collector here, unless a
   * test adds one). (Dev services never run in the prod profile the services run in.)
   */
  private static Map<String, String> serviceProperties() {
    Map<String, String> p = new LinkedHashMap<>();
    p.put("quarkus.otel.sdk.disabled", "true");
    return p;
  }

  /** The slice-publisher; returns the port of its inventory gRPC. */
  int publisher() {
    return publishers(1, false).get(0);
  }

  /**
   * The slice-publisher, or {@code n} replicas ({@code slice-publisher-1} ...) that elect a leader
   * with short periods (as the claim-controllers) when {@code replicas}; returns the ports of their
   * inventory gRPCs.
   */
  List<Integer> publishers(int n, boolean replicas) {
    return publishers(n, replicas, false);
  }

  /**
   * As above; with {@code webhook}, each replica also serves the admission webhook over HTTPS, as
   * the chart configures it, on a port of its own with one certificate for 127.0.0.1, and the API
   * server is to reach them through one {@link PublisherWebhook} link.
   */
  List<Integer> publishers(int n, boolean replicas, boolean webhook) {
    Map<String, String> publisher = new LinkedHashMap<>(kube);
    // as the chart has it (featureGates.driverAuthentication): each driver stream's token is
    // reviewed and must name the node whose devices it reports
    publisher.put("kdra.slice-publisher.auth.enabled", "true");
    // only the chart's driver ServiceAccount, with tokens for the publisher's audience
    publisher.put("kdra.slice-publisher.auth.service-accounts", KdraChart.driverAccount());
    // leader election on, as the chart has it, on the chart's Lease (which its Role may renew);
    // one identity for every stack of a run, so that a stack's publisher takes over the Lease of
    // the previous stack's at once instead of waiting for it to expire
    publisher.put("kdra.slice-publisher.leader-election.enabled", "true");
    publisher.put("kdra.slice-publisher.leader-election.lease-name", KdraChart.PUBLISHER_LEASE);
    publisher.put("kdra.slice-publisher.leader-election.lease-namespace", KdraChart.NAMESPACE);
    publisher.put("kdra.slice-publisher.leader-election.identity", "slice-publisher");
    publisher.put("kdra.slice-publisher.resync-period", "5s");
    if (replicas) {
      publisher.put("kdra.slice-publisher.leader-election.lease-duration", "6s");
      publisher.put("kdra.slice-publisher.leader-election.renew-deadline", "4s");
      publisher.put("kdra.slice-publisher.leader-election.retry-period", "1s");
    }
    Map<String, String> identity =
        identities.environment(
            KdraChart.PUBLISHER, "slice-publisher", KdraChart.token(client, KdraChart.PUBLISHER));
    Path webhookDir = Path.of("target", "it-webhook", namespace).toAbsolutePath();
    if (webhook) {
      webhookCertificate(webhookDir);
    }
    List<Integer> ports = new ArrayList<>();
    List<Integer> webhookPorts = new ArrayList<>();
    for (int i = 1; i <= n; i++) {
      String name = replicas ? "slice-publisher-" + i : "slice-publisher";
      Map<String, String> p = new LinkedHashMap<>(publisher);
      if (webhook) {
        // what the chart's ConfigMap sets (AdmissionWebhookTest in helm-tests), a port each
        int sslPort = ServiceProcess.freePort();
        webhookPorts.add(sslPort);
        p.put("quarkus.http.ssl-port", String.valueOf(sslPort));
        p.put("quarkus.http.ssl.certificate.files", webhookDir.resolve("tls.crt").toString());
        p.put("quarkus.http.ssl.certificate.key-files", webhookDir.resolve("tls.key").toString());
      }
      p.put("kdra.slice-publisher.leader-election.identity", name);
      // the inventory gRPC's own port (the chart's 9000), kept across restarts with the properties
      int grpcPort = ServiceProcess.freePort();
      p.put("quarkus.grpc.server.port", String.valueOf(grpcPort));
      ServiceProcess pub = ServiceProcess.start("slice-publisher", name, p, identity, logDir);
      if (replicas) {
        services.putReplica(pub);
      } else {
        services.put(pub);
      }
      ports.add(grpcPort);
    }
    if (webhook) {
      services.putWebhook(
          new PublisherWebhook(
              PausableProxy.toLocalPorts("webhook-link", webhookPorts),
              TestFiles.read(webhookDir.resolve("tls.crt"))
                  .getBytes(java.nio.charset.StandardCharsets.US_ASCII)));
    }
    return ports;
  }

  /** A self-signed certificate for 127.0.0.1 and its key, the key the owner's only. */
  private static void webhookCertificate(Path dir) {
    OwnerOnly.createDirectories(dir);
    Path key = dir.resolve("tls.key");
    CertManager.generateKeyAndCertificate(
        "CN=kdra-slice-publisher-webhook",
        key.toFile(),
        dir.resolve("tls.crt").toFile(),
        new GeneralName(GeneralName.iPAddress, "127.0.0.1"));
    OwnerOnly.restrict(key);
  }

  /** One device-driver per node, with the node's simulated inventory. */
  void drivers(int grpcPort) {
    drivers(List.of(grpcPort), false);
  }

  /**
   * One device-driver per node; with {@code links}, each dials the publishers through a {@link
   * PausableProxy} of its own ({@link StackServices#publisherLink}), which spreads its connections
   * over them as their Service would, and which a test may pause or cut.
   */
  void drivers(List<Integer> publisherPorts, boolean links) {
    this.publisherPorts = List.copyOf(publisherPorts);
    this.publisherLinks = links;
    for (SimulatedNode node : nodes.all()) {
      driver(node, false);
    }
  }

  /**
   * The device-driver of {@code node}, dialling the publishers {@link #drivers} was given: for the
   * stack's own nodes, and for a node {@code launched} while the stack runs ({@link
   * Stack#addNode}), whose driver pod its Node owns ({@link KdraChart#driverPod(KubernetesClient,
   * String, boolean, boolean)}).
   */
  ServiceProcess driver(SimulatedNode node, boolean launched) {
    if (publisherPorts == null) {
      throw new IllegalStateException("the publishers are not started yet");
    }
    // the node's token and sockets are in it: the owner's only, as the kubelet's are
    Path dir = OwnerOnly.createDirectories(nodes.nodeDir(node.name()));
    Path inventory = dir.resolve("inventory.yaml");
    TestFiles.write(inventory, node.inventory());
    Map<String, String> driver = new LinkedHashMap<>(kube);
    driver.put("kdra.device-driver.node-name", node.name());
    driver.put("kdra.device-driver.backend", "simulated");
    driver.put("kdra.device-driver.inventory-file", inventory.toString());
    driver.put("kdra.device-driver.discovery-interval", "1s");
    driver.put(
        "kdra.device-driver.kubelet-registry-dir", nodes.registryDir(node.name()).toString());
    driver.put("kdra.device-driver.kubelet-plugins-dir", nodes.pluginsDir(node.name()).toString());
    driver.put("kdra.device-driver.cdi-dir", nodes.driverCdiDir(node.name()).toString());
    driver.put(
        "kdra.device-driver.checkpoint-file", nodes.driverCheckpointFile(node.name()).toString());
    driver.put("kdra.device-driver.sharing.mps-root", nodes.mpsRoot(node.name()).toString());
    // its GPUs outlive the driver process, as real ones do, and a test can read them
    driver.put(
        "kdra.device-driver.test-only.simulated-gpu-state-file",
        nodes.simulatedGpuStateFile(node.name()).toString());
    driver.putAll(node.driverProperties());
    String publisherAddress = "127.0.0.1:" + publisherPorts.get(0);
    if (publisherLinks) {
      PausableProxy link =
          PausableProxy.toLocalPorts("publisher-link-" + node.name(), publisherPorts);
      services.putPublisherLink(node.name(), link);
      publisherAddress = link.address();
    }
    driver.put("kdra.device-driver.publisher.address", publisherAddress);
    // the tokens the kubelet would project into the DaemonSet's pod on this node: one for
    // the driver's API client, one for the slice-publisher's audience (the chart's
    // publisher-token volume), re-read on every connect
    Pod driverPod = KdraChart.driverPod(client, node.name(), nodes.real(), launched);
    String token = KdraChart.token(client, KdraChart.DRIVER, driverPod);
    Path tokenFile = nodes.publisherTokenFile(node.name());
    OwnerOnly.write(
        tokenFile,
        KdraChart.publisherToken(
            client, KdraChart.NAMESPACE, KdraChart.serviceAccount(KdraChart.DRIVER), driverPod));
    driver.put("kdra.device-driver.publisher.token-file", tokenFile.toString());
    driver.put("kdra.device-driver.publisher.initial-backoff", "250ms");
    driver.put("kdra.device-driver.publisher.max-backoff", "2s");
    // snapshots keep coming, as from a live node: deleted nodes must stay deleted regardless
    driver.put("kdra.device-driver.publisher.heartbeat", "2s");
    Map<String, String> env =
        identities.environment(KdraChart.DRIVER, "device-driver-" + node.name(), token);
    String name = "device-driver-" + node.name();
    ServiceProcess p =
        node.driverMount() == null
            ? ServiceProcess.start("device-driver", name, driver, env, logDir)
            : ServiceProcess.startInside(
                node.driverMount(), "device-driver", name, driver, env, logDir);
    services.put(p);
    return p;
  }

  /**
   * One claim-controller, or {@code controllers} replicas that elect a leader; with {@code
   * apiLinks}, each reaches the API server through a {@link PausableProxy} of its own.
   */
  void controllers(int controllers, boolean apiLinks) {
    Map<String, String> controller = new LinkedHashMap<>(kube);
    if (!controllerManager) {
      // nobody else makes the claims of templates; beside kube-controller-manager the service's
      // default (adopt), which the chart leaves in place
      controller.putIfAbsent("kdra.claim-controller.template-mode", "own");
    }
    String controllerToken = KdraChart.token(client, KdraChart.CONTROLLER);
    java.util.function.Function<String, Map<String, String>> identityOf =
        replica -> {
          if (!apiLinks) {
            return identities.environment(
                KdraChart.CONTROLLER, "claim-controller", controllerToken);
          }
          PausableProxy link =
              PausableProxy.start("api-link-" + replica, List.of(identities.apiServer()));
          services.putApiLink(replica, link);
          return identities.environmentThrough(
              "https://" + link.address(), KdraChart.CONTROLLER, replica, controllerToken);
        };
    controller.put("kdra.claim-controller.retry.initial-backoff", "500ms");
    controller.put("kdra.claim-controller.retry.max-backoff", "5s");
    if (controllers == 1) {
      controller.put("kdra.claim-controller.leader-election.enabled", "false");
      ServiceProcess cc =
          ServiceProcess.start(
              "claim-controller",
              "claim-controller",
              controller,
              identityOf.apply("claim-controller"),
              logDir);
      services.put(cc);
    } else {
      // replicas elect a leader through the chart's Lease (the only one its Role may renew, in
      // the release namespace), with short periods so that a standby takes over within seconds
      // of the leader's crash
      controller.put("kdra.claim-controller.leader-election.enabled", "true");
      controller.put(
          "kdra.claim-controller.leader-election.lease-name", KdraChart.CONTROLLER_LEASE);
      controller.put("kdra.claim-controller.leader-election.lease-namespace", KdraChart.NAMESPACE);
      controller.put("kdra.claim-controller.leader-election.lease-duration", "6s");
      controller.put("kdra.claim-controller.leader-election.renew-deadline", "4s");
      controller.put("kdra.claim-controller.leader-election.retry-period", "1s");
      for (int i = 1; i <= controllers; i++) {
        String replica = "claim-controller-" + i;
        // the leader's identity, as HOSTNAME (the pod name) is in a Deployment
        Map<String, String> env = new LinkedHashMap<>(identityOf.apply(replica));
        env.put("HOSTNAME", replica);
        ServiceProcess cc =
            ServiceProcess.start("claim-controller", replica, controller, env, logDir);
        services.putReplica(cc);
      }
    }
  }

  /** No computeclass-bridge (0), one, or {@code bridges} replicas that elect a leader. */
  void bridges(int bridges) {
    if (bridges <= 0) {
      return;
    }
    // the ComputeClass CRD came with the chart (computeClassBridge.installComputeClassCRD)
    Map<String, String> b = new LinkedHashMap<>(kube);
    b.put("kdra.computeclass-bridge.namespaces.names", namespace);
    Map<String, String> bridgeIdentity =
        identities.environment(
            KdraChart.BRIDGE, "computeclass-bridge", KdraChart.token(client, KdraChart.BRIDGE));
    if (bridges == 1) {
      b.put("kdra.computeclass-bridge.leader-election.enabled", "false");
      ServiceProcess br =
          ServiceProcess.start(
              "computeclass-bridge", "computeclass-bridge", b, bridgeIdentity, logDir);
      services.put(br);
    } else {
      // as the claim-controllers: the chart's Lease (the only one its Role may renew, in the
      // release namespace), short periods
      b.put("kdra.computeclass-bridge.leader-election.enabled", "true");
      b.put("kdra.computeclass-bridge.leader-election.lease-name", KdraChart.BRIDGE_LEASE);
      b.put("kdra.computeclass-bridge.leader-election.lease-namespace", KdraChart.NAMESPACE);
      b.put("kdra.computeclass-bridge.leader-election.lease-duration", "6s");
      b.put("kdra.computeclass-bridge.leader-election.renew-deadline", "4s");
      b.put("kdra.computeclass-bridge.leader-election.retry-period", "1s");
      for (int i = 1; i <= bridges; i++) {
        String replica = "computeclass-bridge-" + i;
        Map<String, String> env = new LinkedHashMap<>(bridgeIdentity);
        env.put("HOSTNAME", replica);
        ServiceProcess br = ServiceProcess.start("computeclass-bridge", replica, b, env, logDir);
        services.putReplica(br);
      }
    }
  }
}
