package io.kdra.core.alloc;

/**
 * A pool whose devices were not considered.
 *
 * @param driver the driver
 * @param pool the pool name
 * @param incomplete fewer slices than {@code resourceSliceCount} exist
 * @param slicesPresent slices of the newest generation that exist
 * @param sliceCount the pool's {@code resourceSliceCount}
 * @param invalidReason why the pool is invalid, or null
 */
public record PoolIssue(
    String driver,
    String pool,
    boolean incomplete,
    int slicesPresent,
    long sliceCount,
    String invalidReason) {

  static PoolIssue of(Pool p) {
    return new PoolIssue(
        p.driver(), p.name(), p.incomplete(), p.slicesPresent(), p.sliceCount(), p.invalidReason());
  }

  /** e.g. {@code pool node-b incomplete (1 of 2 slices)}. */
  public String describe() {
    if (incomplete) {
      return "pool " + pool + " incomplete (" + slicesPresent + " of " + sliceCount + " slices)";
    }
    return "pool " + pool + " invalid (" + invalidReason + ")";
  }
}
