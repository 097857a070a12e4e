package io.kdra.claimcontroller.scheduling;

import static org.assertj.core.api.Assertions.assertThat;

import io.fabric8.kubernetes.api.model.resource.v1.ResourceClaim;
import io.fabric8.kubernetes.api.model.resource.v1.ResourceClaimTemplate;
import io.fabric8.kubernetes.api.model.resource.v1.ResourceSliceBuilder;
import io.kdra.claimcontroller.domain.K;
import io.kdra.claimcontroller.domain.Kdra;
import io.kdra.claimcontroller.domain.TemplateMode;
import java.util.Map;
import org.junit.jupiter.api.Test;

/**
 * {@link AttemptSpans} and the other spans around the phases: one trace per claim, from its
 * creation to the pod's binding.
 */
class AttemptSpansTest extends SchedulingFixture {

  @Test
  void oneTracePerClaimFromCreationToBindingCarriedByTheClaimAnnotation() {
    io.opentelemetry.sdk.testing.exporter.InMemorySpanExporter spans =
        io.opentelemetry.sdk.testing.exporter.InMemorySpanExporter.create();
    io.opentelemetry.sdk.trace.SdkTracerProvider provider =
        io.opentelemetry.sdk.trace.SdkTracerProvider.builder()
            .addSpanProcessor(io.opentelemetry.sdk.trace.export.SimpleSpanProcessor.create(spans))
            .build();
    PodScheduling traced =
        newScheduling(
            TemplateMode.OWN,
            new io.kdra.claimcontroller.observability.OtelClaimTracer(provider.get("test")));
    // what the computeclass-bridge and the slice-publisher stamp on the objects they write
    String templateWrite = "00-" + "a".repeat(32) + "-" + "b".repeat(16) + "-01";
    String sliceWrite = "00-" + "c".repeat(32) + "-" + "d".repeat(16) + "-01";
    ResourceClaimTemplate template = K.template("tpl");
    template.getMetadata().setAnnotations(Map.of(Kdra.TRACE_ANNOTATION, templateWrite));
    client.resource(template).create();
    client
        .resource(
            new ResourceSliceBuilder()
                .withNewMetadata()
                .withName("node-a-gpu")
                .withAnnotations(Map.of(Kdra.TRACE_ANNOTATION, sliceWrite))
                .endMetadata()
                .withNewSpec()
                .withDriver("gpu.example.com")
                .withNodeName("node-a")
                .withNewPool()
                .withName("node-a")
                .withGeneration(1L)
                .withResourceSliceCount(1L)
                .endPool()
                .addNewDevice()
                .withName("dev-0")
                .endDevice()
                .addNewDevice()
                .withName("dev-1")
                .endDevice()
                .endSpec()
                .build())
        .create();
    create(K.podWithTemplate("web", "gpu", "tpl"));

    traced.schedule(get("web"));
    assertThat(traced.schedule(get("web"))).isEqualTo(new Outcome.Bound("node-a"));

    ResourceClaim claim = allClaims().get(0);
    String traceparent = claim.getMetadata().getAnnotations().get(Kdra.TRACE_ANNOTATION);
    assertThat(traceparent).matches("00-[0-9a-f]{32}-[0-9a-f]{16}-01");
    var finished = spans.getFinishedSpanItems();
    assertThat(finished)
        .extracting(io.opentelemetry.sdk.trace.data.SpanData::getName)
        .contains("claim create", "claim allocate", "claim bind");
    assertThat(finished)
        .extracting(io.opentelemetry.sdk.trace.data.SpanData::getTraceId)
        .containsOnly(traceparent.substring(3, 35));
    // later operations, whoever records them, are children of the span the annotation names
    String root = traceparent.substring(36, 52);
    assertThat(finished)
        .filteredOn(d -> !d.getName().equals("claim create"))
        .extracting(io.opentelemetry.sdk.trace.data.SpanData::getParentSpanId)
        .containsOnly(root);
    // the template's and the slice's own traces are linked, not parents: each serves many claims
    assertThat(finished)
        .filteredOn(d -> d.getName().equals("claim create"))
        .singleElement()
        .satisfies(
            d ->
                assertThat(d.getLinks())
                    .extracting(l -> l.getSpanContext().getSpanId())
                    .containsExactly("b".repeat(16)));
    assertThat(finished)
        .filteredOn(d -> d.getName().equals("claim allocate"))
        .singleElement()
        .satisfies(
            d ->
                assertThat(d.getLinks())
                    .extracting(l -> l.getSpanContext().getTraceId())
                    .containsExactly("c".repeat(32)));
    provider.close();
  }
}
