package io.kdra.it;

import static io.kdra.it.SimulatedNode.twoL4s;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.resource.v1.ResourceClaim;
import io.fabric8.kubernetes.client.KubernetesClient;
import java.time.Duration;
import java.util.List;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * Scenario 9: the services export their spans over OTLP/HTTP to a receiver in the test JVM; the
 * claim-controller starts a claim's trace and writes its {@code traceparent} on the claim
 * ({@code kdra.io/traceparent}), and the node's device-driver records its prepare in the same
 * trace.
 */
@ExtendWith(ControlPlane.class)
class TracesIT {

  private static final String NODE = "node-a";
  private static final OtlpReceiver RECEIVER = new OtlpReceiver();

  @RegisterExtension
  static final KdraStack STACK = KdraStack.nodes(twoL4s(NODE))
      .withProperties(RECEIVER.serviceProperties());

  private static Stack stack;
  private static KubernetesClient client;

  @BeforeAll
  static void slicesPublished() {
    stack = STACK.get();
    client = stack.client;
    await().atMost(Duration.ofSeconds(60)).untilAsserted(() ->
        assertThat(Dra.publishedDevices(client, NODE)).isEqualTo(2));
  }

  @AfterAll
  static void stopReceiver() {
    RECEIVER.close();
  }

  @Test
  void oneClaimsSpansFromControllerAndDriverShareOneTrace() {
    String ns = stack.namespace;
    client.resource(Dra.template(ns, "one-gpu", KdraChart.GPU_CLASS, 1)).create();
    Pod pod = client.resource(Dra.podWithTemplate(ns, "traced", "one-gpu")).create();
    await().atMost(Duration.ofSeconds(60)).untilAsserted(() ->
        assertThat(stack.kubelet(NODE).prepared(pod)).isNotNull());

    ResourceClaim claim = Dra.claimOf(client, pod, "gpu");
    String traceparent = claim.getMetadata().getAnnotations().get("kdra.io/traceparent");
    assertThat(traceparent).as("the claim's traceparent")
        .matches("00-[0-9a-f]{32}-[0-9a-f]{16}-0[01]");
    String traceId = traceparent.split("-")[1];

    await().atMost(Duration.ofSeconds(90)).untilAsserted(() -> {
      List<OtlpReceiver.ReceivedSpan> trace = RECEIVER.spans().stream()
          .filter(s -> s.traceId().equals(traceId)).toList();
      assertThat(trace).as("spans of trace %s among %s", traceId, RECEIVER.spans())
          .anySatisfy(s -> assertThat(s.service()).isEqualTo("claim-controller"))
          .anySatisfy(s -> {
            assertThat(s.service()).isEqualTo("device-driver");
            assertThat(s.name()).isEqualTo("prepare claim");
            assertThat(s.attributes()).containsValue(claim.getMetadata().getUid());
            // a child of the controller's span named in the annotation, not a new root
            assertThat(s.parentSpanId()).isEqualTo(traceparent.split("-")[2]);
          });
    });
    RECEIVER.spans().stream().filter(s -> s.traceId().equals(traceId))
        .forEach(s -> System.out.printf("[it] trace %s: %s %s span %s parent %s%n", traceId,
            s.service(), s.name(), s.spanId(), s.parentSpanId()));
    client.resource(pod).delete();
  }
}
