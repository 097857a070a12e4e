package io.kdra.core.alloc;

/** The search used up its step budget without finding or ruling out a solution. */
final class SearchLimitException extends RuntimeException {

  private final long steps;

  SearchLimitException(long steps) {
    super("search limit reached after " + steps + " steps", null, false, false);
    this.steps = steps;
  }

  long steps() {
    return steps;
  }
}
