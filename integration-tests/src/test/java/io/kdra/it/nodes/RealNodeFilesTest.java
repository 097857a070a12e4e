package io.kdra.it.nodes;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Path;
import java.util.Map;
import org.junit.jupiter.api.Test;

/**
 * The kubelet's configuration carries the feature gates a test asks for, and none otherwise (the
 * version's defaults, as every node had before); a cluster node's kubelet lets the API server in as
 * kubeadm's does.
 */
class RealNodeFilesTest {

  private static String kubeletConfig(Map<String, Boolean> gates) {
    return new RealNodeFiles(
            Path.of("/nonexistent/rn"),
            null,
            NodeCgroups.forNode("rn-test"),
            "unused",
            null,
            null,
            gates)
        .kubeletConfig();
  }

  @Test
  void noGatesNoFeatureGatesKey() {
    assertThat(kubeletConfig(Map.of())).doesNotContain("featureGates");
    assertThat(
            new RealNodeFiles(
                    Path.of("/nonexistent/rn"),
                    null,
                    NodeCgroups.forNode("rn-test"),
                    "unused",
                    null)
                .kubeletConfig())
        .doesNotContain("featureGates");
  }

  @Test
  void theGatesAsOneSortedMapping() {
    assertThat(kubeletConfig(Map.of("DRAOptionalNodeOperations", true, "DRAAdminAccess", false)))
        .containsOnlyOnce(
            "featureGates: {DRAAdminAccess: false, DRAOptionalNodeOperations: true}\n")
        .startsWith("apiVersion: kubelet.config.k8s.io/v1beta1\nkind: KubeletConfiguration\n");
  }

  @Test
  void aClusterNodesKubeletTrustsTheClusterCaAndAsksTheApiServer() {
    RealNode.OwnNetwork own =
        new RealNode.OwnNetwork(
            "198.51.100.2",
            "198.18.0.0/24",
            Path.of("/nonexistent/cni"),
            "10.96.0.10",
            Path.of("/nonexistent/cp/ca.crt"),
            pid -> {});
    String config =
        new RealNodeFiles(
                Path.of("/nonexistent/rn"),
                null,
                NodeCgroups.forNode("rn-test"),
                "unused",
                null,
                own,
                Map.of())
            .kubeletConfig();
    assertThat(config)
        .contains(
            "authentication:\n"
                + "  anonymous: {enabled: false}\n"
                + "  webhook: {enabled: true}\n"
                + "  x509: {clientCAFile: /nonexistent/rn/conf/ca.crt}\n"
                + "authorization: {mode: Webhook}\n")
        .doesNotContain("AlwaysAllow");
  }
}
