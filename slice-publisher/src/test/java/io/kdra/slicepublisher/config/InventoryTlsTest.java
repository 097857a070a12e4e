package io.kdra.slicepublisher.config;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.quarkus.test.junit.QuarkusTest;
import io.quarkus.test.junit.QuarkusTestProfile;
import io.quarkus.test.junit.TestProfile;
import io.quarkus.test.kubernetes.client.WithKubernetesTestServer;
import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.math.BigInteger;
import java.net.ServerSocket;
import java.net.Socket;
import java.net.SocketException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.security.cert.CertificateFactory;
import java.security.cert.X509Certificate;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import javax.net.ssl.SSLContext;
import javax.net.ssl.SSLParameters;
import javax.net.ssl.SSLSocket;
import javax.net.ssl.TrustManager;
import javax.net.ssl.X509TrustManager;
import org.junit.jupiter.api.Test;

/**
 * The inventory gRPC with {@code kdra.slice-publisher.inventory-tls.*} (what the chart sets): TLS
 * only, h2 by ALPN, and a certificate replaced on disk (a cert-manager renewal, the kubelet
 * updating the Secret's volume) is served to the next connection without a restart. The first pair
 * is ECDSA with a PKCS#8 key (cert-manager's, as the chart asks it), the second RSA with a PKCS#1
 * key (the chart's own, Helm's genSignedCert).
 */
@QuarkusTest
@TestProfile(InventoryTlsTest.Tls.class)
@WithKubernetesTestServer(crud = true)
class InventoryTlsTest {

  private static final Path DIR = temporaryDirectory();
  private static final int PORT = freePort();

  /** The test's certificate files and port; read again every 200 ms. */
  public static class Tls implements QuarkusTestProfile {
    @Override
    public Map<String, String> getConfigOverrides() {
      install("first");
      return Map.of(
          "kdra.slice-publisher.inventory-tls.certificate",
          DIR.resolve("tls.crt").toString(),
          "kdra.slice-publisher.inventory-tls.key",
          DIR.resolve("tls.key").toString(),
          "kdra.slice-publisher.inventory-tls.reload-period",
          "200ms",
          "quarkus.grpc.server.plain-text",
          "false",
          "quarkus.grpc.server.test-port",
          String.valueOf(PORT));
    }
  }

  @Test
  void aReplacedCertificateIsServedWithoutARestart() throws Exception {
    assertThat(served()).isEqualTo(serial("first"));
    install("second");
    // (between the two renames the files do not match: a handshake may fail then)
    await()
        .atMost(Duration.ofSeconds(30))
        .ignoreExceptions()
        .until(() -> serial("second").equals(served()));
  }

  @Test
  void aPlainTextClientGetsNoAnswer() throws Exception {
    try (Socket plain = new Socket("localhost", PORT)) {
      plain.setSoTimeout(10_000);
      // the HTTP/2 connection preface of a plain-text gRPC client
      plain
          .getOutputStream()
          .write("PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n".getBytes(StandardCharsets.US_ASCII));
      plain.getOutputStream().flush();
      int first;
      try {
        first = plain.getInputStream().read();
      } catch (SocketException reset) {
        first = -1;
      }
      // a plain-text server would answer with its SETTINGS frame (first byte 0, the length)
      assertThat(first).as("a TLS alert record (type 21) or the connection closed").isIn(-1, 21);
    }
  }

  /** The serial of the certificate the gRPC port presents, over TLS with ALPN h2. */
  private static BigInteger served() throws Exception {
    SSLContext context = SSLContext.getInstance("TLS");
    context.init(null, new TrustManager[] {new TrustingEveryone()}, null);
    try (SSLSocket socket =
        (SSLSocket) context.getSocketFactory().createSocket("localhost", PORT)) {
      socket.setSoTimeout(10_000);
      SSLParameters parameters = socket.getSSLParameters();
      parameters.setApplicationProtocols(new String[] {"h2"});
      socket.setSSLParameters(parameters);
      socket.startHandshake();
      assertThat(socket.getApplicationProtocol()).isEqualTo("h2");
      return ((X509Certificate) socket.getSession().getPeerCertificates()[0]).getSerialNumber();
    }
  }

  private static BigInteger serial(String name) throws Exception {
    try (InputStream in =
        InventoryTlsTest.class.getResourceAsStream("/inventory-tls/" + name + ".crt")) {
      return ((X509Certificate) CertificateFactory.getInstance("X.509").generateCertificate(in))
          .getSerialNumber();
    }
  }

  /** The pair {@code name} into place, each file by a rename, as the kubelet swaps a volume. */
  private static void install(String name) {
    try {
      for (String ext : List.of("key", "crt")) {
        Path next = DIR.resolve("next." + ext);
        try (InputStream in =
            InventoryTlsTest.class.getResourceAsStream("/inventory-tls/" + name + "." + ext)) {
          Files.copy(in, next, StandardCopyOption.REPLACE_EXISTING);
        }
        Files.move(
            next,
            DIR.resolve("tls." + ext),
            StandardCopyOption.REPLACE_EXISTING,
            StandardCopyOption.ATOMIC_MOVE);
      }
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }

  private static Path temporaryDirectory() {
    try {
      return Files.createTempDirectory("inventory-tls-test");
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }

  private static int freePort() {
    try (ServerSocket s = new ServerSocket(0)) {
      return s.getLocalPort();
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }

  /** The test reads the serial only; who signed it does not matter here. */
  private static final class TrustingEveryone implements X509TrustManager {
    @Override
    public void checkClientTrusted(X509Certificate[] chain, String authType) {}

    @Override
    public void checkServerTrusted(X509Certificate[] chain, String authType) {}

    @Override
    public X509Certificate[] getAcceptedIssuers() {
      return new X509Certificate[0];
    }
  }
}
