/**
 * {@code bin/bench-scheduling}: end-to-end scheduling throughput of upstream against kdra ({@code
 * SchedulingBenchmark}), with its workloads, phases (cold, warm), churn waves, probes and report.
 */
package io.kdra.it.bench;
