package io.kdra.core.cel.corpus;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.JsonNodeFactory;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.kdra.core.cel.CelDevice;
import io.kdra.core.cel.CelSelectorException;
import io.kdra.core.cel.CompiledSelector;
import io.kdra.core.cel.DeviceSelectorEnvironment;
import java.math.BigInteger;
import java.util.Map;
import java.util.OptionalLong;

/**
 * One expression's outcome on one device, as {@code dra-alloc-upstream cel} prints it and as {@link
 * DeviceSelectorEnvironment} gives it.
 *
 * @param outcome compile_error, runtime_error, true, false (crash: ours threw something else)
 * @param cost the estimated worst-case cost (a Go uint64, as bits), null after a compile error
 * @param costRejected whether API validation rejects the expression for its estimated cost
 * @param error the error text, else null
 * @param actual the actual cost of the evaluation (bits of a uint64), null when none was tracked
 */
public record CelOutcome(
    String outcome, Long cost, boolean costRejected, String error, Long actual) {

  /** One line: outcome, cost, rejection and the first line of the error. */
  public String summary() {
    return outcome
        + (cost == null ? "" : " cost=" + Long.toUnsignedString(cost))
        + (costRejected ? " (over limit)" : "")
        + (error == null ? "" : ": " + error.lines().findFirst().orElse(""));
  }

  /** An outcome of {@code dra-alloc-upstream cel} (also a golden line, which has its fields). */
  public static CelOutcome fromOracle(JsonNode n) {
    return new CelOutcome(
        n.path("outcome").asText(),
        n.has("cost") ? n.get("cost").bigIntegerValue().longValue() : null,
        n.path("costRejected").asBoolean(false),
        n.has("error") ? n.get("error").asText() : null,
        n.has("actualCost") ? n.get("actualCost").bigIntegerValue().longValue() : null);
  }

  /** The fields {@code dra-alloc-upstream cel} prints, the costs as unsigned numbers. */
  public ObjectNode toJson() {
    ObjectNode n = JsonNodeFactory.instance.objectNode();
    n.put("outcome", outcome);
    if (cost != null) {
      n.put("cost", new BigInteger(Long.toUnsignedString(cost)));
    }
    if (costRejected) {
      n.put("costRejected", true);
    }
    if (actual != null) {
      n.put("actualCost", new BigInteger(Long.toUnsignedString(actual)));
    }
    if (error != null) {
      n.put("error", error);
    }
    return n;
  }

  /**
   * Ours: compiled once per expression through {@code compiled}, a cache the caller keeps for one
   * run (a compile error is cached as its exception).
   */
  public static CelOutcome ours(
      DeviceSelectorEnvironment env,
      String expression,
      CelDevice device,
      Map<String, Object> compiled) {
    Object selectorOrError =
        compiled.computeIfAbsent(
            expression,
            e -> {
              try {
                return env.compile(e);
              } catch (RuntimeException x) {
                return x;
              }
            });
    if (selectorOrError instanceof CelSelectorException e) {
      return new CelOutcome("compile_error", null, false, e.reason(), null);
    }
    if (selectorOrError instanceof RuntimeException e) {
      return new CelOutcome("crash", null, false, e.toString(), null);
    }
    CompiledSelector selector = (CompiledSelector) selectorOrError;
    long cost = selector.estimatedCost();
    boolean rejected = selector.exceedsCostLimit();
    try {
      boolean matches = selector.matches(device);
      // only after a successful evaluation: actualCost() runs without the limit, and the cost of
      // a failed one is not compared
      OptionalLong actualCost = selector.actualCost(device);
      Long actual = actualCost.isPresent() ? actualCost.getAsLong() : null;
      return new CelOutcome(matches ? "true" : "false", cost, rejected, null, actual);
    } catch (CelSelectorException e) {
      return new CelOutcome("runtime_error", cost, rejected, e.reason(), null);
    } catch (RuntimeException e) {
      return new CelOutcome("crash", cost, rejected, e.toString(), null);
    }
  }
}
