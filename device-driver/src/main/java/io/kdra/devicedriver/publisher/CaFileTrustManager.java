package io.kdra.devicedriver.publisher;

import java.io.IOException;
import java.io.InputStream;
import java.net.Socket;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.FileTime;
import java.security.GeneralSecurityException;
import java.security.KeyStore;
import java.security.cert.Certificate;
import java.security.cert.CertificateException;
import java.security.cert.CertificateFactory;
import java.security.cert.X509Certificate;
import java.util.Collection;
import javax.net.ssl.SSLEngine;
import javax.net.ssl.TrustManager;
import javax.net.ssl.TrustManagerFactory;
import javax.net.ssl.X509ExtendedTrustManager;

/**
 * Trusts the CA certificates of a PEM file, read again when the file changes: the kubelet replaces
 * a mounted Secret's files when the Secret changes (a rotated CA), and the driver must not need a
 * restart for it. Every check is the JDK's PKIX trust manager's, host name verification included;
 * only where its certificates come from is ours (JSSE has no trust manager over a file that
 * changes).
 */
final class CaFileTrustManager extends X509ExtendedTrustManager {

  private final Path caFile;
  private FileTime loadedAt;
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
      FileTime modified = Files.getLastModifiedTime(caFile);
      if (delegate == null || !modified.equals(loadedAt)) {
        delegate = load(caFile);
        loadedAt = modified;
      }
      return delegate;
    } catch (IOException e) {
      throw new CertificateException(
          "the publisher's CA file " + caFile + " cannot be read: " + e, e);
    }
  }

  private static X509ExtendedTrustManager load(Path file) throws IOException {
    try (InputStream in = Files.newInputStream(file)) {
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
    current().checkServerTrusted(chain, authType, socket);
  }

  @Override
  public void checkServerTrusted(X509Certificate[] chain, String authType, SSLEngine engine)
      throws CertificateException {
    current().checkServerTrusted(chain, authType, engine);
  }

  @Override
  public void checkServerTrusted(X509Certificate[] chain, String authType)
      throws CertificateException {
    current().checkServerTrusted(chain, authType);
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

  @Override
  public X509Certificate[] getAcceptedIssuers() {
    try {
      return current().getAcceptedIssuers();
    } catch (CertificateException e) {
      return new X509Certificate[0];
    }
  }
}
