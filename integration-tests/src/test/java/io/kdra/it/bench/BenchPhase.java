package io.kdra.it.bench;

/**
 * When a run's burst is measured: right after the side's processes start ({@link #COLD}, what a
 * fail-over or an upgrade meets) or after an unmeasured burst of the same pods has come and gone
 * ({@link #WARM}: the JIT has compiled the scheduling path, caches are filled).
 */
enum BenchPhase {
  COLD("cold"),
  WARM("warm");

  /** The name on the command line and in the results. */
  final String key;

  BenchPhase(String key) {
    this.key = key;
  }

  static BenchPhase of(String key) {
    for (BenchPhase p : values()) {
      if (p.key.equals(key)) {
        return p;
      }
    }
    throw new IllegalArgumentException("unknown phase " + key + "; one of cold, warm");
  }
}
