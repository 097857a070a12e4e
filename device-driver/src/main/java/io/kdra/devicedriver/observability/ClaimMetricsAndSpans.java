package io.kdra.devicedriver.observability;

import io.kdra.devicedriver.plugin.ClaimRef;
import io.kdra.devicedriver.prepare.ClaimTelemetry;
import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Timer;
import io.opentelemetry.api.common.AttributeKey;
import io.opentelemetry.api.trace.Span;
import io.opentelemetry.api.trace.SpanKind;
import io.opentelemetry.api.trace.StatusCode;
import io.opentelemetry.api.trace.Tracer;
import io.opentelemetry.api.trace.propagation.W3CTraceContextPropagator;
import io.opentelemetry.context.Context;
import io.opentelemetry.context.propagation.TextMapGetter;
import java.time.Duration;
import java.util.Map;
import java.util.concurrent.TimeUnit;

/**
 * {@link ClaimTelemetry} with Micrometer and OpenTelemetry.
 *
 * <p>Metrics: {@code kdra_driver_claim_operation_seconds{operation, outcome}} (a timer with
 * percentiles, so p99 prepare latency is one query) and {@code
 * kdra_driver_claim_operation_errors_total{operation}}.
 *
 * <p>Spans: one per claim operation, {@code prepare claim} / {@code unprepare claim}, whose parent
 * is the claim's own trace when the claim carries a W3C {@code traceparent} in its {@code
 * kdra.io/traceparent} annotation (written by the claim-controller), so the node's work shows up in
 * the claim's one trace; a root span otherwise.
 */
public final class ClaimMetricsAndSpans implements ClaimTelemetry {
  private static final AttributeKey<String> NAMESPACE =
      AttributeKey.stringKey("k8s.namespace.name");
  private static final AttributeKey<String> CLAIM = AttributeKey.stringKey("kdra.claim.name");
  private static final AttributeKey<String> UID = AttributeKey.stringKey("kdra.claim.uid");
  private static final AttributeKey<String> DRIVER = AttributeKey.stringKey("kdra.driver");

  private static final TextMapGetter<Map<String, String>> GETTER =
      new TextMapGetter<>() {
        @Override
        public Iterable<String> keys(Map<String, String> carrier) {
          return carrier.keySet();
        }

        @Override
        public String get(Map<String, String> carrier, String key) {
          return carrier == null ? null : carrier.get(key);
        }
      };

  private final MeterRegistry registry;
  private final Tracer tracer;
  private final String driver;

  public ClaimMetricsAndSpans(MeterRegistry registry, Tracer tracer, String driver) {
    this.registry = registry;
    this.tracer = tracer;
    this.driver = driver;
    // every series from start-up, at zero: an alert on a rise then needs no "new series" arm
    for (Operation operation : Operation.values()) {
      String op = operation.name().toLowerCase();
      timer(op, "success");
      timer(op, "error");
      errors(op);
    }
  }

  private Timer timer(String op, String outcome) {
    return Timer.builder("kdra.driver.claim.operation")
        .description("Time to prepare or unprepare one claim, API read and fsync included")
        .tags("operation", op, "outcome", outcome)
        .publishPercentiles(0.5, 0.99)
        .register(registry);
  }

  private Counter errors(String op) {
    return Counter.builder("kdra.driver.claim.operation.errors")
        .description("Claims whose prepare or unprepare returned an error to the kubelet")
        .tags("operation", op)
        .register(registry);
  }

  @Override
  public void record(
      Operation operation,
      ClaimRef claim,
      String traceParent,
      long startNanos,
      long endNanos,
      String error) {
    String op = operation.name().toLowerCase();
    boolean failed = !error.isEmpty();
    timer(op, failed ? "error" : "success")
        .record(Duration.ofNanos(Math.max(0, endNanos - startNanos)));
    if (failed) {
      errors(op).increment();
    }
    Span span =
        tracer
            .spanBuilder(op + " claim")
            .setParent(parent(traceParent))
            .setSpanKind(SpanKind.SERVER)
            .setStartTimestamp(startNanos, TimeUnit.NANOSECONDS)
            .setAttribute(NAMESPACE, claim.namespace())
            .setAttribute(CLAIM, claim.name())
            .setAttribute(UID, claim.uid())
            .setAttribute(DRIVER, driver)
            .startSpan();
    if (failed) {
      span.setStatus(StatusCode.ERROR, error);
    }
    span.end(endNanos, TimeUnit.NANOSECONDS);
  }

  /** The context of a W3C traceparent, or the root context if it is absent or malformed. */
  static Context parent(String traceParent) {
    if (traceParent == null || traceParent.isEmpty()) {
      return Context.root();
    }
    return W3CTraceContextPropagator.getInstance()
        .extract(Context.root(), Map.of("traceparent", traceParent), GETTER);
  }
}
