package io.kdra.it.services;

import io.fabric8.kubernetes.client.Config;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientBuilder;
import io.kdra.it.chart.KdraChart;
import io.kdra.it.support.OwnerOnly;
import io.kdra.it.support.TestFiles;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.Base64;
import java.util.Map;

/**
 * The control-plane clients of a stack: each service's kubeconfig, with the API server and CA of
 * the admin kubeconfig and a token of the chart's ServiceAccount for it (never the admin
 * certificate that the test code uses), and clients that authenticate as a service or a token.
 */
public final class ServiceIdentities {

  /** The admin kubeconfig's API server and CA; the services get their own kubeconfigs. */
  private final Config admin;

  private final Path caFile;
  private final Path kubeconfigDir;

  ServiceIdentities(Config admin, Path kubeconfigDir) {
    this.admin = admin;
    this.caFile = caFile(admin);
    this.kubeconfigDir = kubeconfigDir;
  }

  Config admin() {
    return admin;
  }

  /** The API server's CA, as a file. */
  public Path caFile() {
    return caFile;
  }

  /** Removes the kubeconfigs of an earlier stack of the same name. */
  void clear() {
    TestFiles.deleteRecursively(kubeconfigDir);
  }

  /**
   * The environment that makes a service's kubernetes-client authenticate as the chart's
   * ServiceAccount of {@code component}: a kubeconfig of its own, with the API server, its CA and
   * the token, found through {@code KUBECONFIG} (the Quarkus client starts from fabric8's
   * auto-configuration, which reads it). Neither the admin certificate nor anything else.
   */
  Map<String, String> environment(String component, String process, String token) {
    Path file = kubeconfig(process);
    OwnerOnly.write(
        file, KdraChart.kubeconfig(admin, caFile, KdraChart.serviceAccount(component), token));
    return Map.of("KUBECONFIG", file.toString());
  }

  /**
   * As {@link #environment}, with the API server reached at {@code server} instead (a proxy in
   * front of it, on this machine: the API server's certificate names 127.0.0.1).
   */
  Map<String, String> environmentThrough(
      String server, String component, String process, String token) {
    Path file = kubeconfig(process);
    Config through =
        new io.fabric8.kubernetes.client.ConfigBuilder(admin).withMasterUrl(server).build();
    OwnerOnly.write(
        file, KdraChart.kubeconfig(through, caFile, KdraChart.serviceAccount(component), token));
    return Map.of("KUBECONFIG", file.toString());
  }

  /** The API server's host and port. */
  java.net.InetSocketAddress apiServer() {
    java.net.URI uri = java.net.URI.create(admin.getMasterUrl());
    return new java.net.InetSocketAddress(uri.getHost(), uri.getPort());
  }

  /** The kubeconfig (with its token) that the service {@code process} runs with. */
  public Path kubeconfig(String process) {
    return kubeconfigDir.resolve(process + ".yaml");
  }

  /**
   * A client with the kubeconfig (so the token) the service {@code process} runs with ({@code
   * slice-publisher}, {@code device-driver-<node>}, ...).
   */
  public KubernetesClient clientOf(String process) {
    return new KubernetesClientBuilder()
        .withConfig(Config.fromKubeconfig(TestFiles.read(kubeconfig(process))))
        .build();
  }

  /** A client for this API server that authenticates with {@code token}. */
  public KubernetesClient clientWithToken(String token) {
    return new KubernetesClientBuilder()
        .withConfig(Config.fromKubeconfig(KdraChart.kubeconfig(admin, caFile, "token", token)))
        .build();
  }

  /** The API server's CA of the admin kubeconfig, as a file (written when it has data only). */
  public static Path caFile(Config admin) {
    return Path.of(
        file(
            admin.getCaCertFile(), admin.getCaCertData(), Path.of("target", "it-certs", "ca.crt")));
  }

  private static String file(String file, String base64Data, Path target) {
    if (file != null && !file.isBlank()) {
      return Path.of(file).toAbsolutePath().toString();
    }
    if (base64Data == null) {
      throw new IllegalStateException("the kubeconfig has neither a file nor data for " + target);
    }
    TestFiles.write(
        target.toAbsolutePath(),
        new String(Base64.getDecoder().decode(base64Data), StandardCharsets.UTF_8));
    return target.toAbsolutePath().toString();
  }
}
