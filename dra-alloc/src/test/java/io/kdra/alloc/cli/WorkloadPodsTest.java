package io.kdra.alloc.cli;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import com.fasterxml.jackson.dataformat.yaml.YAMLFactory;
import java.util.List;
import org.junit.jupiter.api.Test;

class WorkloadPodsTest {
  private static final ObjectMapper YAML = new ObjectMapper(new YAMLFactory());

  private static JsonNode yaml(String text) throws Exception {
    return YAML.readTree(text);
  }

  @Test
  void aDeploymentRunsItsReplicasNamedAfterIt() throws Exception {
    List<ObjectNode> pods =
        WorkloadPods.expand(
            yaml(
                """
        kind: Deployment
        metadata: {name: inference, namespace: ml}
        spec:
          replicas: 3
          template:
            metadata: {labels: {app: inference}}
            spec: {containers: [{name: app, image: app:1}]}
        """));

    assertThat(pods)
        .extracting(p -> p.path("metadata").path("name").asText())
        .containsExactly("inference-0", "inference-1", "inference-2");
    assertThat(pods.get(2).path("metadata").path("namespace").asText()).isEqualTo("ml");
    assertThat(pods.get(2).path("metadata").path("labels").path("app").asText())
        .isEqualTo("inference");
    assertThat(pods.get(0).path("kind").asText()).isEqualTo("Pod");
    assertThat(pods.get(0).path("spec").path("containers").get(0).path("image").asText())
        .isEqualTo("app:1");
  }

  @Test
  void aJobRunsParallelismPodsButNoMoreThanItsCompletions() throws Exception {
    String job =
        """
        kind: Job
        metadata: {name: train}
        spec:
          parallelism: 4
          completions: %s
          template: {spec: {containers: [{name: app, image: app:1}]}}
        """;
    assertThat(WorkloadPods.expand(yaml(job.formatted("2")))).hasSize(2);
    assertThat(WorkloadPods.expand(yaml(job.formatted("10")))).hasSize(4);
    assertThat(
            WorkloadPods.expand(
                yaml("kind: Job\nmetadata: {name: one}\n" + "spec: {template: {spec: {}}}\n")))
        .hasSize(1);
  }

  @Test
  void aWorkloadWithoutAPodTemplateIsRefusedNamingTheField() {
    assertThatThrownBy(
            () ->
                WorkloadPods.expand(
                    yaml("kind: Deployment\nmetadata: {name: x}\n" + "spec: {replicas: 1}\n")))
        .hasMessage("field spec.template.spec: missing");
  }
}
