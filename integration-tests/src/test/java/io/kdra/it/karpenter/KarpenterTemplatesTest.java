package io.kdra.it.karpenter;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.kdra.it.karpenter.KarpenterTemplates.InstanceTypeInventory;
import java.time.Instant;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/**
 * The templates file in the shape kdra-karpenter-kwok reads (Go's resourcev1.ResourceSliceSpec
 * JSON), from a simulated inventory through the driver's and the publisher's own code.
 */
class KarpenterTemplatesTest {

  private static final String TWO_L4 =
      """
      devices:
      - name: gpu-0
        attributes: {productName: NVIDIA L4, index: 0, driverVersion: {version: 550.54.15}}
        capacity: {memory: 24Gi}
      - name: gpu-1
        attributes: {productName: NVIDIA L4, index: 1, driverVersion: {version: 550.54.15}}
        capacity: {memory: 24Gi}
      """;

  @Test
  void eachInstanceTypeGetsThePublishersSlicesWithoutANode() throws Exception {
    String json =
        KarpenterTemplates.json(
            "gpu.kdra.io",
            List.of(
                new InstanceTypeInventory(
                    "l4-x2", TWO_L4, Map.of("node.kubernetes.io/instance-type", "l4-x2"))),
            Instant.parse("2026-12-06T12:00:00Z"));

    JsonNode entry = new ObjectMapper().readTree(json).get(0);
    assertThat(entry.get("instanceType").asText()).isEqualTo("l4-x2");
    JsonNode slice = entry.get("slices").get(0);
    assertThat(slice.get("driver").asText()).isEqualTo("gpu.kdra.io");
    assertThat(slice.get("pool").get("name").asText()).isEqualTo("l4-x2");
    assertThat(slice.has("nodeName")).isFalse();
    JsonNode gpu0 = slice.get("devices").get(0);
    assertThat(gpu0.get("name").asText()).isEqualTo("gpu-0");
    assertThat(gpu0.get("attributes").get("productName").get("string").asText())
        .isEqualTo("NVIDIA L4");
    assertThat(gpu0.get("attributes").get("index").get("int").asLong()).isZero();
    assertThat(gpu0.get("attributes").get("driverVersion").get("version").asText())
        .isEqualTo("550.54.15");
    assertThat(gpu0.get("capacity").get("memory").get("value").asText()).isEqualTo("24Gi");
  }
}
