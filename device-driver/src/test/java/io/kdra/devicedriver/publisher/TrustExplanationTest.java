package io.kdra.devicedriver.publisher;

import static org.assertj.core.api.Assertions.assertThat;

import io.kdra.devicedriver.testing.TestCertificates;
import java.io.InputStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.cert.CertificateFactory;
import java.security.cert.X509Certificate;
import java.time.Duration;
import java.time.Instant;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

class TrustExplanationTest {

  @TempDir Path dir;

  /** The test certificates are valid from an hour ago to a day from now. */
  @ParameterizedTest
  @CsvSource({"-PT2H, NOT YET VALID until", "PT0S, valid until", "PT48H, EXPIRED since"})
  void saysWhetherTheCertificateIsValidAtThatTime(String offset, String expected) throws Exception {
    X509Certificate served = served();
    Instant now = Instant.now().plus(Duration.parse(offset));

    assertThat(TrustExplanation.describe(served, now))
        .startsWith("'CN=publisher.test' issued by 'CN=some-ca', ")
        .contains(expected);
  }

  private X509Certificate served() throws Exception {
    try (InputStream in =
        Files.newInputStream(TestCertificates.ca("some-ca").issueServer("publisher.test", dir))) {
      return (X509Certificate) CertificateFactory.getInstance("X.509").generateCertificate(in);
    }
  }
}
