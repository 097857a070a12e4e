package io.kdra.it.bench;

import java.util.ArrayList;
import java.util.Collection;
import java.util.List;

/**
 * Times to bind in milliseconds (create sent to binding seen), as percentiles by nearest rank.
 *
 * @param count the pods bound, those the percentiles are of
 */
record BindLatency(int count, double p50Ms, double p90Ms, double p99Ms) {

  static BindLatency of(Collection<Double> ms) {
    List<Double> sorted = new ArrayList<>(ms);
    sorted.sort(null);
    return new BindLatency(
        sorted.size(),
        BenchProbes.quantile(sorted, 0.5),
        BenchProbes.quantile(sorted, 0.9),
        BenchProbes.quantile(sorted, 0.99));
  }
}
