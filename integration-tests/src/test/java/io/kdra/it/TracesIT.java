package io.kdra.it;

import static io.kdra.it.nodes.SimulatedNode.twoL4s;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.fabric8.kubernetes.api.model.GenericKubernetesResource;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.resource.v1.ResourceClaim;
import io.fabric8.kubernetes.api.model.resource.v1.ResourceClaimTemplate;
import io.fabric8.kubernetes.api.model.resource.v1.ResourceSlice;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.dsl.base.ResourceDefinitionContext;
import io.fabric8.kubernetes.client.utils.Serialization;
import io.kdra.it.controlplane.ControlPlane;
import io.kdra.it.services.Dra;
import io.kdra.it.services.KdraStack;
import io.kdra.it.services.Stack;
import io.kdra.it.support.OtlpReceiver;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * Scenario 9: the services export their spans over OTLP/HTTP to a receiver in the test JVM. One
 * claim made from a ComputeClass's template has one trace, from its creation to its CDI
 * preparation, that reaches all four services:
 *
 * <ul>
 *   <li>the claim-controller starts it (the claim's {@code kdra.io/traceparent}) and records
 *       create, allocate and bind in it;
 *   <li>the node's device-driver records its prepare as a child of that span;
 *   <li>the create span links to the computeclass-bridge's write of the template, the allocate span
 *       to the slice-publisher's write of the slice the device came from (each of those serves many
 *       claims, so it has a trace of its own, named in its object's annotation).
 * </ul>
 */
@ExtendWith(ControlPlane.class)
class TracesIT {

  private static final String NODE = "node-a";
  private static final OtlpReceiver RECEIVER = new OtlpReceiver();
  private static final ResourceDefinitionContext COMPUTE_CLASS =
      new ResourceDefinitionContext.Builder()
          .withGroup("cloud.google.com")
          .withVersion("v1")
          .withKind("ComputeClass")
          .withPlural("computeclasses")
          .withNamespaced(false)
          .build();

  @RegisterExtension
  static final KdraStack STACK =
      KdraStack.nodes(twoL4s(NODE)).withBridge().withProperties(RECEIVER.serviceProperties());

  private static Stack stack;
  private static KubernetesClient client;

  @BeforeAll
  static void slicesAndTemplate() {
    stack = STACK.get();
    client = stack.client;
    client
        .genericKubernetesResources(COMPUTE_CLASS)
        .resource(
            Serialization.unmarshal(
                """
        apiVersion: cloud.google.com/v1
        kind: ComputeClass
        metadata:
          name: one-l4
        spec:
          priorities:
            - gpu: {type: nvidia-l4, count: 1}
        """,
                GenericKubernetesResource.class))
        .create();
    await()
        .atMost(Duration.ofSeconds(90))
        .untilAsserted(
            () -> {
              assertThat(Dra.publishedDevices(client, NODE)).isEqualTo(2);
              assertThat(
                      client
                          .resources(ResourceClaimTemplate.class)
                          .inNamespace(stack.namespace)
                          .withName("one-l4")
                          .get())
                  .isNotNull();
            });
  }

  @AfterAll
  static void stopReceiver() {
    RECEIVER.close();
  }

  @Test
  void oneClaimsTraceReachesAllFourServicesFromTemplateToCdi() {
    String ns = stack.namespace;
    Pod pod = client.resource(Dra.podWithTemplate(ns, "traced", "one-l4")).create();
    await()
        .atMost(Duration.ofSeconds(90))
        .untilAsserted(() -> assertThat(stack.nodes.kubelet(NODE).prepared(pod)).isNotNull());

    ResourceClaim claim = Dra.claimOf(client, pod, "gpu");
    String traceparent = claim.getMetadata().getAnnotations().get("kdra.io/traceparent");
    assertThat(traceparent)
        .as("the claim's traceparent")
        .matches("00-[0-9a-f]{32}-[0-9a-f]{16}-0[01]");
    String traceId = traceparent.split("-")[1];
    String template =
        annotation(
            client
                .resources(ResourceClaimTemplate.class)
                .inNamespace(ns)
                .withName("one-l4")
                .get()
                .getMetadata()
                .getAnnotations());
    String device = claim.getStatus().getAllocation().getDevices().getResults().get(0).getDevice();
    List<String> slices =
        client.resources(ResourceSlice.class).list().getItems().stream()
            .filter(
                s ->
                    NODE.equals(s.getSpec().getNodeName())
                        && s.getSpec().getDevices().stream()
                            .anyMatch(d -> d.getName().equals(device)))
            .map(s -> annotation(s.getMetadata().getAnnotations()))
            .toList();
    assertThat(template).as("the template's traceparent, written by the bridge").isNotNull();
    assertThat(slices)
        .as("the device's slice's traceparent, written by the publisher")
        .singleElement()
        .isNotNull();

    await()
        .atMost(Duration.ofSeconds(90))
        .untilAsserted(
            () -> {
              List<OtlpReceiver.ReceivedSpan> all = RECEIVER.spans();
              List<OtlpReceiver.ReceivedSpan> trace =
                  all.stream().filter(s -> s.traceId().equals(traceId)).toList();
              OtlpReceiver.ReceivedSpan templateWrite = spanOf(all, template);
              OtlpReceiver.ReceivedSpan sliceWrite = spanOf(all, slices.get(0));
              assertThat(templateWrite)
                  .as("the bridge's span of %s among %s", template, all)
                  .isNotNull();
              assertThat(templateWrite.service()).isEqualTo("computeclass-bridge");
              assertThat(templateWrite.name()).isEqualTo("apply template");
              assertThat(templateWrite.attributes()).containsEntry("kdra.template.name", "one-l4");
              assertThat(sliceWrite)
                  .as("the publisher's span of %s among %s", slices.get(0), all)
                  .isNotNull();
              assertThat(sliceWrite.service()).isEqualTo("slice-publisher");
              assertThat(sliceWrite.name()).isEqualTo("reconcile pool");

              assertThat(trace)
                  .as("spans of trace %s among %s", traceId, all)
                  .anySatisfy(
                      s -> {
                        assertThat(s.service()).isEqualTo("claim-controller");
                        assertThat(s.name()).isEqualTo("claim create");
                        assertThat(s.linksTo(templateWrite))
                            .as("links to the template's write")
                            .isTrue();
                      })
                  .anySatisfy(
                      s -> {
                        assertThat(s.service()).isEqualTo("claim-controller");
                        assertThat(s.name()).isEqualTo("claim allocate");
                        assertThat(s.linksTo(sliceWrite)).as("links to the slice's write").isTrue();
                      })
                  .anySatisfy(
                      s -> {
                        assertThat(s.service()).isEqualTo("device-driver");
                        assertThat(s.name()).isEqualTo("prepare claim");
                        assertThat(s.attributes()).containsValue(claim.getMetadata().getUid());
                        // a child of the controller's span named in the annotation, not a new root
                        assertThat(s.parentSpanId()).isEqualTo(traceparent.split("-")[2]);
                      });
            });
    RECEIVER.spans().stream()
        .filter(s -> s.traceId().equals(traceId))
        .forEach(
            s ->
                System.out.printf(
                    "[it] trace %s: %s %s span %s parent %s links %s%n",
                    traceId, s.service(), s.name(), s.spanId(), s.parentSpanId(), s.links()));
    client.resource(pod).delete();
  }

  private static String annotation(Map<String, String> annotations) {
    return annotations == null ? null : annotations.get("kdra.io/traceparent");
  }

  /** The received span a traceparent names, or null. */
  private static OtlpReceiver.ReceivedSpan spanOf(
      List<OtlpReceiver.ReceivedSpan> spans, String traceparent) {
    String[] parts = traceparent.split("-");
    return spans.stream()
        .filter(s -> s.traceId().equals(parts[1]) && s.spanId().equals(parts[2]))
        .findFirst()
        .orElse(null);
  }
}
