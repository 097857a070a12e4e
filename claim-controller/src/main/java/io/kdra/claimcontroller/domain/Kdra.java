package io.kdra.claimcontroller.domain;

import io.kdra.core.model.TraceAnnotation;

/** Names this project adds to objects; upstream's are in {@link Upstream}. */
public final class Kdra {

  /**
   * Annotation on claims this controller created or reserved; its value is the scheduler name.
   * Cleanup only touches claims that carry it, so that claims only kube-scheduler and
   * kube-controller-manager use are left to them.
   */
  public static final String SCHEDULER_ANNOTATION = "kdra.io/scheduler-name";

  /** Annotation holding the W3C trace context of the claim's trace ({@code traceparent}). */
  public static final String TRACE_ANNOTATION = TraceAnnotation.KEY;

  private Kdra() {}
}
