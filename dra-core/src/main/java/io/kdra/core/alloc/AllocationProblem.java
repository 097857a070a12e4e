package io.kdra.core.alloc;

/**
 * A condition upstream's allocator reports as an error rather than "cannot allocate": a missing
 * DeviceClass, a selector that fails to compile or evaluate, a request for a disabled feature,
 * {@code All} on an incomplete pool, a malformed request. Thrown inside the allocator and turned
 * into an {@link Explanation} for the claim; never escapes {@link Allocator}.
 */
final class AllocationProblem extends RuntimeException {

  private final int claimIndex;
  private final String request;
  private final Explanation.Kind kind;
  private final String expression;

  AllocationProblem(
      int claimIndex, String request, Explanation.Kind kind, String message, String expression) {
    super(message, null, false, false);
    this.claimIndex = claimIndex;
    this.request = request;
    this.kind = kind;
    this.expression = expression;
  }

  int claimIndex() {
    return claimIndex;
  }

  String request() {
    return request;
  }

  Explanation.Kind kind() {
    return kind;
  }

  String expression() {
    return expression;
  }
}
