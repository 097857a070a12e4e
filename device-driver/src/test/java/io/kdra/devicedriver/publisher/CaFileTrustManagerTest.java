package io.kdra.devicedriver.publisher;

import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.kdra.devicedriver.testing.SecretVolume;
import io.kdra.devicedriver.testing.TestCertificates;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.FileTime;
import java.security.cert.CertificateException;
import java.security.cert.CertificateFactory;
import java.security.cert.X509Certificate;
import java.util.Map;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The driver's trust in the publisher's CA follows the mounted Secret as the kubelet updates it (a
 * swap of the {@code ..data} symlink), at the next handshake and without a restart.
 */
class CaFileTrustManagerTest {

  private static final String SERVICE = "kdra-slice-publisher.kdra-system.svc";
  private static final FileTime SAME_TIME = FileTime.fromMillis(1_700_000_000_000L);

  @TempDir Path dir;

  private final TestCertificates oldCa = TestCertificates.ca("old-ca");
  private final TestCertificates newCa = TestCertificates.ca("new-ca");
  private SecretVolume volume;
  private CaFileTrustManager trust;

  @BeforeEach
  void mountedWithTheOldCa() {
    volume = new SecretVolume(dir.resolve("publisher-ca"));
    volume.update(Map.of("ca.crt", pem(oldCa)), SAME_TIME);
    trust = new CaFileTrustManager(volume.file("ca.crt"));
  }

  @Test
  void aRotatedCaIsTrustedAtTheNextHandshakeAndTheOldOneNoLonger() throws Exception {
    X509Certificate[] oldServed = served(oldCa);
    trust.checkServerTrusted(oldServed, "ECDHE_ECDSA");

    volume.update(Map.of("ca.crt", pem(newCa)));

    trust.checkServerTrusted(served(newCa), "ECDHE_ECDSA");
    assertThatThrownBy(() -> trust.checkServerTrusted(oldServed, "ECDHE_ECDSA"))
        .isInstanceOf(CertificateException.class);
  }

  @Test
  void aRefusalNamesTheServedCertificatesIssuerAndTheCasTheFileHolds() {
    assertThatThrownBy(() -> trust.checkServerTrusted(served(newCa), "ECDHE_ECDSA"))
        .isInstanceOf(CertificateException.class)
        .hasMessageContaining("issued by 'CN=new-ca'")
        .hasMessageContaining("valid until")
        .hasMessageContaining(volume.file("ca.crt") + " holds the CA(s) 'CN=old-ca'")
        .hasMessageContaining("unable to find valid certification path");
  }

  @Test
  void aSwapWhoseFilesKeepTheOldModificationTimeIsSeenToo() throws Exception {
    trust.checkServerTrusted(served(oldCa), "ECDHE_ECDSA");

    // a coarse file clock or a copy that keeps times: only the content tells the change
    volume.update(Map.of("ca.crt", pem(newCa)), SAME_TIME);

    trust.checkServerTrusted(served(newCa), "ECDHE_ECDSA");
  }

  @Test
  void duringARotationABundleOfBothCasTrustsCertificatesOfEither() throws Exception {
    byte[] bundle =
        (new String(pem(newCa), StandardCharsets.US_ASCII)
                + new String(pem(oldCa), StandardCharsets.US_ASCII))
            .getBytes(StandardCharsets.US_ASCII);
    volume.update(Map.of("ca.crt", bundle));

    trust.checkServerTrusted(served(oldCa), "ECDHE_ECDSA");
    trust.checkServerTrusted(served(newCa), "ECDHE_ECDSA");
  }

  @Test
  void aBrokenCaFileFailsTheHandshakeNamingTheFileUntilAGoodOneComes() throws Exception {
    volume.update(Map.of("ca.crt", "not a certificate".getBytes(StandardCharsets.US_ASCII)));

    assertThatThrownBy(() -> trust.checkServerTrusted(served(oldCa), "ECDHE_ECDSA"))
        .isInstanceOf(CertificateException.class)
        .hasMessageContaining(volume.file("ca.crt").toString());

    volume.update(Map.of("ca.crt", pem(newCa)));
    trust.checkServerTrusted(served(newCa), "ECDHE_ECDSA");
  }

  private X509Certificate[] served(TestCertificates ca) throws Exception {
    Path issued = dir.resolve("issued-by-" + System.nanoTime());
    Files.createDirectories(issued);
    try (InputStream in = Files.newInputStream(ca.issueServer(SERVICE, issued))) {
      return new X509Certificate[] {
        (X509Certificate) CertificateFactory.getInstance("X.509").generateCertificate(in)
      };
    }
  }

  private byte[] pem(TestCertificates ca) {
    try {
      Path written = Files.createDirectories(dir.resolve("ca-" + System.nanoTime()));
      return Files.readAllBytes(ca.writeCertificate(written));
    } catch (Exception e) {
      throw new IllegalStateException(e);
    }
  }
}
