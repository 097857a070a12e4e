package io.kdra.core.model;

/**
 * The annotation that carries a W3C {@code traceparent} on the objects kdra writes, so that a
 * claim's trace can be followed across the services: on a ResourceClaim, the span that started the
 * claim's trace (each later operation on the claim, in any service, is its child); on a
 * ResourceClaimTemplate or a ResourceSlice, the span that last wrote it (a claim's spans link to
 * it: one template or slice serves many claims, so it cannot be the parent of each).
 */
public final class TraceAnnotation {

  public static final String KEY = "kdra.io/traceparent";

  private TraceAnnotation() {}
}
