package io.kdra.it;

import static org.awaitility.Awaitility.await;

import io.kdra.it.services.PublisherTls;
import io.kdra.it.services.Stack;
import io.kdra.it.support.SecretVolume;
import io.kdra.it.support.TestCa;
import io.kdra.it.support.TestFiles;
import java.io.ByteArrayInputStream;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.cert.CertificateFactory;
import java.security.cert.X509Certificate;
import java.time.Duration;
import java.util.Base64;
import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * The soak's inventory gRPC over TLS, rotated as {@link CertificateRotationIT} rotates it: the
 * publishers serve the certificate of one Secret volume, the drivers trust the CA of another, both
 * swapped as the kubelet swaps a Secret's volume. A renewal issues a new certificate of the same
 * CA; a CA rotation goes with an overlap (the drivers trust the new CA beside the old one before
 * the publishers serve it, and only then drop the old one). Each waits until every publisher serves
 * the new certificate, then ends every driver's connection (as a connection's max age would), so
 * the next handshakes meet it. No handshake may be refused for it ({@link #refusals}).
 */
final class SoakTls {

  /** The name the drivers check, as the chart's Service DNS name. */
  static final String SERVER_NAME = "kdra-slice-publisher.kdra-system.svc";

  private static final Duration SERVED = Duration.ofSeconds(60);
  private static final AtomicInteger CAS = new AtomicInteger();

  private final SecretVolume publisherTls;
  private final SecretVolume driverCa;
  private TestCa ca;

  private SoakTls(Path dir) {
    publisherTls = new SecretVolume(dir.resolve("inventory-tls"));
    driverCa = new SecretVolume(dir.resolve("publisher-ca"));
    ca = TestCa.create("kdra-soak-ca-" + CAS.incrementAndGet());
    publisherTls.update(ca.issue(SERVER_NAME).secretFiles());
    driverCa.update(Map.of("ca.crt", ca.certificate()));
  }

  /** Fresh volumes under {@code target/}, with a first CA and certificate. */
  static SoakTls create() {
    Path dir = Path.of("target", "soak-tls").toAbsolutePath();
    TestFiles.deleteRecursively(dir);
    try {
      return new SoakTls(Files.createDirectories(dir));
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }

  /** The services' properties: TLS on the inventory gRPC, the drivers trusting the volume's CA. */
  Map<String, String> properties() {
    return Map.of(
        "quarkus.grpc.server.plain-text",
        "false",
        "kdra.slice-publisher.inventory-tls.certificate",
        publisherTls.file("tls.crt").toString(),
        "kdra.slice-publisher.inventory-tls.key",
        publisherTls.file("tls.key").toString(),
        "kdra.slice-publisher.inventory-tls.reload-period",
        "1s",
        "kdra.device-driver.publisher.tls.ca-file",
        driverCa.file("ca.crt").toString(),
        "kdra.device-driver.publisher.tls.server-name",
        SERVER_NAME);
  }

  /** A new certificate of the same CA, served by every publisher, then new connections. */
  void renew(Stack stack, List<String> publishers, List<String> nodes) {
    TestCa.Serving next = ca.issue(SERVER_NAME);
    publisherTls.update(next.secretFiles());
    awaitServed(stack, publishers, next, ca);
    reconnect(stack, nodes);
  }

  /** A new CA, rotated with an overlap, then new connections. */
  void rotateCa(Stack stack, List<String> publishers, List<String> nodes) {
    TestCa next = TestCa.create("kdra-soak-ca-" + CAS.incrementAndGet());
    driverCa.update(Map.of("ca.crt", TestCa.bundle(next.certificate(), ca.certificate())));
    TestCa.Serving serving = next.issue(SERVER_NAME);
    publisherTls.update(serving.secretFiles());
    awaitServed(stack, publishers, serving, next);
    driverCa.update(Map.of("ca.crt", next.certificate()));
    ca = next;
    reconnect(stack, nodes);
  }

  /** The drivers' refused handshakes so far (each is logged). */
  static int refusals(Stack stack, List<String> nodes) {
    int n = 0;
    for (String node : nodes) {
      String log = read(stack.services.process("device-driver-" + node).log);
      String what = "the publisher's certificate is not trusted";
      for (int i = log.indexOf(what); i >= 0; i = log.indexOf(what, i + 1)) {
        n++;
      }
    }
    return n;
  }

  private static void awaitServed(
      Stack stack, List<String> publishers, TestCa.Serving serving, TestCa of) {
    X509Certificate expected = parse(serving.certificate());
    String caBase64 = Base64.getEncoder().encodeToString(of.certificate());
    await("every publisher serves the new certificate")
        .atMost(SERVED)
        .pollInterval(Duration.ofMillis(250))
        .ignoreExceptions()
        .until(
            () -> {
              for (String p : publishers) {
                int port =
                    Integer.parseInt(
                        stack.services.process(p).properties.get("quarkus.grpc.server.port"));
                X509Certificate served =
                    PublisherTls.served("127.0.0.1", port, SERVER_NAME, caBase64);
                if (!served.getSerialNumber().equals(expected.getSerialNumber())) {
                  return false;
                }
              }
              return true;
            });
  }

  private static void reconnect(Stack stack, List<String> nodes) {
    for (String node : nodes) {
      var link = stack.services.publisherLink(node);
      link.cut();
      link.heal();
    }
  }

  private static X509Certificate parse(byte[] pem) {
    try {
      return (X509Certificate)
          CertificateFactory.getInstance("X.509")
              .generateCertificate(new ByteArrayInputStream(pem));
    } catch (java.security.cert.CertificateException e) {
      throw new IllegalStateException(e);
    }
  }

  private static String read(Path log) {
    try {
      return Files.readString(log, StandardCharsets.UTF_8);
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }
}
