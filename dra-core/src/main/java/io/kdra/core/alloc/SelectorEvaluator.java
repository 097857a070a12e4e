package io.kdra.core.alloc;

/**
 * Decides whether a device satisfies one selector expression. The production implementation is
 * {@link CelSelectorEvaluator}; the seam exists so the search does not depend on how expressions
 * are compiled. Implementations must be thread-safe and deterministic, and must report every
 * compile or runtime problem as a {@link SelectorException} (upstream never treats a CEL error as
 * "false": it aborts the allocation).
 */
public interface SelectorEvaluator {

  /**
   * Evaluates {@code expression} against the device.
   *
   * @throws SelectorException on a compile error, a runtime error or a non-boolean result
   */
  boolean matches(String expression, CandidateDevice device);
}
