package io.kdra.slicepublisher.grpc;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.InputStream;
import java.security.cert.CertificateFactory;
import java.security.cert.X509Certificate;
import java.time.Instant;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

class CertificateValidityTest {

  /** first.crt: valid from 2026-12-02T01:59:24Z to 2126-11-08T01:59:24Z. */
  @ParameterizedTest
  @CsvSource({
    "2026-12-01T00:00:00Z, NOT VALID until 2026-12-02T01:59:24Z, 3153693564",
    "2027-01-01T00:00:00Z, '', 3151015164",
    "2126-11-08T01:59:25Z, EXPIRED at 2126-11-08T01:59:24Z, -1"
  })
  void aCertificateOutsideItsValidityIsNamedAsSuch(String now, String problem, double secondsLeft)
      throws Exception {
    X509Certificate served = certificate("first");
    Instant at = Instant.parse(now);

    assertThat(CertificateValidity.problem(served, at).orElse(""))
        .contains(problem)
        .satisfiesAnyOf(
            p -> assertThat(p).isEmpty(),
            p -> assertThat(p).startsWith("the certificate 'CN=kdra-slice-publisher-first'"));
    assertThat(CertificateValidity.problem(served, at).isEmpty()).isEqualTo(problem.isEmpty());
    assertThat(CertificateValidity.secondsLeft(served, at)).isEqualTo(secondsLeft);
  }

  private static X509Certificate certificate(String name) throws Exception {
    try (InputStream in =
        CertificateValidityTest.class.getResourceAsStream("/inventory-tls/" + name + ".crt")) {
      return (X509Certificate) CertificateFactory.getInstance("X.509").generateCertificate(in);
    }
  }
}
