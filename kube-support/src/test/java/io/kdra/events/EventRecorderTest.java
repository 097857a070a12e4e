package io.kdra.events;

import static org.assertj.core.api.Assertions.assertThat;

import io.fabric8.kubernetes.api.model.Event;
import io.fabric8.kubernetes.api.model.GenericKubernetesResourceBuilder;
import io.fabric8.kubernetes.api.model.HasMetadata;
import io.fabric8.kubernetes.api.model.PodBuilder;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.server.mock.EnableKubernetesMockClient;
import java.time.Clock;
import java.time.Instant;
import java.time.ZoneOffset;
import java.util.List;
import org.junit.jupiter.api.Test;

@EnableKubernetesMockClient(crud = true)
class EventRecorderTest {

  KubernetesClient client;

  private final Clock clock =
      Clock.fixed(Instant.parse("2026-01-01T10:00:00.123456Z"), ZoneOffset.UTC);

  private List<Event> events(String namespace) {
    return client.v1().events().inNamespace(namespace).list().getItems();
  }

  @Test
  void aNamespacedObjectsEventIsInItsNamespaceAndNamesIt() {
    HasMetadata pod =
        new PodBuilder()
            .withNewMetadata()
            .withNamespace("team-a")
            .withName("web")
            .withUid("uid-web")
            .withResourceVersion("7")
            .endMetadata()
            .build();
    new EventRecorder(client, "dra-claim-controller", clock)
        .warning(pod, "FailedScheduling", "0/3 nodes are available");
    assertThat(events("team-a"))
        .singleElement()
        .satisfies(
            e -> {
              assertThat(e.getMetadata().getName()).startsWith("web.");
              assertThat(e.getType()).isEqualTo("Warning");
              assertThat(e.getReason()).isEqualTo("FailedScheduling");
              assertThat(e.getMessage()).isEqualTo("0/3 nodes are available");
              assertThat(e.getInvolvedObject().getKind()).isEqualTo("Pod");
              assertThat(e.getInvolvedObject().getNamespace()).isEqualTo("team-a");
              assertThat(e.getInvolvedObject().getUid()).isEqualTo("uid-web");
              assertThat(e.getInvolvedObject().getResourceVersion()).isEqualTo("7");
              assertThat(e.getSource().getComponent()).isEqualTo("dra-claim-controller");
              assertThat(e.getReportingComponent()).isEqualTo("dra-claim-controller");
              assertThat(e.getFirstTimestamp()).isEqualTo("2026-01-01T10:00:00Z");
              assertThat(e.getCount()).isEqualTo(1);
            });
  }

  @Test
  void aClusterScopedObjectsEventIsInDefault() {
    HasMetadata computeClass =
        new GenericKubernetesResourceBuilder()
            .withApiVersion("cloud.google.com/v1")
            .withKind("ComputeClass")
            .withNewMetadata()
            .withName("gpu-large")
            .withUid("uid-cc")
            .endMetadata()
            .build();
    new EventRecorder(client, "kdra-computeclass-bridge", clock)
        .normal(computeClass, "Applied", "3 objects");
    assertThat(events("default"))
        .singleElement()
        .satisfies(
            e -> {
              assertThat(e.getType()).isEqualTo("Normal");
              assertThat(e.getInvolvedObject().getKind()).isEqualTo("ComputeClass");
              assertThat(e.getInvolvedObject().getNamespace()).isNull();
            });
  }

  @Test
  void aLongMessageIsCutToWhatTheApiServerTakes() {
    HasMetadata pod =
        new PodBuilder().withNewMetadata().withNamespace("ns").withName("p").endMetadata().build();
    new EventRecorder(client, "c", clock).warning(pod, "R", "x".repeat(5000));
    assertThat(events("ns"))
        .singleElement()
        .satisfies(
            e -> {
              assertThat(e.getMessage()).hasSize(EventRecorder.MAX_MESSAGE).endsWith("...");
            });
  }
}
