package io.kdra.slicepublisher.grpc;

import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.security.GeneralSecurityException;
import java.security.Principal;
import java.security.PrivateKey;
import java.security.Signature;
import java.security.cert.X509Certificate;
import java.util.Arrays;
import java.util.concurrent.Callable;
import javax.net.ssl.KeyManager;
import javax.net.ssl.KeyManagerFactory;
import javax.net.ssl.SSLEngine;
import javax.net.ssl.X509ExtendedKeyManager;

/**
 * A server key manager whose certificate and key can be replaced while it serves: every call goes
 * to the key manager last read by {@link #reload}, so each new handshake gets the newest
 * certificate. A read whose key does not match its certificate (the files caught between two
 * writes) is refused and the previous pair kept.
 */
public final class ReloadingKeyManager extends X509ExtendedKeyManager {

  private final Callable<KeyManagerFactory> source;
  private volatile X509ExtendedKeyManager current;
  private volatile X509Certificate served;

  /** Reads the source once now; throws when it holds no usable certificate and key. */
  public ReloadingKeyManager(Callable<KeyManagerFactory> source) {
    this.source = source;
    try {
      reload();
    } catch (Exception e) {
      throw new IllegalStateException("the TLS certificate and key cannot be read: " + e, e);
    }
  }

  /** Reads the source again; whether another certificate is served from now on. */
  public boolean reload() throws Exception {
    X509ExtendedKeyManager next = null;
    for (KeyManager m : source.call().getKeyManagers()) {
      if (m instanceof X509ExtendedKeyManager x) {
        next = x;
      }
    }
    if (next == null) {
      throw new GeneralSecurityException("no X.509 key manager");
    }
    String alias = null;
    for (String keyType : new String[] {"RSA", "EC", "EdDSA"}) {
      String[] aliases = next.getServerAliases(keyType, null);
      if (alias == null && aliases != null && aliases.length > 0) {
        alias = aliases[0];
      }
    }
    X509Certificate[] chain = alias == null ? null : next.getCertificateChain(alias);
    PrivateKey key = alias == null ? null : next.getPrivateKey(alias);
    if (chain == null || chain.length == 0 || key == null) {
      throw new GeneralSecurityException("no certificate and key");
    }
    if (served != null && Arrays.equals(served.getEncoded(), chain[0].getEncoded())) {
      return false;
    }
    if (!matches(key, chain[0])) {
      throw new GeneralSecurityException(
          "the key is not the certificate's (the files are being" + " replaced?)");
    }
    current = next;
    served = chain[0];
    return true;
  }

  /** The certificate handshakes get now. */
  public X509Certificate served() {
    return served;
  }

  private static boolean matches(PrivateKey key, X509Certificate certificate)
      throws GeneralSecurityException {
    String algorithm =
        switch (key.getAlgorithm()) {
          case "RSA" -> "SHA256withRSA";
          case "EC" -> "SHA256withECDSA";
          case "Ed25519", "EdDSA" -> "Ed25519";
          default -> throw new GeneralSecurityException("unsupported key " + key.getAlgorithm());
        };
    byte[] probe = "kdra".getBytes(StandardCharsets.US_ASCII);
    Signature sign = Signature.getInstance(algorithm);
    sign.initSign(key);
    sign.update(probe);
    byte[] signature = sign.sign();
    Signature verify = Signature.getInstance(algorithm);
    verify.initVerify(certificate.getPublicKey());
    verify.update(probe);
    return verify.verify(signature);
  }

  @Override
  public String[] getClientAliases(String keyType, Principal[] issuers) {
    return current.getClientAliases(keyType, issuers);
  }

  @Override
  public String chooseClientAlias(String[] keyType, Principal[] issuers, Socket socket) {
    return current.chooseClientAlias(keyType, issuers, socket);
  }

  @Override
  public String[] getServerAliases(String keyType, Principal[] issuers) {
    return current.getServerAliases(keyType, issuers);
  }

  @Override
  public String chooseServerAlias(String keyType, Principal[] issuers, Socket socket) {
    return current.chooseServerAlias(keyType, issuers, socket);
  }

  @Override
  public String chooseEngineClientAlias(String[] keyType, Principal[] issuers, SSLEngine engine) {
    return current.chooseEngineClientAlias(keyType, issuers, engine);
  }

  @Override
  public String chooseEngineServerAlias(String keyType, Principal[] issuers, SSLEngine engine) {
    return current.chooseEngineServerAlias(keyType, issuers, engine);
  }

  @Override
  public X509Certificate[] getCertificateChain(String alias) {
    return current.getCertificateChain(alias);
  }

  @Override
  public PrivateKey getPrivateKey(String alias) {
    return current.getPrivateKey(alias);
  }
}
