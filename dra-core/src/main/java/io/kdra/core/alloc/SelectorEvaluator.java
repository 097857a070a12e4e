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

  /**
   * Evaluates a derived attribute's expression (1.37 alpha {@code derivedAttributes}) against the
   * device: a {@code Long}, {@code Boolean}, {@code String}, {@link io.kdra.core.model.Semver} or a
   * list of one of them.
   *
   * @throws SelectorException on a compile or runtime error or another result type
   */
  default Object derivedValue(String expression, CandidateDevice device) {
    throw new SelectorException(expression, "derived attributes are not supported here", null);
  }
}
