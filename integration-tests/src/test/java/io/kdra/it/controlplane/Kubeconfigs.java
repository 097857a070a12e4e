package io.kdra.it.controlplane;

import io.fabric8.kubernetes.client.Config;
import java.nio.file.Path;

/**
 * Kubeconfig files for the test API server, as the services and upstream's controllers read them.
 */
public final class Kubeconfigs {

  /**
   * The context's namespace: where the chart installs the services ({@code KdraChart.NAMESPACE}).
   */
  public static final String NAMESPACE = "kdra-system";

  private Kubeconfigs() {}

  /** A kubeconfig for the API server of {@code admin} that authenticates with {@code token}. */
  public static String kubeconfig(Config admin, Path caFile, String user, String token) {
    return "apiVersion: v1\n"
        + "kind: Config\n"
        + "clusters:\n"
        + "- name: kdra-it\n"
        + "  cluster:\n"
        + "    server: "
        + admin.getMasterUrl()
        + "\n"
        + "    certificate-authority: "
        + caFile.toAbsolutePath()
        + "\n"
        + "users:\n"
        + "- name: "
        + user
        + "\n"
        + "  user:\n"
        + "    token: "
        + token
        + "\n"
        + "contexts:\n"
        + "- name: "
        + user
        + "\n"
        + "  context: {cluster: kdra-it, user: "
        + user
        + ", namespace: "
        + NAMESPACE
        + "}\n"
        + "current-context: "
        + user
        + "\n";
  }
}
