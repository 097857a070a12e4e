package io.kdra.devicedriver.testing;

import java.io.IOException;
import java.io.StringWriter;
import java.io.UncheckedIOException;
import java.math.BigInteger;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.GeneralSecurityException;
import java.security.KeyPair;
import java.security.KeyPairGenerator;
import java.security.cert.X509Certificate;
import java.time.Duration;
import java.time.Instant;
import java.util.Base64;
import java.util.Date;
import java.util.concurrent.atomic.AtomicLong;
import org.bouncycastle.asn1.x500.X500Name;
import org.bouncycastle.asn1.x509.BasicConstraints;
import org.bouncycastle.asn1.x509.Extension;
import org.bouncycastle.asn1.x509.GeneralName;
import org.bouncycastle.asn1.x509.GeneralNames;
import org.bouncycastle.cert.jcajce.JcaX509CertificateConverter;
import org.bouncycastle.cert.jcajce.JcaX509v3CertificateBuilder;
import org.bouncycastle.openssl.jcajce.JcaPEMWriter;
import org.bouncycastle.operator.jcajce.JcaContentSignerBuilder;

/** A CA and server certificates it signs, as PEM files, for TLS tests. */
public final class TestCertificates {

  private static final AtomicLong SERIAL = new AtomicLong(System.currentTimeMillis());

  private final String name;
  private final KeyPair key;
  private final X509Certificate certificate;

  private TestCertificates(String name, KeyPair key, X509Certificate certificate) {
    this.name = name;
    this.key = key;
    this.certificate = certificate;
  }

  /** A self-signed CA. */
  public static TestCertificates ca(String name) {
    KeyPair key = keyPair();
    X500Name subject = new X500Name("CN=" + name);
    return new TestCertificates(name, key, sign(subject, key, subject, key, true, null));
  }

  /** The CA's certificate as a PEM file {@code <dir>/<name>.crt}. */
  public Path writeCertificate(Path dir) {
    return write(dir.resolve(name + ".crt"), certificate);
  }

  /**
   * A server certificate for DNS name {@code dnsName}, signed by this CA: writes {@code
   * <dir>/<dnsName>.crt} and {@code .key}; returns the certificate's path.
   */
  public Path issueServer(String dnsName, Path dir) {
    KeyPair serverKey = keyPair();
    X509Certificate server =
        sign(
            new X500Name("CN=" + dnsName),
            serverKey,
            new X500Name("CN=" + name),
            key,
            false,
            dnsName);
    // PKCS#8, which Netty reads (a PEM writer would write EC keys in SEC1)
    writePkcs8(dir.resolve(dnsName + ".key"), serverKey);
    return write(dir.resolve(dnsName + ".crt"), server);
  }

  private static KeyPair keyPair() {
    try {
      KeyPairGenerator generator = KeyPairGenerator.getInstance("EC");
      generator.initialize(256);
      return generator.generateKeyPair();
    } catch (GeneralSecurityException e) {
      throw new IllegalStateException(e);
    }
  }

  private static X509Certificate sign(
      X500Name subject,
      KeyPair subjectKey,
      X500Name issuer,
      KeyPair issuerKey,
      boolean ca,
      String dnsName) {
    try {
      Instant now = Instant.now();
      JcaX509v3CertificateBuilder builder =
          new JcaX509v3CertificateBuilder(
              issuer,
              BigInteger.valueOf(SERIAL.incrementAndGet()),
              Date.from(now.minus(Duration.ofHours(1))),
              Date.from(now.plus(Duration.ofDays(1))),
              subject,
              subjectKey.getPublic());
      builder.addExtension(Extension.basicConstraints, true, new BasicConstraints(ca));
      if (dnsName != null) {
        builder.addExtension(
            Extension.subjectAlternativeName,
            false,
            new GeneralNames(new GeneralName(GeneralName.dNSName, dnsName)));
      }
      return new JcaX509CertificateConverter()
          .getCertificate(
              builder.build(
                  new JcaContentSignerBuilder("SHA256withECDSA").build(issuerKey.getPrivate())));
    } catch (Exception e) {
      throw new IllegalStateException("signing a test certificate", e);
    }
  }

  private static void writePkcs8(Path file, KeyPair key) {
    String base64 =
        Base64.getMimeEncoder(64, "\n".getBytes(StandardCharsets.US_ASCII))
            .encodeToString(key.getPrivate().getEncoded());
    try {
      Files.writeString(
          file, "-----BEGIN PRIVATE KEY-----\n" + base64 + "\n-----END PRIVATE KEY-----\n");
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }

  private static Path write(Path file, Object pemObject) {
    try {
      StringWriter out = new StringWriter();
      try (JcaPEMWriter pem = new JcaPEMWriter(out)) {
        pem.writeObject(pemObject);
      }
      Files.createDirectories(file.getParent());
      Files.writeString(file, out.toString());
      return file;
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }
}
