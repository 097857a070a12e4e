package io.kdra.claimcontroller.scheduling;

import io.fabric8.kubernetes.api.model.resource.v1.ResourceClaim;
import java.time.Instant;
import java.util.Map;

/**
 * One trace per claim: the trace starts when the claim is created (or first reserved, for claims
 * created by others), its context is stored on the claim in the {@code kdra.io/traceparent}
 * annotation, and every later operation on the claim (allocate, bind, deallocate, delete), in this
 * or another service, is a span in that trace.
 */
public interface ClaimTracer {

  /** A started span. */
  interface TraceSpan {

    /** The annotations that carry this span's context (W3C {@code traceparent}). */
    Map<String, String> annotations();

    TraceSpan attribute(String key, String value);

    TraceSpan attribute(String key, long value);

    /**
     * Links this span to the span whose W3C {@code traceparent} is given (from the {@code
     * kdra.io/traceparent} annotation of a template or slice this operation used); a null or
     * malformed one is ignored.
     */
    TraceSpan link(String traceparent);

    /** Whether the span is recorded: work done only for it (finding links) can be skipped. */
    boolean recording();

    /** Ends the span, marked failed with {@code error} when non-null. */
    void end(Throwable error);

    default void end() {
      end(null);
    }
  }

  /**
   * Starts span {@code operation} in the trace of {@code claim} (from its annotation), or as the
   * root of a new trace when {@code claim} is null or carries none.
   */
  default TraceSpan start(ResourceClaim claim, String operation) {
    return start(claim, operation, null);
  }

  /** As {@link #start(ResourceClaim, String)}, backdated to {@code startedAt} when non-null. */
  TraceSpan start(ResourceClaim claim, String operation, Instant startedAt);

  /** A tracer that records nothing (tests, tracing disabled). */
  ClaimTracer NOOP =
      (claim, operation, startedAt) ->
          new TraceSpan() {
            @Override
            public Map<String, String> annotations() {
              return Map.of();
            }

            @Override
            public TraceSpan attribute(String key, String value) {
              return this;
            }

            @Override
            public TraceSpan attribute(String key, long value) {
              return this;
            }

            @Override
            public TraceSpan link(String traceparent) {
              return this;
            }

            @Override
            public boolean recording() {
              return false;
            }

            @Override
            public void end(Throwable error) {}
          };
}
