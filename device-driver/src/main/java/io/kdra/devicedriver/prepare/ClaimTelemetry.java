package io.kdra.devicedriver.prepare;

import io.kdra.devicedriver.plugin.ClaimRef;

/**
 * Observes each claim operation once it is over (metrics, a span). Called after the fact with
 * explicit timestamps, because the trace to join is only known once the claim has been read.
 * Implementations must be thread-safe and must not throw.
 */
public interface ClaimTelemetry {

  /** Operations observed. */
  enum Operation {
    PREPARE,
    UNPREPARE
  }

  /**
   * @param traceParent the claim's W3C traceparent, or empty
   * @param startNanos start, epoch nanoseconds
   * @param endNanos end, epoch nanoseconds
   * @param error empty on success
   */
  void record(
      Operation operation,
      ClaimRef claim,
      String traceParent,
      long startNanos,
      long endNanos,
      String error);

  /** Records nothing. */
  ClaimTelemetry NONE = (op, claim, traceParent, start, end, error) -> {};
}
