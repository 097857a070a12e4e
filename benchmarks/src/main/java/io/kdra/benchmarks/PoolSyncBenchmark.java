package io.kdra.benchmarks;

import java.time.Instant;
import java.util.concurrent.TimeUnit;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Fork;
import org.openjdk.jmh.annotations.Measurement;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Param;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.Warmup;

/**
 * The slice-publisher's per-pool work in steady state: plan one pool from its inventory and diff it
 * against the stored slices (no writes result). This is what every heartbeat and every resync costs
 * per pool.
 */
@State(Scope.Benchmark)
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.MICROSECONDS)
@Warmup(iterations = 3, time = 2)
@Measurement(iterations = 5, time = 2)
@Fork(1)
public class PoolSyncBenchmark {

  /** Devices per node: 8 (one slice), 256 (two slices). */
  @Param({"8", "256"})
  public int devices;

  private PublisherFleet fleet;
  private final Instant now = Instant.parse("2026-01-01T00:00:00Z");

  @Setup
  public void setUp() {
    fleet = new PublisherFleet(1, devices, now);
    fleet.syncAll(now);
  }

  @Benchmark
  public int planAndDiffSteadyState() {
    return fleet.planOnly("node-00000", now);
  }
}
