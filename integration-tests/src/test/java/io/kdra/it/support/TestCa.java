package io.kdra.it.support;

import java.io.IOException;
import java.io.StringWriter;
import java.io.UncheckedIOException;
import java.math.BigInteger;
import java.nio.charset.StandardCharsets;
import java.security.GeneralSecurityException;
import java.security.KeyPair;
import java.security.KeyPairGenerator;
import java.security.KeyStore;
import java.security.SecureRandom;
import java.security.cert.Certificate;
import java.time.Duration;
import java.time.Instant;
import java.util.Date;
import org.bouncycastle.asn1.x500.X500Name;
import org.bouncycastle.asn1.x509.BasicConstraints;
import org.bouncycastle.asn1.x509.Extension;
import org.bouncycastle.asn1.x509.GeneralName;
import org.bouncycastle.asn1.x509.GeneralNames;
import org.bouncycastle.asn1.x509.KeyUsage;
import org.bouncycastle.cert.X509CertificateHolder;
import org.bouncycastle.cert.jcajce.JcaX509CertificateConverter;
import org.bouncycastle.cert.jcajce.JcaX509v3CertificateBuilder;
import org.bouncycastle.openssl.jcajce.JcaPEMWriter;
import org.bouncycastle.operator.jcajce.JcaContentSignerBuilder;

/**
 * A CA as the chart's {@code genCA} makes one (RSA, the key in PKCS#1 PEM) and the serving
 * certificates it signs, for tests that rotate them.
 */
public final class TestCa {

  private final X500Name name;
  private final KeyPair key;
  private final String certificatePem;

  private TestCa(X500Name name, KeyPair key, String certificatePem) {
    this.name = name;
    this.key = key;
    this.certificatePem = certificatePem;
  }

  /** A self-signed CA named {@code CN=<cn>}, valid from an hour ago for two days. */
  public static TestCa create(String cn) {
    KeyPair key = rsa();
    X500Name name = new X500Name("CN=" + cn);
    JcaX509v3CertificateBuilder b = builder(name, name, key);
    try {
      b.addExtension(Extension.basicConstraints, true, new BasicConstraints(true));
      b.addExtension(
          Extension.keyUsage, true, new KeyUsage(KeyUsage.keyCertSign | KeyUsage.cRLSign));
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
    return new TestCa(name, key, pem(sign(b, key)));
  }

  /** The CA's certificate, PEM (a Secret's {@code ca.crt}). */
  public byte[] certificate() {
    return certificatePem.getBytes(StandardCharsets.US_ASCII);
  }

  /** A serving certificate and its key, PEM ({@code tls.crt}, {@code tls.key}). */
  public Serving issue(String dnsName) {
    KeyPair serving = rsa();
    JcaX509v3CertificateBuilder b = builder(name, new X500Name("CN=" + dnsName), serving);
    try {
      b.addExtension(Extension.basicConstraints, true, new BasicConstraints(false));
      b.addExtension(
          Extension.subjectAlternativeName,
          false,
          new GeneralNames(new GeneralName(GeneralName.dNSName, dnsName)));
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
    return new Serving(
        pem(sign(b, key)).getBytes(StandardCharsets.US_ASCII),
        pem(serving.getPrivate()).getBytes(StandardCharsets.US_ASCII));
  }

  /**
   * A serving key and certificate for {@code 127.0.0.1} (an IP address SAN: what the API server
   * checks when it calls a webhook by URL), signed by this CA, in a key store for a JDK HTTPS
   * server; the key's password is {@code password}.
   */
  public KeyStore loopbackKeyStore(char[] password) {
    KeyPair serving = rsa();
    JcaX509v3CertificateBuilder b = builder(name, new X500Name("CN=127.0.0.1"), serving);
    try {
      b.addExtension(Extension.basicConstraints, true, new BasicConstraints(false));
      b.addExtension(
          Extension.subjectAlternativeName,
          false,
          new GeneralNames(new GeneralName(GeneralName.iPAddress, "127.0.0.1")));
      KeyStore store = KeyStore.getInstance("PKCS12");
      store.load(null, null);
      store.setKeyEntry(
          "serving",
          serving.getPrivate(),
          password,
          new Certificate[] {new JcaX509CertificateConverter().getCertificate(sign(b, key))});
      return store;
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    } catch (GeneralSecurityException e) {
      throw new IllegalStateException(e);
    }
  }

  /** A serving certificate and its private key, PEM. */
  public record Serving(byte[] certificate, byte[] key) {

    /** The files of a {@code kubernetes.io/tls} Secret holding this certificate and key. */
    public java.util.Map<String, byte[]> secretFiles() {
      return java.util.Map.of("tls.crt", certificate, "tls.key", key);
    }
  }

  /** PEM certificates one after the other, as a CA bundle holds them. */
  public static byte[] bundle(byte[] first, byte[] second) {
    byte[] both = new byte[first.length + second.length];
    System.arraycopy(first, 0, both, 0, first.length);
    System.arraycopy(second, 0, both, first.length, second.length);
    return both;
  }

  private static JcaX509v3CertificateBuilder builder(
      X500Name issuer, X500Name subject, KeyPair subjectKey) {
    Instant now = Instant.now();
    return new JcaX509v3CertificateBuilder(
        issuer,
        new BigInteger(64, new SecureRandom()),
        Date.from(now.minus(Duration.ofHours(1))),
        Date.from(now.plus(Duration.ofDays(2))),
        subject,
        subjectKey.getPublic());
  }

  private static KeyPair rsa() {
    try {
      KeyPairGenerator g = KeyPairGenerator.getInstance("RSA");
      g.initialize(2048);
      return g.generateKeyPair();
    } catch (GeneralSecurityException e) {
      throw new IllegalStateException(e);
    }
  }

  private static X509CertificateHolder sign(JcaX509v3CertificateBuilder b, KeyPair issuer) {
    try {
      return b.build(new JcaContentSignerBuilder("SHA256WithRSA").build(issuer.getPrivate()));
    } catch (Exception e) {
      throw new IllegalStateException("signing a test certificate", e);
    }
  }

  private static String pem(Object o) {
    StringWriter out = new StringWriter();
    try (JcaPEMWriter w = new JcaPEMWriter(out)) {
      w.writeObject(o);
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
    return out.toString();
  }
}
