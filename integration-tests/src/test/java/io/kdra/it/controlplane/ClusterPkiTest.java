package io.kdra.it.controlplane;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.ByteArrayInputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.cert.CertificateFactory;
import java.security.cert.X509Certificate;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The API server's client certificate for the kubelets is kubeadm's {@code
 * apiserver-kubelet-client}: signed by the cluster's CA (what each kubelet trusts for clients),
 * named {@code kube-apiserver-kubelet-client} in no group, for client authentication only; the API
 * server calls the kubelets with it, at their InternalIP, without a kubelet CA (kubeadm's flags).
 */
class ClusterPkiTest {

  private static X509Certificate read(Path file) throws Exception {
    return (X509Certificate)
        CertificateFactory.getInstance("X.509")
            .generateCertificate(
                new ByteArrayInputStream(Files.readString(file).getBytes(StandardCharsets.UTF_8)));
  }

  @Test
  void theKubeletClientCertificateIsKubeadms(@TempDir Path dir) throws Exception {
    ClusterPki.write(dir, List.of("127.0.0.1"), List.of("kubernetes"));
    X509Certificate ca = read(dir.resolve(ClusterPki.CA_CERT));
    X509Certificate client = read(dir.resolve(ClusterPki.KUBELET_CLIENT_CERT));

    client.verify(ca.getPublicKey());
    assertThat(client.getSubjectX500Principal().getName())
        .isEqualTo("CN=kube-apiserver-kubelet-client");
    assertThat(client.getExtendedKeyUsage()).containsExactly("1.3.6.1.5.5.7.3.2");
    assertThat(client.getBasicConstraints()).isEqualTo(-1);
    assertThat(Files.readString(dir.resolve(ClusterPki.KUBELET_CLIENT_KEY)))
        .startsWith("-----BEGIN RSA PRIVATE KEY-----");
  }

  @Test
  void theApiServerCallsKubeletsAsKubeadmsDoes() {
    Path dir = Path.of("/nonexistent/cp");
    assertThat(ClusterApiServer.kubeletClientFlags(dir))
        .containsExactly(
            "--kubelet-client-certificate=/nonexistent/cp/apiserver-kubelet-client.crt",
            "--kubelet-client-key=/nonexistent/cp/apiserver-kubelet-client.key",
            "--kubelet-preferred-address-types=InternalIP,ExternalIP,Hostname")
        .noneMatch(f -> f.startsWith("--kubelet-certificate-authority"));
  }
}
