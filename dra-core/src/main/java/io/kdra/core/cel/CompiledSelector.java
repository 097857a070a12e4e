package io.kdra.core.cel;

import dev.cel.runtime.CelEvaluationException;
import dev.cel.runtime.CelRuntime;
import io.kdra.core.cel.CelSelectorException.Kind;

/**
 * A compiled device selector. Evaluation is thread-safe and allocates nothing beyond what the
 * CEL interpreter itself needs. When the estimated worst-case cost is within the limit the
 * program runs unmetered (the estimate bounds the actual cost); otherwise every evaluation step
 * is counted and evaluation stops with a {@link Kind#COST_LIMIT} error past the limit.
 */
public final class CompiledSelector {

  private final String expression;
  private final CelRuntime.Program program;
  private final long estimatedCost;
  private final long maxCost;
  /** Whether the program calls a quantity function that changes its receiver (GoQuantity). */
  private final boolean mutatesQuantities;

  CompiledSelector(String expression, CelRuntime.Program program, long estimatedCost,
      long maxCost, boolean mutatesQuantities) {
    this.expression = expression;
    this.program = program;
    this.estimatedCost = estimatedCost;
    this.maxCost = maxCost;
    this.mutatesQuantities = mutatesQuantities;
  }

  public String expression() {
    return expression;
  }

  /**
   * Worst-case cost as estimated from the expression and the bounds of the device's fields,
   * equal to upstream's: an unsigned 64-bit value ({@code uint64} there), so compare it with
   * {@link Long#compareUnsigned} and print it with {@link Long#toUnsignedString(long)}.
   */
  public long estimatedCost() {
    return estimatedCost;
  }

  /** Whether the estimate is above the cost limit (API validation rejects such selectors). */
  public boolean exceedsCostLimit() {
    return Long.compareUnsigned(estimatedCost, maxCost) > 0;
  }

  /**
   * Evaluates the selector for one device.
   *
   * @return whether the device matches
   * @throws CelSelectorException on a runtime error (e.g. a missing attribute), a non-bool result,
   *     or when the cost limit is exceeded; upstream never treats these as "no match"
   */
  public boolean matches(CelDevice celDevice) {
    CelDevice device = mutatesQuantities ? celDevice.withFreshCapacity() : celDevice;
    Object result;
    try {
      result = !exceedsCostLimit()
          ? program.eval(device::resolve)
          : program.trace(device::resolve, new CostMeter(maxCost));
    } catch (CelEvaluationException e) {
      if (e.getCause() instanceof CostMeter.LimitExceeded) {
        throw costLimitExceeded();
      }
      throw new CelSelectorException(Kind.RUNTIME, expression, null, runtimeReason(e));
    } catch (CostMeter.LimitExceeded e) {
      throw costLimitExceeded();
    }
    if (result instanceof Boolean b) {
      return b;
    }
    throw new CelSelectorException(Kind.RUNTIME, expression, null, "CEL result of type "
        + typeName(result) + " could not be converted to bool");
  }

  private CelSelectorException costLimitExceeded() {
    return new CelSelectorException(Kind.COST_LIMIT, expression, null,
        // upstream's words (cel-go's), then how this side counted
        "operation cancelled: actual cost limit exceeded (more than " + maxCost
            + " evaluation steps)");
  }

  private static String runtimeReason(CelEvaluationException e) {
    String message = e.getMessage();
    // cel-java prefixes "evaluation error at <input>:N: "; the position inside the expression is
    // what users need, the rest is noise.
    int colon = message.indexOf(": ");
    String reason = message.startsWith("evaluation error") && colon > 0
        ? message.substring(colon + 2) : message;
    if (reason.startsWith("key '") && reason.contains("is not present in map")) {
      return "no such key: " + reason.substring(5, reason.indexOf('\'', 5))
          + " (guard optional attributes with has() or \"in\")";
    }
    return reason;
  }

  private static String typeName(Object value) {
    if (value instanceof String) {
      return "string";
    }
    if (value instanceof Long) {
      return "int";
    }
    if (value instanceof Double) {
      return "double";
    }
    return value == null ? "null" : value.getClass().getSimpleName();
  }

  @Override
  public String toString() {
    return expression;
  }
}
