package io.kdra.core.alloc;

import java.util.Objects;
import java.util.function.Supplier;

/**
 * How the allocator behaves: which features are on, how selectors are evaluated, where share IDs
 * come from (consumable capacity needs a fresh UID per share; pass a deterministic supplier in
 * tests), and how many search steps one {@link Allocator#allocate} call may take before giving up
 * with a "search limit reached" explanation.
 *
 * @param features the enabled features
 * @param selectors the selector evaluator
 * @param shareIds supplier of share IDs (lowercase RFC 4122 UUIDs in production)
 * @param stepBudget maximum search steps per allocation attempt on one node, &gt; 0
 */
public record AllocatorOptions(
    AllocatorFeatures features,
    SelectorEvaluator selectors,
    Supplier<String> shareIds,
    long stepBudget) {

  /** Default budget: enough for any realistic claim, small enough to answer within a second. */
  public static final long DEFAULT_STEP_BUDGET = 1_000_000;

  public AllocatorOptions {
    Objects.requireNonNull(features, "features");
    Objects.requireNonNull(selectors, "selectors");
    Objects.requireNonNull(shareIds, "shareIds");
    if (stepBudget <= 0) {
      throw new IllegalArgumentException("stepBudget must be positive: " + stepBudget);
    }
  }

  /**
   * Options with these features, the CEL evaluator for them and the default step budget. The
   * share-ID supplier is the caller's: this library has no source of randomness of its own.
   */
  public static AllocatorOptions defaults(AllocatorFeatures features, Supplier<String> shareIds) {
    return new AllocatorOptions(
        features, CelSelectorEvaluator.forFeatures(features), shareIds, DEFAULT_STEP_BUDGET);
  }

  public AllocatorOptions withFeatures(AllocatorFeatures f) {
    return new AllocatorOptions(f, selectors, shareIds, stepBudget);
  }

  public AllocatorOptions withStepBudget(long budget) {
    return new AllocatorOptions(features, selectors, shareIds, budget);
  }
}
