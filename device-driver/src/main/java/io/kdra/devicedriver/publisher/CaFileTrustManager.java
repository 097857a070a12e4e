package io.kdra.devicedriver.publisher;

import java.io.ByteArrayInputStream;
import java.io.IOException;
import java.io.InputStream;
import java.net.Socket;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.GeneralSecurityException;
import java.security.KeyStore;
import java.security.cert.Certificate;
import java.security.cert.CertificateException;
import java.security.cert.CertificateFactory;
import java.security.cert.X509Certificate;
import java.time.Instant;
import java.util.Arrays;
import java.util.Collection;
import javax.net.ssl.SSLEngine;
import javax.net.ssl.TrustManager;
import javax.net.ssl.TrustManagerFactory;
import javax.net.ssl.X509ExtendedTrustManager;

/**
 * Trusts the CA certificates of a PEM file, read again at every handshake and parsed again when its
 * bytes changed: the kubelet replaces a mounted Secret's files when the Secret changes (a rotated
 * CA, by a swap of the volume's {@code ..data} symlink), and the driver must not need a restart for
 * it. The content decides, not the modification time, which a coarse file clock or a copy that
 * keeps times leaves unchanged. Every check is the JDK's PKIX trust manager's, host name
 * verification included; only where its certificates come from is ours (JSSE has no trust manager
 * over a file that changes; grpc-java's AdvancedTlsX509TrustManager polls on a timer of its own and
 * reports nothing of a refusal). A refused server certificate is explained: its issuer and validity
 * beside the CAs the file holds, so that a CA rotated on one side only shows as such.
 */
final class CaFileTrustManager extends X509ExtendedTrustManager {

  private final Path caFile;
  private byte[] loaded;
  private X509ExtendedTrustManager delegate;

  /**
   * Reads nothing yet: a missing or broken file fails each handshake with the reason (readiness and
   * log say it, the driver retries), never the driver's start.
   */
  CaFileTrustManager(Path caFile) {
    this.caFile = caFile;
  }

  /** The trust manager over the file's certificates as they are now. */
  synchronized X509ExtendedTrustManager current() throws CertificateException {
    try {
      // a few hundred bytes per handshake, and handshakes are rare (one per connection)
      byte[] content = Files.readAllBytes(caFile);
      if (delegate == null || !Arrays.equals(content, loaded)) {
        delegate = load(caFile, content);
        loaded = content;
      }
      return delegate;
    } catch (IOException e) {
      throw new CertificateException(
          "the publisher's CA file " + caFile + " cannot be read: " + e, e);
    }
  }

  private static X509ExtendedTrustManager load(Path file, byte[] content) throws IOException {
    try (InputStream in = new ByteArrayInputStream(content)) {
      Collection<? extends Certificate> certificates =
          CertificateFactory.getInstance("X.509").generateCertificates(in);
      if (certificates.isEmpty()) {
        throw new IOException("no certificate in " + file);
      }
      KeyStore store = KeyStore.getInstance(KeyStore.getDefaultType());
      store.load(null, null);
      int i = 0;
      for (Certificate c : certificates) {
        store.setCertificateEntry("ca-" + i++, c);
      }
      TrustManagerFactory factory =
          TrustManagerFactory.getInstance(TrustManagerFactory.getDefaultAlgorithm());
      factory.init(store);
      for (TrustManager tm : factory.getTrustManagers()) {
        if (tm instanceof X509ExtendedTrustManager x) {
          return x;
        }
      }
      throw new IOException("the JDK offers no X.509 trust manager");
    } catch (GeneralSecurityException e) {
      throw new IOException(
          "the publisher's CA " + file + " is not a PEM certificate: " + e.getMessage(), e);
    }
  }

  @Override
  public void checkServerTrusted(X509Certificate[] chain, String authType, Socket socket)
      throws CertificateException {
    X509ExtendedTrustManager trust = current();
    try {
      trust.checkServerTrusted(chain, authType, socket);
    } catch (CertificateException e) {
      throw explained(chain, trust, e);
    }
  }

  @Override
  public void checkServerTrusted(X509Certificate[] chain, String authType, SSLEngine engine)
      throws CertificateException {
    X509ExtendedTrustManager trust = current();
    try {
      trust.checkServerTrusted(chain, authType, engine);
    } catch (CertificateException e) {
      throw explained(chain, trust, e);
    }
  }

  @Override
  public void checkServerTrusted(X509Certificate[] chain, String authType)
      throws CertificateException {
    X509ExtendedTrustManager trust = current();
    try {
      trust.checkServerTrusted(chain, authType);
    } catch (CertificateException e) {
      throw explained(chain, trust, e);
    }
  }

  @Override
  public void checkClientTrusted(X509Certificate[] chain, String authType, Socket socket)
      throws CertificateException {
    current().checkClientTrusted(chain, authType, socket);
  }

  @Override
  public void checkClientTrusted(X509Certificate[] chain, String authType, SSLEngine engine)
      throws CertificateException {
    current().checkClientTrusted(chain, authType, engine);
  }

  @Override
  public void checkClientTrusted(X509Certificate[] chain, String authType)
      throws CertificateException {
    current().checkClientTrusted(chain, authType);
  }

  /**
   * The refusal with what an operator needs to tell a rotation seen on one side only from an
   * expired certificate: the served certificate's subject, issuer and validity, and the CAs this
   * file holds. Without a cause, so that it is the innermost reason the reporter shows.
   */
  private CertificateException explained(
      X509Certificate[] chain, X509ExtendedTrustManager trust, CertificateException refusal) {
    String served =
        chain == null || chain.length == 0
            ? "no certificate"
            : TrustExplanation.describe(chain[0], Instant.now());
    CertificateException e =
        new CertificateException(
            "the publisher's certificate is not trusted ("
                + refusal.getMessage()
                + "): it is "
                + served
                + "; "
                + caFile
                + " holds "
                + TrustExplanation.subjects(trust.getAcceptedIssuers()));
    e.setStackTrace(refusal.getStackTrace());
    return e;
  }

  @Override
  public X509Certificate[] getAcceptedIssuers() {
    try {
      return current().getAcceptedIssuers();
    } catch (CertificateException e) {
      return new X509Certificate[0];
    }
  }
}
