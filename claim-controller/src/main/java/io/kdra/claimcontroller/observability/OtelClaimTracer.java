package io.kdra.claimcontroller.observability;

import io.fabric8.kubernetes.api.model.resource.v1.ResourceClaim;
import io.kdra.claimcontroller.domain.Kdra;
import io.kdra.claimcontroller.scheduling.ClaimTracer;
import io.opentelemetry.api.trace.Span;
import io.opentelemetry.api.trace.SpanContext;
import io.opentelemetry.api.trace.StatusCode;
import io.opentelemetry.api.trace.Tracer;
import io.opentelemetry.api.trace.propagation.W3CTraceContextPropagator;
import io.opentelemetry.context.Context;
import io.opentelemetry.context.propagation.TextMapGetter;
import jakarta.enterprise.context.ApplicationScoped;
import jakarta.inject.Inject;
import java.time.Instant;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

/**
 * {@link ClaimTracer} on OpenTelemetry. The claim annotation {@code kdra.io/traceparent} holds the
 * W3C {@code traceparent} of the span that started the claim's trace; spans of later operations are
 * its children, whichever process records them. Spans link to the templates and slices they used
 * (their own {@code kdra.io/traceparent}). Exported wherever {@code quarkus.otel.*} points (OTLP by
 * default).
 */
@ApplicationScoped
public class OtelClaimTracer implements ClaimTracer {

  private static final W3CTraceContextPropagator W3C = W3CTraceContextPropagator.getInstance();

  /** Reads {@code traceparent} from the claim's annotation. */
  private static final TextMapGetter<Map<String, String>> GETTER =
      new TextMapGetter<>() {
        @Override
        public Iterable<String> keys(Map<String, String> carrier) {
          return List.of("traceparent");
        }

        @Override
        public String get(Map<String, String> carrier, String key) {
          return "traceparent".equals(key) && carrier != null
              ? carrier.get(Kdra.TRACE_ANNOTATION)
              : null;
        }
      };

  private final Tracer tracer;

  @Inject
  public OtelClaimTracer(Tracer tracer) {
    this.tracer = tracer;
  }

  @Override
  public TraceSpan start(ResourceClaim claim, String operation, Instant startedAt) {
    Map<String, String> annotations = claim == null ? null : claim.getMetadata().getAnnotations();
    Context parent =
        annotations != null && annotations.containsKey(Kdra.TRACE_ANNOTATION)
            ? W3C.extract(Context.root(), annotations, GETTER)
            : Context.root();
    var builder = tracer.spanBuilder("claim " + operation).setParent(parent);
    if (startedAt != null) {
      builder.setStartTimestamp(startedAt);
    }
    Span span = builder.startSpan();
    if (claim != null) {
      span.setAttribute(
          "claim", claim.getMetadata().getNamespace() + "/" + claim.getMetadata().getName());
    }
    return new TraceSpan() {
      @Override
      public Map<String, String> annotations() {
        Map<String, String> headers = new HashMap<>();
        W3C.inject(Context.root().with(span), headers, Map::put);
        String tp = headers.get("traceparent");
        return tp == null ? Map.of() : Map.of(Kdra.TRACE_ANNOTATION, tp);
      }

      @Override
      public TraceSpan attribute(String key, String value) {
        span.setAttribute(key, value);
        return this;
      }

      @Override
      public TraceSpan attribute(String key, long value) {
        span.setAttribute(key, value);
        return this;
      }

      @Override
      public TraceSpan link(String traceparent) {
        if (traceparent != null) {
          SpanContext linked =
              Span.fromContext(
                      W3C.extract(
                          Context.root(), Map.of(Kdra.TRACE_ANNOTATION, traceparent), GETTER))
                  .getSpanContext();
          if (linked.isValid()) {
            span.addLink(linked);
          }
        }
        return this;
      }

      @Override
      public boolean recording() {
        return span.isRecording();
      }

      @Override
      public void end(Throwable error) {
        if (error != null) {
          span.recordException(error);
          span.setStatus(StatusCode.ERROR);
        }
        span.end();
      }
    };
  }
}
