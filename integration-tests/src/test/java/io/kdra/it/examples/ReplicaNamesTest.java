package io.kdra.it.examples;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.dataformat.yaml.YAMLFactory;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

class ReplicaNamesTest {

  private static final ObjectMapper YAML = new ObjectMapper(new YAMLFactory());

  private static JsonNode doc(String yaml) throws Exception {
    return YAML.readTree(yaml);
  }

  @Test
  void aDeploymentsTemplateClaimsAreNamedForAnyReplica() throws Exception {
    JsonNode deployment =
        doc(
            """
            kind: Deployment
            metadata: {name: inference, namespace: ml}
            spec:
              replicas: 2
              template:
                spec:
                  resourceClaims:
                  - {name: gpu, resourceClaimTemplateName: gpu-share}
                  - {name: shared, resourceClaimName: one-for-all}
            """);

    assertThat(ReplicaNames.ofDraAlloc(deployment))
        .containsExactly(
            Map.entry("inference-0-gpu", "inference-*-gpu"),
            Map.entry("inference-1-gpu", "inference-*-gpu"));
  }

  @Test
  void aJobRunsMinOfParallelismAndCompletions() throws Exception {
    JsonNode job =
        doc(
            """
            kind: Job
            metadata: {name: finetune}
            spec:
              parallelism: 3
              completions: 2
              template:
                spec:
                  resourceClaims:
                  - {name: gpu, resourceClaimTemplateName: half-h100}
            """);

    assertThat(ReplicaNames.ofDraAlloc(job))
        .containsOnlyKeys("finetune-0-gpu", "finetune-1-gpu")
        .containsValue("finetune-*-gpu");
  }

  @ParameterizedTest(name = "{0}")
  @CsvSource(
      delimiter = '|',
      value = {
        "a replica's claim | ml/inference-3-gpu -> node-a: gpu (gpu.kdra.io/node-a/gpu-1)"
            + " | ml/inference-*-gpu -> node-a: gpu (gpu.kdra.io/node-a/gpu-1)",
        "a claim of its own name | ml/big-gpu-1 -> node-b: gpu (gpu.kdra.io/node-b/gpu-0)"
            + " | ml/big-gpu-1 -> node-b: gpu (gpu.kdra.io/node-b/gpu-0)",
        "a selector with slashes | ml/inference-0-gpu -> nodes matching [a/b In [x]]: gpu (d/p/g)"
            + " | ml/inference-*-gpu -> nodes matching [a/b In [x]]: gpu (d/p/g)",
      })
  void renamesTheClaimOfASummaryLine(String what, String line, String expected) {
    Map<String, String> names =
        Map.of("inference-3-gpu", "inference-*-gpu", "inference-0-gpu", "inference-*-gpu");
    assertThat(ReplicaNames.renamed(line, names)).isEqualTo(expected);
  }

  @Test
  void aLineWithoutAClaimIsRefused() {
    assertThatThrownBy(() -> ReplicaNames.renamed("nothing allocated", Map.of()))
        .hasMessageContaining("not a summary line");
  }
}
