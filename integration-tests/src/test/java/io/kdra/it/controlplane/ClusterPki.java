package io.kdra.it.controlplane;

import io.kdra.it.support.OwnerOnly;
import java.io.IOException;
import java.io.StringWriter;
import java.io.UncheckedIOException;
import java.math.BigInteger;
import java.nio.file.Path;
import java.security.GeneralSecurityException;
import java.security.KeyPair;
import java.security.KeyPairGenerator;
import java.security.SecureRandom;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Date;
import java.util.List;
import org.bouncycastle.asn1.x500.X500Name;
import org.bouncycastle.asn1.x509.BasicConstraints;
import org.bouncycastle.asn1.x509.ExtendedKeyUsage;
import org.bouncycastle.asn1.x509.Extension;
import org.bouncycastle.asn1.x509.GeneralName;
import org.bouncycastle.asn1.x509.GeneralNames;
import org.bouncycastle.asn1.x509.KeyPurposeId;
import org.bouncycastle.asn1.x509.KeyUsage;
import org.bouncycastle.cert.X509CertificateHolder;
import org.bouncycastle.cert.jcajce.JcaX509v3CertificateBuilder;
import org.bouncycastle.openssl.jcajce.JcaPEMWriter;
import org.bouncycastle.operator.OperatorCreationException;
import org.bouncycastle.operator.jcajce.JcaContentSignerBuilder;

/**
 * The multi-node cluster's keys, written into its control plane's directory (0600): a CA (what
 * every client of the API server trusts, also published to pods as {@code kube-root-ca.crt}, and
 * what each kubelet trusts for its clients), the API server's serving certificate for every address
 * it is called at (the bridge, loopback and the {@code kubernetes} Service's ClusterIP and names:
 * in-cluster clients check the ClusterIP), its client certificate for the kubelets (kubeadm's
 * {@code apiserver-kubelet-client}), and the ServiceAccount signing key. kube-api-test's
 * certificates are self-signed and name loopback only, which no client in a node's own network can
 * check.
 */
final class ClusterPki {

  static final String CA_CERT = "ca.crt";
  static final String SERVING_CERT = "serving.crt";
  static final String SERVING_KEY = "serving.key";
  static final String KUBELET_CLIENT_CERT = "apiserver-kubelet-client.crt";
  static final String KUBELET_CLIENT_KEY = "apiserver-kubelet-client.key";

  /**
   * The API server's user name at the kubelets, kubeadm's: in no group (kubeadm 1.37 took it out of
   * {@code kubeadm:cluster-admins}), allowed the kubelet API by a ClusterRoleBinding to {@code
   * system:kubelet-api-admin} ({@link ClusterApiServer}).
   */
  static final String KUBELET_CLIENT_USER = "kube-apiserver-kubelet-client";

  /**
   * kube-controller-manager reads the ServiceAccount key by this name ({@link
   * UpstreamControllers}).
   */
  static final String SERVICE_ACCOUNT_KEY =
      io.fabric8.kubeapitest.cert.CertManager.API_SERVER_KEY_NAME;

  private ClusterPki() {}

  /**
   * Writes the CA, the serving certificate for {@code ips} and {@code dnsNames}, the kubelet client
   * certificate and the SA key.
   */
  static void write(Path dir, List<String> ips, List<String> dnsNames) {
    try {
      KeyPair ca = rsa();
      X500Name caName = new X500Name("CN=kdra-multi-node-ca");
      Instant now = Instant.now();
      JcaX509v3CertificateBuilder caCert =
          new JcaX509v3CertificateBuilder(
              caName, serial(), from(now), until(now), caName, ca.getPublic());
      caCert.addExtension(Extension.basicConstraints, true, new BasicConstraints(true));
      caCert.addExtension(
          Extension.keyUsage, true, new KeyUsage(KeyUsage.keyCertSign | KeyUsage.cRLSign));
      OwnerOnly.write(dir.resolve(CA_CERT), pem(sign(caCert, ca)));

      KeyPair serving = rsa();
      JcaX509v3CertificateBuilder servingCert =
          new JcaX509v3CertificateBuilder(
              caName,
              serial(),
              from(now),
              until(now),
              new X500Name("CN=kube-apiserver"),
              serving.getPublic());
      List<GeneralName> names = new ArrayList<>();
      ips.forEach(ip -> names.add(new GeneralName(GeneralName.iPAddress, ip)));
      dnsNames.forEach(n -> names.add(new GeneralName(GeneralName.dNSName, n)));
      servingCert.addExtension(
          Extension.subjectAlternativeName,
          false,
          new GeneralNames(names.toArray(GeneralName[]::new)));
      servingCert.addExtension(Extension.basicConstraints, true, new BasicConstraints(false));
      OwnerOnly.write(dir.resolve(SERVING_CERT), pem(sign(servingCert, ca)));
      OwnerOnly.write(dir.resolve(SERVING_KEY), pem(serving.getPrivate()));

      KeyPair kubeletClient = rsa();
      JcaX509v3CertificateBuilder kubeletClientCert =
          new JcaX509v3CertificateBuilder(
              caName,
              serial(),
              from(now),
              until(now),
              new X500Name("CN=" + KUBELET_CLIENT_USER),
              kubeletClient.getPublic());
      kubeletClientCert.addExtension(Extension.basicConstraints, true, new BasicConstraints(false));
      kubeletClientCert.addExtension(
          Extension.keyUsage,
          true,
          new KeyUsage(KeyUsage.digitalSignature | KeyUsage.keyEncipherment));
      kubeletClientCert.addExtension(
          Extension.extendedKeyUsage, false, new ExtendedKeyUsage(KeyPurposeId.id_kp_clientAuth));
      OwnerOnly.write(dir.resolve(KUBELET_CLIENT_CERT), pem(sign(kubeletClientCert, ca)));
      OwnerOnly.write(dir.resolve(KUBELET_CLIENT_KEY), pem(kubeletClient.getPrivate()));
      OwnerOnly.write(dir.resolve(SERVICE_ACCOUNT_KEY), pem(rsa().getPrivate()));
    } catch (GeneralSecurityException | OperatorCreationException | IOException e) {
      throw new IllegalStateException("making the multi-node cluster's keys", e);
    }
  }

  private static KeyPair rsa() throws GeneralSecurityException {
    KeyPairGenerator g = KeyPairGenerator.getInstance("RSA");
    g.initialize(2048);
    return g.generateKeyPair();
  }

  private static BigInteger serial() {
    return new BigInteger(64, new SecureRandom());
  }

  private static Date from(Instant now) {
    return Date.from(now.minus(Duration.ofHours(1)));
  }

  private static Date until(Instant now) {
    return Date.from(now.plus(Duration.ofDays(2)));
  }

  private static X509CertificateHolder sign(JcaX509v3CertificateBuilder b, KeyPair issuer)
      throws OperatorCreationException {
    return b.build(new JcaContentSignerBuilder("SHA256WithRSA").build(issuer.getPrivate()));
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
