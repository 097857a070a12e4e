package io.kdra.devicedriver.observability;

import static org.assertj.core.api.Assertions.assertThat;

import io.kdra.devicedriver.plugin.ClaimRef;
import io.kdra.devicedriver.prepare.ClaimTelemetry.Operation;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import io.opentelemetry.api.trace.StatusCode;
import io.opentelemetry.sdk.common.CompletableResultCode;
import io.opentelemetry.sdk.trace.SdkTracerProvider;
import io.opentelemetry.sdk.trace.data.SpanData;
import io.opentelemetry.sdk.trace.export.SimpleSpanProcessor;
import io.opentelemetry.sdk.trace.export.SpanExporter;
import java.util.Collection;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

class ClaimMetricsAndSpansTest {
  private static final String TRACE = "0af7651916cd43dd8448eb211c80319c";
  private static final String PARENT = "b7ad6b7169203331";

  private final List<SpanData> spans = new CopyOnWriteArrayList<>();
  private final SdkTracerProvider provider =
      SdkTracerProvider.builder()
          .addSpanProcessor(
              SimpleSpanProcessor.create(
                  new SpanExporter() {
                    @Override
                    public CompletableResultCode export(Collection<SpanData> s) {
                      spans.addAll(s);
                      return CompletableResultCode.ofSuccess();
                    }

                    @Override
                    public CompletableResultCode flush() {
                      return CompletableResultCode.ofSuccess();
                    }

                    @Override
                    public CompletableResultCode shutdown() {
                      return CompletableResultCode.ofSuccess();
                    }
                  }))
          .build();
  private final SimpleMeterRegistry registry = new SimpleMeterRegistry();
  private final ClaimMetricsAndSpans telemetry =
      new ClaimMetricsAndSpans(registry, provider.get("test"), "gpu.kdra.io");
  private final ClaimRef claim = new ClaimRef("ns", "uid-1", "train");

  @Test
  void spanJoinsTheClaimsTraceWithItsTiming() {
    telemetry.record(
        Operation.PREPARE,
        claim,
        "00-" + TRACE + "-" + PARENT + "-01",
        1_000_000_000L,
        1_007_000_000L,
        "");
    SpanData s = spans.get(0);
    assertThat(s.getName()).isEqualTo("prepare claim");
    assertThat(s.getTraceId()).isEqualTo(TRACE);
    assertThat(s.getParentSpanId()).isEqualTo(PARENT);
    assertThat(s.getEndEpochNanos() - s.getStartEpochNanos()).isEqualTo(7_000_000L);
    assertThat(s.getAttributes().asMap().values()).contains("uid-1", "train", "ns", "gpu.kdra.io");
  }

  @Test
  void withoutOrWithABrokenTraceParentTheSpanIsARoot() {
    telemetry.record(Operation.UNPREPARE, claim, "", 0, 1, "");
    telemetry.record(Operation.UNPREPARE, claim, "garbage", 0, 1, "");
    assertThat(spans).allSatisfy(s -> assertThat(s.getParentSpanContext().isValid()).isFalse());
  }

  @Test
  void errorsAreCountedAndMarkTheSpan() {
    telemetry.record(
        Operation.PREPARE, claim, "", 0, 2_000_000, "status.allocation: not allocated");
    telemetry.record(Operation.PREPARE, claim, "", 0, 1_000_000, "");
    assertThat(spans.get(0).getStatus().getStatusCode()).isEqualTo(StatusCode.ERROR);
    assertThat(
            registry
                .get("kdra.driver.claim.operation.errors")
                .tag("operation", "prepare")
                .counter()
                .count())
        .isEqualTo(1);
    assertThat(
            registry
                .get("kdra.driver.claim.operation")
                .tag("outcome", "success")
                .timer()
                .totalTime(TimeUnit.MILLISECONDS))
        .isEqualTo(1.0);
  }
}
