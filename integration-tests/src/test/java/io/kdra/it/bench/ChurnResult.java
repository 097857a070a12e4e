package io.kdra.it.bench;

import java.util.Map;

/**
 * What a {@link BenchWorkload#CHURN} run's waves measured, after its fill.
 *
 * @param waves the waves run
 * @param wavePods the pods the waves created
 * @param latency the times to bind of those bound, all waves together
 * @param cpuMs CPU milliseconds by process from the first wave's deletions to the last wave's last
 *     binding
 * @param seconds the same span in seconds
 */
record ChurnResult(
    int waves, int wavePods, BindLatency latency, Map<String, Double> cpuMs, double seconds) {

  int bound() {
    return latency.count();
  }

  double cpuMsPerPod() {
    return cpuMs.values().stream().mapToDouble(Double::doubleValue).sum() / wavePods;
  }

  int podsPerWave() {
    return waves == 0 ? 0 : wavePods / waves;
  }
}
