package io.kdra.it.nodes;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Path;
import java.util.Map;
import org.junit.jupiter.api.Test;

/**
 * The kubelet's configuration carries the feature gates a test asks for, and none otherwise (the
 * version's defaults, as every node had before).
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
}
