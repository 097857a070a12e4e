package io.kdra.it.bench;

import io.fabric8.kubernetes.api.model.Pod;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.function.Consumer;
import java.util.function.IntFunction;
import java.util.function.Supplier;

/**
 * The {@link BenchWorkload#CHURN} run's waves after its fill, as {@link ChurnPlan} says: each
 * deletes its pods, creates as many new ones at once and waits until they are bound (or none was
 * bound for {@code --stall}, or {@code --deadline} passed) before the next.
 */
final class ChurnWaves {

  private final PodTraffic traffic;
  private final IntFunction<Pod> pod;
  private final Supplier<Map<String, Double>> cpu;
  private final SchedulingBenchmark.Options options;
  private final Consumer<String> log;

  /**
   * @param pod pod {@code i} of the run
   * @param cpu CPU milliseconds by process so far
   */
  ChurnWaves(
      PodTraffic traffic,
      IntFunction<Pod> pod,
      Supplier<Map<String, Double>> cpu,
      SchedulingBenchmark.Options options,
      Consumer<String> log) {
    this.traffic = traffic;
    this.pod = pod;
    this.cpu = cpu;
    this.options = options;
    this.log = log;
  }

  /** Runs the waves of {@code plan}; adds to {@code problems} those that left pods unbound. */
  ChurnResult run(ChurnPlan plan, List<String> problems) {
    Map<String, Double> before = cpu.get();
    long start = System.nanoTime();
    List<String> created = new ArrayList<>();
    int n = 0;
    for (ChurnPlan.Wave wave : plan.waves()) {
      n++;
      long t0 = System.nanoTime();
      traffic.delete(wave.deleted().stream().map(BenchWorkload::podName).toList());
      PodTraffic.Batch batch = traffic.create(wave.created().stream().map(pod::apply).toList());
      created.addAll(batch.names);
      String stop =
          traffic.awaitBound(
              batch,
              batch.start + TimeUnit.SECONDS.toNanos(options.deadlineSeconds()),
              options.deadlineSeconds(),
              options.stallSeconds());
      if (stop != null) {
        problems.add("wave " + n + ": " + stop);
      }
      log.accept(
          String.format(
              "wave %d: %d deleted, %d created, %d bound in %.1f s",
              n,
              wave.deleted().size(),
              batch.names.size(),
              traffic.bound(batch.names),
              (traffic.lastBound(batch.names, batch.start) - t0) / 1e9));
    }
    long end = traffic.lastBound(created, start);
    Map<String, Double> after = cpu.get();
    Map<String, Double> cpuMs = new LinkedHashMap<>();
    before.forEach((k, v) -> cpuMs.put(k, after.get(k) - v));
    return new ChurnResult(
        plan.waves().size(),
        created.size(),
        BindLatency.of(traffic.bindMs(created)),
        cpuMs,
        (end - start) / 1e9);
  }
}
