package io.kdra.it;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.catchThrowableOfType;
import static org.awaitility.Awaitility.await;

import com.fasterxml.jackson.databind.ObjectMapper;
import io.fabric8.kubernetes.api.model.GenericKubernetesResource;
import io.fabric8.kubernetes.api.model.NamespaceBuilder;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.Secret;
import io.fabric8.kubernetes.api.model.admissionregistration.v1.ValidatingWebhookConfiguration;
import io.fabric8.kubernetes.api.model.apps.Deployment;
import io.fabric8.kubernetes.api.model.discovery.v1.EndpointSlice;
import io.fabric8.kubernetes.api.model.resource.v1.DeviceClaimConfigurationBuilder;
import io.fabric8.kubernetes.api.model.resource.v1.ResourceClaim;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientException;
import io.fabric8.kubernetes.client.dsl.Resource;
import io.fabric8.kubernetes.client.utils.Serialization;
import io.kdra.core.config.OpaqueConfigDecoder;
import io.kdra.it.chart.CertManagerControllers;
import io.kdra.it.chart.HelmRelease;
import io.kdra.it.controlplane.ClusterApiServer;
import io.kdra.it.nodes.MultiNodeCluster;
import io.kdra.it.nodes.NodeRegistration;
import io.kdra.it.nodes.RealNode;
import io.kdra.it.services.BuiltImages;
import io.kdra.it.services.Dra;
import io.kdra.it.services.PublisherTls;
import io.kdra.it.support.OwnerOnly;
import io.kdra.it.support.ServiceProcess;
import io.kdra.it.support.TestFiles;
import java.io.ByteArrayInputStream;
import java.math.BigInteger;
import java.net.InetAddress;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Path;
import java.security.cert.CertificateFactory;
import java.security.cert.X509Certificate;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Base64;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.regex.Pattern;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.MethodOrderer;
import org.junit.jupiter.api.Order;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestMethodOrder;
import org.junit.jupiter.api.extension.ExtensionContext;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.api.extension.TestWatcher;

/**
 * Issues #18 and #37, the chart with cert-manager as a user's cluster runs it: the {@link
 * MultiNodeCluster} (two real nodes, a pod network, kube-proxy, CoreDNS), the chart's defaults (two
 * publishers, two controllers, a driver on every node, TLS, the webhook and the policy, the
 * publisher's NetworkPolicy) and only what docs/user/install.md has a user set for cert-manager:
 * {@code slicePublisher.tls.source: cert-manager} with an Issuer of the cluster's ({@code
 * tls.certManager.issuerRef}), and the images' registry. Real cert-manager controllers (run out of
 * cluster, {@link CertManagerControllers}) issue the certificate into the publisher's Secret and
 * inject its CA into the chart's ValidatingWebhookConfiguration; the API server calls the webhook
 * through its Service, the drivers stream to the publisher by its Service's DNS name, both over TLS
 * with that certificate. A renewal forced as {@code cmctl renew} does is served by both replicas on
 * both ports and trusted by the API server and the drivers without a restart or anyone touching the
 * release.
 */
@TestMethodOrder(MethodOrderer.OrderAnnotation.class)
class CertManagerWebhookIT {

  /** Two nodes: each publisher replica has one of its own, as the chart prefers. */
  private static final int NODES = 2;

  private static final String RELEASE = "kdra";
  private static final String NAMESPACE = "kdra-system";
  private static final String APPS = "apps";

  /** The chart's default driver name (driverNames.gpu) and its DeviceClass. */
  private static final String DRIVER = "gpu.kdra.io";

  /** The simulated backend's built-in inventory: eight GPUs per node. */
  private static final int DEVICES_PER_NODE = 8;

  private static final List<String> SERVICES =
      List.of("slice-publisher", "device-driver", "claim-controller");

  /** The build's images are imported into the nodes under this registry ({@code localhost}). */
  private static final String REGISTRY = "localhost";

  private static final String WEBHOOK = "opaque-config.kdra.io";
  private static final String PUBLISHER = RELEASE + "-slice-publisher";
  private static final String CERTIFICATE = PUBLISHER + "-tls";
  private static final String SERVICE_NAME = PUBLISHER + "." + NAMESPACE + ".svc";
  private static final String CA_ISSUER = "cluster-ca";
  private static final String COMPONENT = "app.kubernetes.io/component";

  /** Six JVMs starting on a loaded 2-core machine, after cert-manager issued the certificate. */
  private static final Duration READY_TIMEOUT = Duration.ofSeconds(300);

  /**
   * A renewed Secret reaches the pod's volume at the kubelet's next sync of the pod (up to about a
   * minute and a half), and the publisher serves it within its 30 s reload period.
   */
  private static final Duration RENEWED_TIMEOUT = Duration.ofSeconds(240);

  /** The driver's log line when the publisher acknowledged its stream. */
  private static final Pattern CONNECTED = Pattern.compile("inventory stream to \\S+ connected");

  private static final ObjectMapper JSON = new ObjectMapper();
  private static final HttpClient HTTP =
      HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(3)).build();

  private static MultiNodeCluster cluster;
  private static KubernetesClient client;
  private static CertManagerControllers certManager;
  private static Path dir;

  @BeforeAll
  static void installedWithCertManagerOnAMultiNodeCluster() throws Exception {
    Assumptions.assumeTrue(
        MultiNodeCluster.available(), "a multi-node cluster needs root, ip and nsenter");
    BuiltImages.assumeBuilt(SERVICES);
    Assumptions.assumeTrue(
        CertManagerControllers.built(),
        "cert-manager is not built in "
            + CertManagerControllers.dir()
            + " (integration-tests/scripts/build-cert-manager.sh)");
    dir = Path.of("target", "cert-manager-it").toAbsolutePath();
    TestFiles.deleteRecursively(dir);
    long started = System.nanoTime();
    cluster = MultiNodeCluster.start(NODES, Path.of("target", "mcm"));
    client = cluster.client;
    Path kubeconfig = dir.resolve("admin.kubeconfig");
    OwnerOnly.write(kubeconfig, cluster.api.kubeconfig(ClusterApiServer.ADMIN));
    // CoreDNS (the drivers find the publisher by name) while the images go into the nodes
    CompletableFuture<MultiNodeCluster> dns = CompletableFuture.supplyAsync(cluster::withDns);
    for (RealNode node : cluster.nodes) {
      for (String service : SERVICES) {
        assertThat(BuiltImages.reference(service))
            .isEqualTo(REGISTRY + "/kdra/" + service + ":" + BuiltImages.appVersion());
        node.importImage(BuiltImages.archive(service), REGISTRY + "/kdra/" + service);
      }
    }
    dns.join();
    certManager =
        CertManagerControllers.start(client, kubeconfig, dir.resolve("logs/cert-manager.log"));

    // the walkthrough: label the accelerator nodes, the release's namespace at Pod Security level
    // privileged (the driver's host paths), then helm install
    for (RealNode node : cluster.nodes) {
      NodeRegistration.onConflictRetry(
          () ->
              client
                  .nodes()
                  .withName(node.name)
                  .edit(
                      n -> {
                        n.getMetadata().getLabels().put("kdra.io/accelerator", "true");
                        return n;
                      }));
    }
    client
        .namespaces()
        .resource(
            new NamespaceBuilder()
                .withNewMetadata()
                .withName(NAMESPACE)
                .addToLabels("pod-security.kubernetes.io/enforce", "privileged")
                .endMetadata()
                .build())
        .create();
    client
        .namespaces()
        .resource(new NamespaceBuilder().withNewMetadata().withName(APPS).endMetadata().build())
        .create();
    // a CA of the cluster's: a self-signed CA certificate, and an Issuer that signs with it
    for (String yaml :
        List.of(
            """
        apiVersion: cert-manager.io/v1
        kind: Issuer
        metadata: {name: selfsigned, namespace: %1$s}
        spec: {selfSigned: {}}
        """,
            """
        apiVersion: cert-manager.io/v1
        kind: Certificate
        metadata: {name: %2$s, namespace: %1$s}
        spec:
          isCA: true
          commonName: %2$s
          secretName: %2$s
          privateKey: {algorithm: ECDSA, size: 256}
          issuerRef: {name: selfsigned, kind: Issuer}
        """,
            """
        apiVersion: cert-manager.io/v1
        kind: Issuer
        metadata: {name: %2$s, namespace: %1$s}
        spec: {ca: {secretName: %2$s}}
        """)) {
      client
          .resource(
              Serialization.unmarshal(
                  yaml.formatted(NAMESPACE, CA_ISSUER), GenericKubernetesResource.class))
          .serverSideApply();
    }

    Path values = dir.resolve("values.yaml");
    // what install.md has a user set for cert-manager; everything else is the chart's default
    TestFiles.write(
        values,
        """
        imageRegistry: %s
        slicePublisher:
          tls:
            source: cert-manager
            certManager:
              issuerRef: {name: %s}
        """
            .formatted(REGISTRY, CA_ISSUER));
    long installed = System.nanoTime();
    try {
      HelmRelease.run(
          "install-no-wait",
          ServiceProcess.moduleDir("helm").resolve("kdra"),
          RELEASE,
          NAMESPACE,
          kubeconfig,
          List.of(values));
      await("two publishers Ready")
          .atMost(READY_TIMEOUT)
          .pollInterval(Duration.ofSeconds(1))
          .until(() -> readyReplicas(PUBLISHER) == 2);
    } catch (RuntimeException | AssertionError e) {
      dump("install");
      throw e;
    }
    System.out.printf(
        "[cert-manager-it] cluster, images and cert-manager %d ms; helm install to two ready"
            + " publishers %d ms%n",
        (installed - started) / 1_000_000, (System.nanoTime() - installed) / 1_000_000);
  }

  @RegisterExtension
  static final TestWatcher DUMP_ON_FAILURE =
      new TestWatcher() {
        @Override
        public void testFailed(ExtensionContext context, Throwable cause) {
          dump(context.getRequiredTestMethod().getName());
        }
      };

  @AfterAll
  static void stopCluster() {
    if (certManager != null) {
      certManager.close();
    }
    if (cluster != null) {
      cluster.dumpTo(Path.of("target", "it-dumps", "CertManagerWebhookIT").toAbsolutePath());
      cluster.close();
    }
  }

  /**
   * cert-manager issued the chart's Certificate into the publisher's Secret, signed by the CA
   * Issuer, and its injector put that CA into the webhook configuration, which the chart leaves
   * without one.
   */
  @Test
  @Order(1)
  void certManagerIssuesTheCertificateAndInjectsItsCa() throws Exception {
    await().atMost(READY_TIMEOUT).until(() -> ready(certificate().get()));
    Secret secret = tlsSecret();
    X509Certificate ca = pem(secret.getData().get("ca.crt"));
    X509Certificate leaf = pem(secret.getData().get("tls.crt"));
    assertThat(leaf.getIssuerX500Principal()).isEqualTo(ca.getSubjectX500Principal());
    assertThat(PublisherTls.names(leaf)).contains(SERVICE_NAME);

    await()
        .atMost(Duration.ofSeconds(60))
        .untilAsserted(
            () ->
                assertThat(
                        webhookConfiguration().getWebhooks().get(0).getClientConfig().getCaBundle())
                    .as("the injected caBundle")
                    .isEqualTo(secret.getData().get("ca.crt")));
    ValidatingWebhookConfiguration vwc = webhookConfiguration();
    assertThat(vwc.getMetadata().getAnnotations())
        .containsEntry("cert-manager.io/inject-ca-from", NAMESPACE + "/" + CERTIFICATE);
    assertThat(vwc.getWebhooks().get(0).getClientConfig().getUrl()).isNull();
    assertThat(vwc.getWebhooks().get(0).getClientConfig().getService().getName())
        .isEqualTo(PUBLISHER);
  }

  /**
   * Both publishers have addresses of the pod network (the chart's NetworkPolicy rendered, as by
   * default), the Service's EndpointSlice names them, and the API server calls the webhook there
   * with the injected CA: a claim with a good config of our driver is admitted, which failurePolicy
   * Fail allows only once the webhook answered, and the publishers counted its review; a bad one is
   * refused naming the field (by the chart's policy, which the API server runs before webhooks, or
   * the webhook), never "failed calling webhook".
   */
  @Test
  @Order(2)
  void theApiServerCallsTheWebhookThroughItsServiceOnThePodNetwork() throws Exception {
    List<Pod> publishers = publisherPods();
    assertThat(publishers).hasSize(2);
    assertThat(client.network().networkPolicies().inNamespace(NAMESPACE).withName(PUBLISHER).get())
        .as("the chart's NetworkPolicy")
        .isNotNull();
    for (Pod pod : publishers) {
      assertThat(pod.getSpec().getHostNetwork()).isNotEqualTo(Boolean.TRUE);
      assertThat(inCidr(pod.getStatus().getPodIP(), cluster.network.addresses.clusterCidr()))
          .as("%s's address %s", pod.getMetadata().getName(), pod.getStatus().getPodIP())
          .isTrue();
    }
    await()
        .atMost(Duration.ofSeconds(60))
        .untilAsserted(
            () ->
                assertThat(
                        client
                            .resources(EndpointSlice.class)
                            .inNamespace(NAMESPACE)
                            .withLabel("kubernetes.io/service-name", PUBLISHER)
                            .list()
                            .getItems())
                    .flatExtracting(s -> s.getEndpoints())
                    .flatExtracting(e -> e.getAddresses())
                    .containsAll(publishers.stream().map(p -> p.getStatus().getPodIP()).toList()));

    long reviewsBefore = admittedClaimReviews();
    // the webhook is called once the API server's informers have the endpoints: wait for that
    await()
        .atMost(Duration.ofSeconds(60))
        .ignoreExceptions()
        .until(
            () ->
                client
                        .resource(claim("probe", ok("'sharing': {'strategy': 'TimeSlicing'}")))
                        .dryRun()
                        .create()
                    != null);
    ResourceClaim good =
        claim(
            "good-1", ok("'sharing': {'strategy': 'MPS', 'mps': {'activeThreadPercentage': 50}}"));
    assertThat(client.resource(good).create().getMetadata().getUid()).isNotBlank();
    assertThat(admittedClaimReviews())
        .as("claims the publishers' webhook admitted")
        .isGreaterThanOrEqualTo(reviewsBefore + 2);
    assertRefusedNamingTheField("bad-1");
  }

  /**
   * The drivers reach the publisher by its Service's DNS name over TLS with the issued certificate:
   * each driver trusts only the Secret's {@code ca.crt} and checks that name, and every node's pool
   * is published; each replica serves the Secret's certificate on the inventory port.
   */
  @Test
  @Order(3)
  void theDriversStreamToThePublishersServiceWithTheIssuedCertificate() throws Exception {
    await("every node's pool published")
        .atMost(READY_TIMEOUT)
        .pollInterval(Duration.ofSeconds(1))
        .untilAsserted(CertManagerWebhookIT::assertEveryPoolPublished);
    assertThat(
            client
                .configMaps()
                .inNamespace(NAMESPACE)
                .withName(RELEASE + "-device-driver")
                .get()
                .getData()
                .get("application.properties"))
        .contains("kdra.device-driver.publisher.address=" + SERVICE_NAME + ":9000");
    BigInteger issued = pem(tlsSecret().getData().get("tls.crt")).getSerialNumber();
    for (Pod pod : publisherPods()) {
      assertThat(servedSerial(pod, "grpc"))
          .as("the inventory port of %s", pod.getMetadata().getName())
          .isEqualTo(issued);
    }
  }

  /**
   * A renewal forced as {@code cmctl renew} does (the Issuing condition set): cert-manager issues a
   * new certificate (a new key, rotationPolicy Always) into the Secret, the kubelets update the
   * pods' volumes, and both publishers serve it on the webhook and the inventory port without a
   * restart of a pod or its container (both servers read the files again). The API server, trusting
   * the same CA, still calls the webhook, and a driver that connects anew trusts the new
   * certificate.
   */
  @Test
  @Order(4)
  void aRenewedCertificateIsServedAndTrustedWithoutTouchingTheRelease() throws Exception {
    List<Pod> before = publisherPods();
    BigInteger issued = pem(tlsSecret().getData().get("tls.crt")).getSerialNumber();
    Map<String, Integer> restartsBefore = new LinkedHashMap<>();
    for (Pod pod : before) {
      assertThat(servedSerial(pod, "webhook")).as("the webhook's before").isEqualTo(issued);
      assertThat(servedSerial(pod, "grpc")).as("the gRPC's before").isEqualTo(issued);
      restartsBefore.put(pod.getMetadata().getUid(), restarts(pod));
    }

    certificate()
        .editStatus(
            c -> {
              @SuppressWarnings("unchecked")
              Map<String, Object> status =
                  (Map<String, Object>) c.getAdditionalProperties().get("status");
              @SuppressWarnings("unchecked")
              List<Object> conditions = new ArrayList<>((List<Object>) status.get("conditions"));
              Map<String, Object> issuing = new LinkedHashMap<>();
              issuing.put("type", "Issuing");
              issuing.put("status", "True");
              issuing.put("reason", "ManuallyTriggered");
              issuing.put("message", "Certificate re-issuance manually triggered");
              issuing.put(
                  "lastTransitionTime", Instant.now().toString().replaceAll("\\.\\d+Z", "Z"));
              issuing.put("observedGeneration", c.getMetadata().getGeneration());
              conditions.add(issuing);
              status.put("conditions", conditions);
              return c;
            });
    await()
        .atMost(Duration.ofSeconds(120))
        .until(
            () ->
                !pem(tlsSecret().getData().get("tls.crt")).getSerialNumber().equals(issued)
                    && ready(certificate().get()));
    BigInteger renewed = pem(tlsSecret().getData().get("tls.crt")).getSerialNumber();

    long renewedAt = System.nanoTime();
    await("both publishers serve the renewed certificate on both ports")
        .atMost(RENEWED_TIMEOUT)
        .until(
            () ->
                before.stream()
                    .allMatch(
                        p ->
                            renewed.equals(servedSerial(p, "webhook"))
                                && renewed.equals(servedSerial(p, "grpc"))));
    System.out.printf(
        "[cert-manager-it] the renewed certificate served by both publishers %d ms after it was"
            + " issued%n",
        (System.nanoTime() - renewedAt) / 1_000_000);
    List<Pod> after = publisherPods();
    assertThat(after)
        .as("the same pods")
        .extracting(p -> p.getMetadata().getUid())
        .containsExactlyInAnyOrderElementsOf(restartsBefore.keySet());
    for (Pod pod : after) {
      assertThat(restarts(pod))
          .as("restarts of %s's container", pod.getMetadata().getName())
          .isEqualTo(restartsBefore.get(pod.getMetadata().getUid()));
    }

    ResourceClaim good = claim("good-2", ok("'sharing': {'strategy': 'TimeSlicing'}"));
    assertThat(client.resource(good).create().getMetadata().getUid()).isNotBlank();
    assertRefusedNamingTheField("bad-2");

    // a driver that starts now handshakes with the renewed certificate
    Pod driver = driverPods().get(0);
    String node = driver.getSpec().getNodeName();
    client.pods().inNamespace(NAMESPACE).withName(driver.getMetadata().getName()).delete();
    await(node + "'s new driver's stream acknowledged")
        .atMost(READY_TIMEOUT)
        .pollInterval(Duration.ofSeconds(1))
        .until(
            () ->
                driverPods().stream()
                    .filter(p -> p.getSpec().getNodeName().equals(node))
                    .filter(p -> !p.getMetadata().getUid().equals(driver.getMetadata().getUid()))
                    .anyMatch(
                        p ->
                            cluster.node(node).containerLog(p, "device-driver").stream()
                                .anyMatch(l -> CONNECTED.matcher(l).find())));
    await("every node's pool published")
        .atMost(Duration.ofSeconds(60))
        .untilAsserted(CertManagerWebhookIT::assertEveryPoolPublished);
  }

  private static void assertRefusedNamingTheField(String name) {
    KubernetesClientException refused =
        catchThrowableOfType(
            KubernetesClientException.class,
            () -> client.resource(claim(name, ok("'sharing': {'mps': {'threads': 4}}"))).create());
    assertThat(refused).as("refused: %s", name).isNotNull();
    assertThat(refused.getCode()).isEqualTo(422);
    assertThat(refused.getStatus().getMessage())
        .containsAnyOf("denied the request", "denied request")
        .contains(
            "spec.devices.config[0].opaque.parameters.sharing.mps: not allowed with strategy"
                + " Exclusive")
        .doesNotContain("failed calling webhook");
  }

  /**
   * How many claims the publishers' webhook admitted, summed over the replicas' {@code
   * kdra_publisher_admission_reviews_total}.
   */
  private static long admittedClaimReviews() throws Exception {
    long sum = 0;
    for (Pod pod : publisherPods()) {
      HttpResponse<String> metrics =
          HTTP.send(
              HttpRequest.newBuilder(
                      URI.create("http://" + pod.getStatus().getPodIP() + ":8080/q/metrics"))
                  .timeout(Duration.ofSeconds(10))
                  .build(),
              HttpResponse.BodyHandlers.ofString());
      assertThat(metrics.statusCode()).isEqualTo(200);
      sum +=
          (long)
              metrics
                  .body()
                  .lines()
                  .filter(l -> l.startsWith("kdra_publisher_admission_reviews_total{"))
                  .filter(
                      l -> l.contains("allowed=\"true\"") && l.contains("kind=\"ResourceClaim\""))
                  .mapToDouble(l -> Double.parseDouble(l.substring(l.lastIndexOf(' ') + 1)))
                  .sum();
    }
    return sum;
  }

  private static ResourceClaim claim(String name, String parameters) {
    ResourceClaim claim = Dra.claim(APPS, name, DRIVER, 1);
    try {
      claim
          .getSpec()
          .getDevices()
          .setConfig(
              List.of(
                  new DeviceClaimConfigurationBuilder()
                      .withRequests("gpu")
                      .withNewOpaque()
                      .withDriver(DRIVER)
                      .withParameters(JSON.readTree(parameters.replace('\'', '"')))
                      .endOpaque()
                      .build()));
    } catch (Exception e) {
      throw new IllegalArgumentException(parameters, e);
    }
    return claim;
  }

  private static String ok(String fields) {
    return "{'apiVersion': '"
        + OpaqueConfigDecoder.API_VERSION
        + "', 'kind': 'GpuConfig', "
        + fields
        + "}";
  }

  /**
   * The serial of the certificate a port of the publisher's pod (by name) presents now to a client
   * that trusts the Secret's CA and asks for the Service's name, or null.
   */
  private static BigInteger servedSerial(Pod pod, String portName) {
    try {
      int port =
          pod.getSpec().getContainers().get(0).getPorts().stream()
              .filter(p -> portName.equals(p.getName()))
              .findFirst()
              .orElseThrow()
              .getContainerPort();
      return PublisherTls.served(
              pod.getStatus().getPodIP(), port, SERVICE_NAME, tlsSecret().getData().get("ca.crt"))
          .getSerialNumber();
    } catch (Exception e) {
      return null;
    }
  }

  private static void assertEveryPoolPublished() {
    for (RealNode node : cluster.nodes) {
      assertThat(Dra.publishedDevices(client, DRIVER, node.name))
          .as("devices of %s's pool", node.name)
          .isEqualTo(DEVICES_PER_NODE);
    }
  }

  /** Whether {@code ip} (IPv4) is in {@code cidr}. */
  private static boolean inCidr(String ip, String cidr) throws Exception {
    String[] parts = cidr.split("/");
    int bits = Integer.parseInt(parts[1]);
    int mask = bits == 0 ? 0 : -1 << (32 - bits);
    return (toInt(ip) & mask) == (toInt(parts[0]) & mask);
  }

  private static int toInt(String ipv4) throws Exception {
    byte[] b = InetAddress.getByName(ipv4).getAddress();
    return ((b[0] & 0xff) << 24) | ((b[1] & 0xff) << 16) | ((b[2] & 0xff) << 8) | (b[3] & 0xff);
  }

  private static int restarts(Pod pod) {
    return pod.getStatus().getContainerStatuses().get(0).getRestartCount();
  }

  private static int readyReplicas(String deployment) {
    Deployment d = client.apps().deployments().inNamespace(NAMESPACE).withName(deployment).get();
    Integer ready = d == null || d.getStatus() == null ? null : d.getStatus().getReadyReplicas();
    return ready == null ? 0 : ready;
  }

  private static List<Pod> publisherPods() {
    return componentPods("slice-publisher");
  }

  private static List<Pod> driverPods() {
    return componentPods("device-driver");
  }

  private static List<Pod> componentPods(String component) {
    return client
        .pods()
        .inNamespace(NAMESPACE)
        .withLabel(COMPONENT, component)
        .list()
        .getItems()
        .stream()
        .filter(p -> p.getMetadata().getDeletionTimestamp() == null)
        .toList();
  }

  private static Resource<GenericKubernetesResource> certificate() {
    return client
        .genericKubernetesResources("cert-manager.io/v1", "Certificate")
        .inNamespace(NAMESPACE)
        .withName(CERTIFICATE);
  }

  @SuppressWarnings("unchecked")
  private static boolean ready(GenericKubernetesResource certificate) {
    if (certificate == null || certificate.getAdditionalProperties().get("status") == null) {
      return false;
    }
    Map<String, Object> status =
        (Map<String, Object>) certificate.getAdditionalProperties().get("status");
    List<Map<String, Object>> conditions = (List<Map<String, Object>>) status.get("conditions");
    return conditions != null
        && conditions.stream()
            .anyMatch(c -> "Ready".equals(c.get("type")) && "True".equals(c.get("status")))
        && conditions.stream()
            .noneMatch(c -> "Issuing".equals(c.get("type")) && "True".equals(c.get("status")));
  }

  private static Secret tlsSecret() {
    return client.secrets().inNamespace(NAMESPACE).withName(CERTIFICATE).get();
  }

  private static ValidatingWebhookConfiguration webhookConfiguration() {
    return client
        .admissionRegistration()
        .v1()
        .validatingWebhookConfigurations()
        .withName(RELEASE + "-opaque-config")
        .get();
  }

  private static X509Certificate pem(String base64) throws Exception {
    return (X509Certificate)
        CertificateFactory.getInstance("X.509")
            .generateCertificate(new ByteArrayInputStream(Base64.getDecoder().decode(base64)));
  }

  /**
   * The release's pods, events and cert-manager's objects (the nodes' logs: {@link #stopCluster}).
   */
  private static void dump(String what) {
    if (client == null) {
      return;
    }
    Path target = Path.of("target", "it-dumps", "CertManagerWebhookIT", what).toAbsolutePath();
    for (Pod pod : client.pods().inNamespace(NAMESPACE).list().getItems()) {
      TestFiles.write(
          target.resolve("pods").resolve(pod.getMetadata().getName() + ".yaml"),
          Serialization.asYaml(pod));
    }
    TestFiles.write(
        target.resolve("events.yaml"),
        Serialization.asYaml(client.v1().events().inNamespace(NAMESPACE).list().getItems()));
    for (String kind : List.of("Certificate", "CertificateRequest", "Issuer")) {
      TestFiles.write(
          target.resolve(kind + ".yaml"),
          Serialization.asYaml(
              client
                  .genericKubernetesResources("cert-manager.io/v1", kind)
                  .inNamespace(NAMESPACE)
                  .list()
                  .getItems()));
    }
    TestFiles.write(target.resolve("webhook.yaml"), Serialization.asYaml(webhookConfiguration()));
    System.out.println(
        "[cert-manager-it] "
            + what
            + " failed; objects in "
            + target
            + ", the nodes' logs beside it, cert-manager's in "
            + dir.resolve("logs"));
  }
}
