package io.kdra.it;

import static io.kdra.it.nodes.SimulatedNode.l4s;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.kdra.it.chart.KdraChart;
import io.kdra.it.controlplane.ControlPlane;
import io.kdra.it.services.AllocationInvariants;
import io.kdra.it.services.Dra;
import io.kdra.it.services.KdraStack;
import io.kdra.it.services.Stack;
import io.kdra.it.support.PausableProxy;
import io.kdra.it.support.SecretVolume;
import io.kdra.it.support.TestCa;
import io.kdra.it.support.TestFiles;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.MethodOrderer;
import org.junit.jupiter.api.Order;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestMethodOrder;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * Certificate and CA rotation of the inventory gRPC (issue 40) on the real stack: the publisher
 * serves the certificate of a Secret volume, the drivers trust the CA of another, both written as
 * the kubelet writes a Secret's volume (a swap of {@code ..data}, {@link SecretVolume}), and each
 * driver dials through a {@link PausableProxy} the test cuts to force a new handshake (as a
 * connection's max age, a publisher restart or a fail-over would). Nothing is restarted.
 *
 * <ol>
 *   <li>A renewed certificate of the same CA is served to the next connection.
 *   <li>A CA rotated with an overlap (the drivers' bundle holds the new and the old CA before the
 *       publisher serves the new one, then only the new one): no handshake fails.
 *   <li>A CA replaced at once, the publisher first (a regenerated Secret reaching the publisher's
 *       pod before the drivers'): the driver's handshakes fail with a message that names the served
 *       certificate's issuer and the CA it trusts; once its volume has the new CA it connects again
 *       without a restart.
 * </ol>
 *
 * Throughout, no ResourceSlice is deleted, and a claim is prepared at the end.
 */
@ExtendWith(ControlPlane.class)
@TestMethodOrder(MethodOrderer.OrderAnnotation.class)
class CertificateRotationIT {

  private static final int DEVICES = 2;
  private static final List<String> NODES = List.of("node-a", "node-b");

  /** The name the drivers check, as the chart's Service DNS name. */
  private static final String SERVER_NAME = "kdra-slice-publisher.kdra-system.svc";

  private static final Duration CONNECTED_TIMEOUT = Duration.ofSeconds(60);

  private static final Path DIR = tempDir();
  private static final SecretVolume PUBLISHER_TLS = new SecretVolume(DIR.resolve("inventory-tls"));
  private static final SecretVolume DRIVER_CA = new SecretVolume(DIR.resolve("publisher-ca"));
  private static final TestCa FIRST_CA = TestCa.create("kdra-rotation-ca-1");

  static {
    PUBLISHER_TLS.update(FIRST_CA.issue(SERVER_NAME).secretFiles());
    DRIVER_CA.update(Map.of("ca.crt", FIRST_CA.certificate()));
  }

  @RegisterExtension
  static final KdraStack STACK =
      KdraStack.nodes(l4s("node-a", DEVICES), l4s("node-b", DEVICES))
          .withPublishers(1)
          .withProperties(
              Map.of(
                  "quarkus.grpc.server.plain-text",
                  "false",
                  "kdra.slice-publisher.inventory-tls.certificate",
                  PUBLISHER_TLS.file("tls.crt").toString(),
                  "kdra.slice-publisher.inventory-tls.key",
                  PUBLISHER_TLS.file("tls.key").toString(),
                  "kdra.slice-publisher.inventory-tls.reload-period",
                  "1s",
                  "kdra.device-driver.publisher.tls.ca-file",
                  DRIVER_CA.file("ca.crt").toString(),
                  "kdra.device-driver.publisher.tls.server-name",
                  SERVER_NAME));

  private static Stack stack;
  private static KubernetesClient client;
  private static AllocationInvariants watch;

  @BeforeAll
  static void publishedOverTls() {
    stack = STACK.get();
    client = stack.client;
    await()
        .atMost(CONNECTED_TIMEOUT)
        .untilAsserted(
            () -> {
              for (String node : NODES) {
                assertThat(Dra.publishedDevices(client, node)).as(node).isEqualTo(DEVICES);
              }
            });
    assertThat(publisherLog()).contains("the inventory gRPC serves TLS with");
    watch = new AllocationInvariants(client, stack.namespace, Stack.DRIVER);
  }

  @AfterAll
  static void noSliceWasDeleted() {
    if (watch != null) {
      watch.close();
      assertThat(watch.deletedSlices).as("slices deleted during the rotations").isEmpty();
      assertThat(watch.violations).isEmpty();
    }
  }

  @Test
  @Order(1)
  void aRenewedCertificateOfTheSameCaIsServedToTheNextConnection() {
    int served = served();
    PUBLISHER_TLS.update(FIRST_CA.issue(SERVER_NAME).secretFiles());
    await().atMost(Duration.ofSeconds(30)).until(() -> served() > served);

    reconnectAll();
    assertNoRefusalSince(0);
  }

  @Test
  @Order(2)
  void aCaRotatedWithAnOverlapFailsNoHandshake() {
    int logs = refusals();
    TestCa next = TestCa.create("kdra-rotation-ca-2");
    // first the trust: the new CA beside the old one (what trust-manager or a careful operator
    // distributes before the serving certificate changes)
    DRIVER_CA.update(Map.of("ca.crt", TestCa.bundle(next.certificate(), FIRST_CA.certificate())));
    reconnectAll();
    int served = served();
    PUBLISHER_TLS.update(next.issue(SERVER_NAME).secretFiles());
    await().atMost(Duration.ofSeconds(30)).until(() -> served() > served);
    reconnectAll();
    // then the old CA is dropped
    DRIVER_CA.update(Map.of("ca.crt", next.certificate()));
    reconnectAll();
    assertNoRefusalSince(logs);
  }

  @Test
  @Order(3)
  void aCaReplacedOnThePublisherFirstIsExplainedAndTrustedOnceTheDriversHaveIt() {
    TestCa third = TestCa.create("kdra-rotation-ca-3");
    int served = served();
    PUBLISHER_TLS.update(third.issue(SERVER_NAME).secretFiles());
    await().atMost(Duration.ofSeconds(30)).until(() -> served() > served);

    PausableProxy link = stack.services.publisherLink("node-a");
    int logBefore = driverLog("node-a").length();
    link.cut();
    link.heal();
    await()
        .atMost(CONNECTED_TIMEOUT)
        .untilAsserted(
            () ->
                assertThat(driverLog("node-a").substring(logBefore))
                    .contains("the publisher's certificate is not trusted")
                    .contains("issued by 'CN=kdra-rotation-ca-3'")
                    .contains("holds the CA(s) 'CN=kdra-rotation-ca-2'"));

    // the kubelet brings the new CA to the driver's volume: no restart needed
    DRIVER_CA.update(Map.of("ca.crt", third.certificate()));
    await()
        .atMost(CONNECTED_TIMEOUT)
        .until(() -> CONNECTED.matcher(driverLog("node-a").substring(logBefore)).find());
    reconnect("node-b");
  }

  @Test
  @Order(4)
  void afterTheRotationsPoolsArePublishedUntaintedAndAClaimIsPrepared() {
    await()
        .atMost(CONNECTED_TIMEOUT)
        .untilAsserted(
            () -> {
              for (String node : NODES) {
                assertThat(Dra.publishedDevices(client, node)).as(node).isEqualTo(DEVICES);
              }
              assertThat(stack.services.processNames())
                  .allSatisfy(p -> assertThat(stack.services.restarts(p)).as(p).isZero());
            });
    String ns = stack.namespace;
    client.resource(Dra.claim(ns, "after-rotation", KdraChart.GPU_CLASS, 1)).create();
    Pod pod = client.resource(Dra.podWithClaim(ns, "after-rotation", "after-rotation")).create();
    await()
        .atMost(Duration.ofSeconds(60))
        .untilAsserted(
            () -> {
              String node = Dra.get(client, pod).getSpec().getNodeName();
              assertThat(node).isNotNull();
              assertThat(stack.nodes.kubelet(node).prepared(pod)).isNotNull();
            });
  }

  private static final java.util.regex.Pattern CONNECTED =
      java.util.regex.Pattern.compile("inventory stream to \\S+ connected");

  /** Cuts each driver's connection and waits for its stream to be acknowledged again. */
  private static void reconnectAll() {
    NODES.forEach(CertificateRotationIT::reconnect);
  }

  private static void reconnect(String node) {
    int logBefore = driverLog(node).length();
    PausableProxy link = stack.services.publisherLink(node);
    link.cut();
    link.heal();
    await()
        .atMost(CONNECTED_TIMEOUT)
        .until(() -> CONNECTED.matcher(driverLog(node).substring(logBefore)).find());
  }

  /** No handshake refused since, and no device tainted by the reconnections. */
  private static void assertNoRefusalSince(int refusalsBefore) {
    assertThat(refusals()).as("handshakes refused").isEqualTo(refusalsBefore);
    assertThat(watch.taintedSlices).as("devices tainted").isEmpty();
  }

  /** The drivers' refused handshakes so far (each outage's first attempt is logged at WARN). */
  private static int refusals() {
    return NODES.stream()
        .mapToInt(n -> count(driverLog(n), "the publisher's certificate is not trusted"))
        .sum();
  }

  /** How often the publisher took up a new certificate. */
  private static int served() {
    return count(publisherLog(), "the inventory gRPC serves the certificate now");
  }

  private static int count(String text, String what) {
    int n = 0;
    for (int i = text.indexOf(what); i >= 0; i = text.indexOf(what, i + 1)) {
      n++;
    }
    return n;
  }

  private static String publisherLog() {
    String name =
        stack.services.processNames().stream()
            .filter(p -> p.startsWith("slice-publisher"))
            .findFirst()
            .orElseThrow();
    return read(stack.services.process(name).log);
  }

  private static String driverLog(String node) {
    return read(stack.services.process("device-driver-" + node).log);
  }

  private static String read(Path log) {
    try {
      return Files.readString(log, StandardCharsets.UTF_8);
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }

  /** Under the build's own directory, as the other ITs' files: nothing is left in the system's. */
  private static Path tempDir() {
    Path dir = Path.of("target", "cert-rotation").toAbsolutePath();
    TestFiles.deleteRecursively(dir);
    try {
      return Files.createDirectories(dir);
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }
}
