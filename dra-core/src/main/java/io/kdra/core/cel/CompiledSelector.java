package io.kdra.core.cel;

import dev.cel.runtime.CelEvaluationException;
import dev.cel.runtime.CelRuntime;
import io.kdra.core.cel.CelSelectorException.Kind;
import io.kdra.core.cel.cost.CostMeter;
import io.kdra.core.cel.cost.CostPlan;
import java.util.OptionalLong;

/**
 * A compiled device selector. Evaluation is thread-safe and allocates nothing beyond what the CEL
 * interpreter itself needs. When the estimated worst-case cost is within the limit the program runs
 * unmetered (the estimate bounds the actual cost); otherwise the actual cost is counted in cel-go's
 * units ({@link CostMeter}) and evaluation stops with a {@link Kind#COST_LIMIT} error past the
 * limit, as upstream's.
 */
public final class CompiledSelector {

  private final String expression;
  private final CelRuntime.Program program;
  private final long estimatedCost;
  private final long maxCost;

  /** Whether the program calls a quantity function that changes its receiver (GoQuantity). */
  private final boolean mutatesQuantities;

  private final CostPlan costPlan;

  CompiledSelector(
      String expression,
      CelRuntime.Program program,
      long estimatedCost,
      long maxCost,
      boolean mutatesQuantities,
      CostPlan costPlan) {
    this.expression = expression;
    this.program = program;
    this.estimatedCost = estimatedCost;
    this.maxCost = maxCost;
    this.mutatesQuantities = mutatesQuantities;
    this.costPlan = costPlan;
  }

  public String expression() {
    return expression;
  }

  /**
   * Worst-case cost as estimated from the expression and the bounds of the device's fields, equal
   * to upstream's: an unsigned 64-bit value ({@code uint64} there), so compare it with {@link
   * Long#compareUnsigned} and print it with {@link Long#toUnsignedString(long)}.
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
    Object result = evaluate(celDevice);
    if (result instanceof Boolean b) {
      return b;
    }
    throw new CelSelectorException(
        Kind.RUNTIME,
        expression,
        null,
        "CEL result of type " + typeName(result) + " could not be converted to bool");
  }

  /**
   * Evaluates a derived attribute's expression ({@link DeviceSelectorEnvironment#compileDerived})
   * for one device: a {@code Long}, {@code Boolean}, {@code String}, {@link
   * io.kdra.core.model.Semver} or a list of one of them, as upstream's valToDeviceAttribute takes
   * them.
   *
   * @throws CelSelectorException on a runtime error, the cost limit, or another result type
   */
  public Object value(CelDevice celDevice) {
    Object result = evaluate(celDevice);
    if (result instanceof Long
        || result instanceof Boolean
        || result instanceof String
        || result instanceof io.kdra.core.model.Semver) {
      return result;
    }
    if (result instanceof java.util.List<?> list) {
      Class<?> first = list.isEmpty() ? String.class : list.get(0).getClass();
      boolean known =
          first == Long.class
              || first == Boolean.class
              || first == String.class
              || first == io.kdra.core.model.Semver.class;
      for (int i = 0; i < list.size(); i++) {
        if (!known || list.get(i).getClass() != first) {
          throw new CelSelectorException(
              Kind.RUNTIME,
              expression,
              null,
              known
                  ? "expected list element at index " + i + " to be " + typeName(first)
                  : "unsupported list element type: " + typeName(list.get(0)));
        }
      }
      return java.util.List.copyOf(list);
    }
    throw new CelSelectorException(
        Kind.RUNTIME, expression, null, "unsupported CEL return type: " + typeName(result));
  }

  private Object evaluate(CelDevice celDevice) {
    CelDevice device = mutatesQuantities ? celDevice.withFreshCapacity() : celDevice;
    Object result;
    try {
      result =
          !exceedsCostLimit()
              ? program.eval(device::resolve)
              : program.trace(device::resolve, new CostMeter(costPlan, maxCost));
    } catch (CelEvaluationException e) {
      if (e.getCause() instanceof CostMeter.LimitExceeded) {
        throw costLimitExceeded();
      }
      throw new CelSelectorException(Kind.RUNTIME, expression, null, runtimeReason(e));
    } catch (CostMeter.LimitExceeded e) {
      throw costLimitExceeded();
    } catch (StackOverflowError e) {
      // cel-java's interpreter recurses per AST level (and once recursed without end, see
      // UniqueVariableNames): a selector must fail on its own, never take its caller's thread down
      throw new CelSelectorException(
          Kind.RUNTIME, expression, null, "the expression nests too deeply to evaluate");
    }
    return result;
  }

  private static String typeName(Class<?> type) {
    return type == Long.class
        ? "int"
        : type == Boolean.class ? "bool" : type == String.class ? "string" : type.getSimpleName();
  }

  private CelSelectorException costLimitExceeded() {
    // upstream's words (cel-go's)
    return new CelSelectorException(
        Kind.COST_LIMIT, expression, null, "operation cancelled: actual cost limit exceeded");
  }

  /**
   * The actual cost of evaluating the selector for one device, in cel-go's runtime cost units (what
   * upstream's cost tracker charges and compares with the limit); for tests and diagnostics. Empty
   * when the evaluation fails.
   */
  public OptionalLong actualCost(CelDevice celDevice) {
    CelDevice device = mutatesQuantities ? celDevice.withFreshCapacity() : celDevice;
    CostMeter meter = new CostMeter(costPlan, -1L);
    try {
      program.trace(device::resolve, meter);
      return OptionalLong.of(meter.cost());
    } catch (CelEvaluationException | RuntimeException | StackOverflowError e) {
      return OptionalLong.empty();
    }
  }

  private static String runtimeReason(CelEvaluationException e) {
    String message = e.getMessage();
    // cel-java prefixes "evaluation error at <input>:N: "; the position inside the expression is
    // what users need, the rest is noise.
    int colon = message.indexOf(": ");
    String reason =
        message.startsWith("evaluation error") && colon > 0
            ? message.substring(colon + 2)
            : message;
    if (reason.startsWith("key '") && reason.contains("is not present in map")) {
      return "no such key: "
          + reason.substring(5, reason.indexOf('\'', 5))
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
