package io.kdra.it;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.catchThrowableOfType;
import static org.awaitility.Awaitility.await;

import com.fasterxml.jackson.databind.ObjectMapper;
import io.fabric8.kubeapitest.cert.CertManager;
import io.fabric8.kubernetes.api.model.GenericKubernetesResource;
import io.fabric8.kubernetes.api.model.NamespaceBuilder;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.Secret;
import io.fabric8.kubernetes.api.model.admissionregistration.v1.ValidatingWebhookConfiguration;
import io.fabric8.kubernetes.api.model.discovery.v1.EndpointSlice;
import io.fabric8.kubernetes.api.model.resource.v1.DeviceClaimConfigurationBuilder;
import io.fabric8.kubernetes.api.model.resource.v1.ResourceClaim;
import io.fabric8.kubernetes.client.Config;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientException;
import io.fabric8.kubernetes.client.dsl.Resource;
import io.fabric8.kubernetes.client.internal.CertUtils;
import io.fabric8.kubernetes.client.utils.Serialization;
import io.kdra.core.config.OpaqueConfigDecoder;
import io.kdra.it.chart.CertManagerControllers;
import io.kdra.it.chart.HelmRelease;
import io.kdra.it.controlplane.ControlPlane;
import io.kdra.it.controlplane.UpstreamControllers;
import io.kdra.it.nodes.PodNetwork;
import io.kdra.it.nodes.RealNode;
import io.kdra.it.nodes.RealNodeBinaries;
import io.kdra.it.registry.LocalRegistry;
import io.kdra.it.services.BuiltImages;
import io.kdra.it.services.Dra;
import io.kdra.it.support.OwnerOnly;
import io.kdra.it.support.ServiceProcess;
import io.kdra.it.support.TestFiles;
import java.io.ByteArrayInputStream;
import java.io.InputStream;
import java.math.BigInteger;
import java.net.InetSocketAddress;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.KeyStore;
import java.security.cert.CertificateFactory;
import java.security.cert.X509Certificate;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Base64;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import javax.net.ssl.KeyManagerFactory;
import javax.net.ssl.SNIHostName;
import javax.net.ssl.SSLContext;
import javax.net.ssl.SSLParameters;
import javax.net.ssl.SSLSocket;
import javax.net.ssl.TrustManagerFactory;
import org.bouncycastle.asn1.x509.GeneralName;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.MethodOrderer;
import org.junit.jupiter.api.Order;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestMethodOrder;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.extension.ExtensionContext;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.api.extension.TestWatcher;

/**
 * Issue #18, the admission webhook as a cluster with cert-manager runs it: the chart installed with
 * {@code slicePublisher.tls.source=cert-manager} (its Certificate from a CA Issuer), real
 * cert-manager controllers issue the certificate into the publisher's Secret and cert-manager's CA
 * injector writes the CA into the chart's ValidatingWebhookConfiguration; the publisher runs from
 * its image on a real node whose pods have addresses on a {@link PodNetwork}, and the API server
 * calls the webhook through its Service (resolved to the pod's endpoint, {@code
 * --enable-aggregator-routing}), refusing a bad opaque config with the field named and admitting a
 * good one. A renewal forced as {@code cmctl renew} does is served by the publisher (both its
 * ports) and trusted by the API server without a restart or anyone touching the release.
 *
 * <p>kube-controller-manager (EndpointSlices, kube-root-ca.crt, ServiceAccount tokens) and
 * kube-scheduler run as on a cluster ({@link UpstreamControllers}); the pods reach the API server,
 * which listens on loopback, through the network's relay in place of kube-proxy.
 */
@ExtendWith(ControlPlane.class)
@TestMethodOrder(MethodOrderer.OrderAnnotation.class)
class CertManagerWebhookIT {

  private static final String NODE = "cm-a";
  private static final String RELEASE = "kdra-cm";
  private static final String NAMESPACE = "kdra-cm";
  private static final String GPU_DRIVER = "gpu.cm.kdra.io";
  private static final String TPU_DRIVER = "tpu.cm.kdra.io";
  private static final String WEBHOOK = "opaque-config.kdra.io";
  private static final String CERTIFICATE = RELEASE + "-slice-publisher-tls";
  private static final String SERVICE = RELEASE + "-slice-publisher";
  private static final String CA_ISSUER = "kdra-cm-ca";
  private static final Duration READY_TIMEOUT = Duration.ofSeconds(300);

  /**
   * A renewed Secret reaches the pod's volume at the kubelet's next sync of the pod (up to about a
   * minute and a half), and the publisher serves it within its 30 s reload period.
   */
  private static final Duration RENEWED_TIMEOUT = Duration.ofSeconds(240);

  private static final ObjectMapper JSON = new ObjectMapper();

  private static KubernetesClient client;
  private static Path dir;
  private static PodNetwork network;
  private static UpstreamControllers upstream;
  private static LocalRegistry registry;
  private static RealNode node;
  private static CertManagerControllers certManager;
  private static Path kubeconfig;
  private static boolean installed;

  @BeforeAll
  static void installedWithCertManagerOnAPodNetwork(ControlPlane.Running cp) throws Exception {
    Assumptions.assumeTrue(PodNetwork.available(), "a pod network needs root and ip: skipped");
    Path image = BuiltImages.archive("slice-publisher");
    Assumptions.assumeTrue(
        Files.isRegularFile(image),
        image + " is missing: the build made" + " no images (build them with -Dkdra.images=true)");
    Assumptions.assumeTrue(
        LocalRegistry.executable() != null, "Debian's docker-registry is not installed: skipped");
    Assumptions.assumeTrue(
        CertManagerControllers.built(),
        "cert-manager is not built in "
            + CertManagerControllers.dir()
            + " (integration-tests/scripts/build-cert-manager.sh)");
    client = cp.client();
    dir = Path.of("target", "cert-manager-it").toAbsolutePath();
    TestFiles.deleteRecursively(dir);
    Files.createDirectories(dir);
    String adminYaml = cp.server().getKubeConfigYaml();
    Config admin = Config.fromKubeconfig(adminYaml);
    URI api = URI.create(admin.getMasterUrl());
    kubeconfig = dir.resolve("admin.kubeconfig");
    OwnerOnly.write(kubeconfig, adminYaml);

    network = PodNetwork.create();
    // the relay's certificate for the bridge's address, trusted by the pods beside the API
    // server's CA: kube-controller-manager publishes both as kube-root-ca.crt
    Path relayKey = dir.resolve("relay.key");
    Path relayCert = dir.resolve("relay.crt");
    CertManager.generateKeyAndCertificate(
        "CN=kdra-pod-network-relay",
        relayKey.toFile(),
        relayCert.toFile(),
        new GeneralName(GeneralName.iPAddress, network.gateway()));
    String apiCa = BuiltImages.caCertificate(admin);
    Path caFile = dir.resolve("ca.crt");
    TestFiles.write(caFile, apiCa.strip() + "\n" + Files.readString(relayCert));
    PodNetwork.Relay relay =
        network.relay(
            new InetSocketAddress(api.getHost(), api.getPort()),
            serving(relayCert, relayKey),
            trusting(apiCa));

    upstream = UpstreamControllers.start(cp, admin, caFile, dir.resolve("logs"));
    registry = LocalRegistry.start();
    registry.push(image, "kdra/slice-publisher", BuiltImages.appVersion());
    node =
        RealNode.start(
            NODE,
            Path.of("target", "rn", NODE).toAbsolutePath(),
            RealNodeBinaries.fromCache(),
            client,
            adminYaml,
            network);
    certManager =
        CertManagerControllers.start(client, kubeconfig, dir.resolve("logs/cert-manager.log"));

    client
        .namespaces()
        .resource(
            new NamespaceBuilder().withNewMetadata().withName(NAMESPACE).endMetadata().build())
        .serverSideApply();
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
    TestFiles.write(
        values,
        """
        imageRegistry: %s
        driverNames: {gpu: %s, tpu: %s}
        hostNetwork: false
        apiServer: {host: "%s", port: "%d"}
        deviceClasses: {gpu: {enabled: false}, tpu: {enabled: false}}
        deviceDriver: {enabled: false}
        claimController: {enabled: false}
        computeClassBridge: {enabled: false}
        admission:
          # every refusal here is the webhook's
          opaqueConfigPolicy: {enabled: false}
          opaqueConfigWebhook: {enabled: true}
        slicePublisher:
          replicas: 1
          strategy: {type: Recreate}
          tls:
            source: cert-manager
            certManager:
              issuerRef: {name: %s, kind: Issuer, group: cert-manager.io}
        """
            .formatted(
                registry.address,
                GPU_DRIVER,
                TPU_DRIVER,
                network.gateway(),
                relay.port,
                CA_ISSUER));
    try {
      long started = System.nanoTime();
      HelmRelease.run(
          "install",
          ServiceProcess.moduleDir("helm").resolve("kdra"),
          RELEASE,
          NAMESPACE,
          kubeconfig,
          List.of(values));
      installed = true;
      await().atMost(READY_TIMEOUT).until(CertManagerWebhookIT::publisherReady);
      System.out.printf(
          "[cert-manager-it] from helm install to a ready publisher: %d ms%n",
          (System.nanoTime() - started) / 1_000_000);
    } catch (RuntimeException | AssertionError e) {
      dump("install");
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
    assertThat(leaf.getSubjectAlternativeNames().stream().map(n -> String.valueOf(n.get(1))))
        .contains(SERVICE + "." + NAMESPACE + ".svc");

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
        .isEqualTo(SERVICE);
  }

  /**
   * The publisher's pod has an address of the pod network, the Service's EndpointSlice names it,
   * and the API server calls the webhook there: a bad opaque config is refused naming the field, a
   * good one is created.
   */
  @Test
  @Order(2)
  void theApiServerCallsTheWebhookThroughItsServiceOnThePodNetwork() throws Exception {
    Pod pod = publisherPod();
    assertThat(pod.getSpec().getHostNetwork()).isNotEqualTo(Boolean.TRUE);
    String podIp = pod.getStatus().getPodIP();
    assertThat(network.contains(podIp)).as("%s on %s", podIp, network).isTrue();
    await()
        .atMost(Duration.ofSeconds(60))
        .untilAsserted(
            () ->
                assertThat(
                        client
                            .resources(EndpointSlice.class)
                            .inNamespace(NAMESPACE)
                            .withLabel("kubernetes.io/service-name", SERVICE)
                            .list()
                            .getItems())
                    .flatExtracting(s -> s.getEndpoints())
                    .flatExtracting(e -> e.getAddresses())
                    .contains(podIp));

    // the webhook is called once the API server's informers have the endpoint: wait for that
    await().atMost(Duration.ofSeconds(60)).until(CertManagerWebhookIT::badConfigRefused);
    assertRefusedNamingTheField("bad-1");
    ResourceClaim good =
        claim(
            "good-1",
            ok("'sharing': {'strategy': 'MPS', " + "'mps': {'activeThreadPercentage': 50}}"));
    assertThat(client.resource(good).create().getMetadata().getUid()).isNotBlank();
  }

  /**
   * A renewal forced as {@code cmctl renew} does (the Issuing condition set): cert-manager issues a
   * new certificate (a new key, rotationPolicy Always) into the Secret, the kubelet updates the
   * pod's volume, the publisher serves it on the webhook port, and the API server, trusting the
   * same CA, still calls the webhook; the inventory gRPC port serves it too. Neither the pod nor
   * its container restarts: both servers read the files again.
   */
  @Test
  @Order(3)
  void aRenewedCertificateIsServedAndTrustedWithoutTouchingTheRelease() throws Exception {
    Pod before = publisherPod();
    BigInteger issued = pem(tlsSecret().getData().get("tls.crt")).getSerialNumber();
    assertThat(servedSerial(before, "webhook"))
        .as("the webhook's before the renewal")
        .isEqualTo(issued);
    assertThat(servedSerial(before, "grpc")).as("the gRPC's before the renewal").isEqualTo(issued);
    int restartsBefore = restarts(before);

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
    await()
        .atMost(RENEWED_TIMEOUT)
        .until(
            () ->
                renewed.equals(servedSerial(publisherPod(), "webhook"))
                    && renewed.equals(servedSerial(publisherPod(), "grpc")));
    System.out.printf(
        "[cert-manager-it] the renewed certificate served %d ms after it was"
            + " issued; restarts of the publisher's container: %d before, %d after%n",
        (System.nanoTime() - renewedAt) / 1_000_000, restartsBefore, restarts(publisherPod()));
    Pod after = publisherPod();
    assertThat(after.getMetadata().getUid())
        .as("the same pod")
        .isEqualTo(before.getMetadata().getUid());
    assertThat(restarts(after))
        .as("restarts of the publisher's container")
        .isEqualTo(restartsBefore);

    await().atMost(Duration.ofSeconds(60)).until(CertManagerWebhookIT::badConfigRefused);
    assertRefusedNamingTheField("bad-2");
  }

  @AfterAll
  static void uninstalled() {
    try {
      if (installed) {
        try {
          HelmRelease.run(
              "uninstall",
              ServiceProcess.moduleDir("helm").resolve("kdra"),
              RELEASE,
              NAMESPACE,
              kubeconfig,
              List.of());
        } catch (RuntimeException e) {
          System.out.println("[helm] uninstall after the tests failed: " + e.getMessage());
        }
        // the webhook must not outlive the release for the next test class
        await()
            .atMost(Duration.ofSeconds(60))
            .until(
                () ->
                    client
                            .admissionRegistration()
                            .v1()
                            .validatingWebhookConfigurations()
                            .withName(RELEASE + "-opaque-config")
                            .get()
                        == null);
      }
      if (client != null) {
        client.namespaces().withName(NAMESPACE).delete();
      }
    } finally {
      for (AutoCloseable c : new AutoCloseable[] {certManager, node, registry, upstream, network}) {
        if (c != null) {
          try {
            c.close();
          } catch (Exception e) {
            System.out.println("[cert-manager-it] closing " + c + ": " + e);
          }
        }
      }
    }
  }

  private static void assertRefusedNamingTheField(String name) {
    KubernetesClientException refused =
        catchThrowableOfType(
            KubernetesClientException.class,
            () -> client.resource(claim(name, ok("'sharing': {'mps': {'threads': 4}}"))).create());
    assertThat(refused).as("refused: %s", name).isNotNull();
    assertThat(refused.getCode()).isEqualTo(422);
    assertThat(refused.getStatus().getMessage())
        .isEqualTo(
            "admission webhook \""
                + WEBHOOK
                + "\" denied the request: spec.devices.config[0].opaque.parameters.sharing.mps: "
                + "not allowed with strategy Exclusive");
  }

  /** Whether a dry-run create of a claim with the issue's bad config is the webhook's 422. */
  private static boolean badConfigRefused() {
    try {
      client.resource(claim("probe", ok("'sharing': {'mps': {'threads': 4}}"))).dryRun().create();
      return false;
    } catch (KubernetesClientException e) {
      return e.getCode() == 422
          && e.getStatus()
              .getMessage()
              .startsWith("admission webhook \"" + WEBHOOK + "\" denied the request");
    }
  }

  private static ResourceClaim claim(String name, String parameters) {
    ResourceClaim claim = Dra.claim(NAMESPACE, name, GPU_DRIVER, 1);
    try {
      claim
          .getSpec()
          .getDevices()
          .setConfig(
              List.of(
                  new DeviceClaimConfigurationBuilder()
                      .withRequests("gpu")
                      .withNewOpaque()
                      .withDriver(GPU_DRIVER)
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

  /** The serial of the certificate a port of the publisher (by name) presents now, or null. */
  private static BigInteger servedSerial(Pod pod, String portName) {
    try {
      TrustManagerFactory trust =
          TrustManagerFactory.getInstance(TrustManagerFactory.getDefaultAlgorithm());
      KeyStore store = KeyStore.getInstance(KeyStore.getDefaultType());
      store.load(null, null);
      store.setCertificateEntry("ca", pem(tlsSecret().getData().get("ca.crt")));
      trust.init(store);
      SSLContext context = SSLContext.getInstance("TLS");
      context.init(null, trust.getTrustManagers(), null);
      int port =
          pod.getSpec().getContainers().get(0).getPorts().stream()
              .filter(p -> portName.equals(p.getName()))
              .findFirst()
              .orElseThrow()
              .getContainerPort();
      try (SSLSocket socket =
          (SSLSocket) context.getSocketFactory().createSocket(pod.getStatus().getPodIP(), port)) {
        socket.setSoTimeout(5_000);
        SSLParameters parameters = socket.getSSLParameters();
        parameters.setServerNames(List.of(new SNIHostName(SERVICE + "." + NAMESPACE + ".svc")));
        // what the API server and the drivers speak (gRPC needs it)
        parameters.setApplicationProtocols(new String[] {"h2"});
        socket.setSSLParameters(parameters);
        socket.startHandshake();
        return ((X509Certificate) socket.getSession().getPeerCertificates()[0]).getSerialNumber();
      }
    } catch (Exception e) {
      return null;
    }
  }

  private static int restarts(Pod pod) {
    return pod.getStatus().getContainerStatuses().get(0).getRestartCount();
  }

  /** One read: the pod may be replaced, and a new one has no conditions yet. */
  private static boolean publisherReady() {
    Pod pod = publisherPod();
    return pod != null
        && pod.getStatus() != null
        && pod.getStatus().getConditions() != null
        && pod.getStatus().getConditions().stream()
            .anyMatch(c -> "Ready".equals(c.getType()) && "True".equals(c.getStatus()));
  }

  private static Pod publisherPod() {
    return client
        .pods()
        .inNamespace(NAMESPACE)
        .withLabel("app.kubernetes.io/component", "slice-publisher")
        .list()
        .getItems()
        .stream()
        .filter(p -> p.getMetadata().getDeletionTimestamp() == null)
        .findFirst()
        .orElse(null);
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

  private static SSLContext serving(Path cert, Path key) throws Exception {
    KeyStore store;
    try (InputStream c = Files.newInputStream(cert);
        InputStream k = Files.newInputStream(key)) {
      store = CertUtils.createKeyStore(c, k, "RSA", new char[0], null, new char[0]);
    }
    KeyManagerFactory keys = KeyManagerFactory.getInstance(KeyManagerFactory.getDefaultAlgorithm());
    keys.init(store, new char[0]);
    SSLContext context = SSLContext.getInstance("TLS");
    context.init(keys.getKeyManagers(), null, null);
    return context;
  }

  private static SSLContext trusting(String caPem) throws Exception {
    KeyStore store = KeyStore.getInstance(KeyStore.getDefaultType());
    store.load(null, null);
    store.setCertificateEntry(
        "api",
        CertificateFactory.getInstance("X.509")
            .generateCertificate(new ByteArrayInputStream(caPem.getBytes(StandardCharsets.UTF_8))));
    TrustManagerFactory trust =
        TrustManagerFactory.getInstance(TrustManagerFactory.getDefaultAlgorithm());
    trust.init(store);
    SSLContext context = SSLContext.getInstance("TLS");
    context.init(null, trust.getTrustManagers(), null);
    return context;
  }

  /** The node's logs, the release's pods, events and cert-manager's objects. */
  private static void dump(String what) {
    Path target = Path.of("target", "it-dumps", "CertManagerWebhookIT", what).toAbsolutePath();
    if (node != null) {
      node.dumpTo(target);
    }
    if (client != null) {
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
    }
    System.out.println(
        "[cert-manager-it] "
            + what
            + " failed; logs and objects in "
            + target
            + " (cert-manager's and kube-controller-manager's logs in "
            + dir.resolve("logs")
            + ")");
  }
}
