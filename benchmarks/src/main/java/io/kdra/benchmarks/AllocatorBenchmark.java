package io.kdra.benchmarks;

import io.fabric8.kubernetes.api.model.Node;
import io.fabric8.kubernetes.api.model.resource.v1.AllocationResult;
import io.fabric8.kubernetes.api.model.resource.v1.ResourceClaim;
import io.kdra.core.alloc.AllocatedState;
import io.kdra.core.alloc.AllocationSnapshot;
import io.kdra.core.alloc.Allocator;
import io.kdra.core.alloc.AllocatorFeatures;
import io.kdra.core.alloc.AllocatorOptions;
import io.kdra.core.alloc.ClaimOutcome;
import io.kdra.core.alloc.InMemoryDeviceClassLister;
import io.kdra.core.alloc.PodScheduler;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Fork;
import org.openjdk.jmh.annotations.Level;
import org.openjdk.jmh.annotations.Measurement;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Param;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.Warmup;

/**
 * The allocator placing one pod (one claim) at a time on a 1,000-node cluster, first fit over nodes
 * in name order, each allocation consuming devices for the next, as {@code bin/dra-alloc} and the
 * claim-controller do. One benchmark invocation = one claim, so {@code thrpt} is claims per second
 * and {@code sample} gives per-claim latency percentiles. When the cluster is full the state is
 * reset (empty allocations) and filling starts again.
 *
 * <p>The workloads are {@link AllocatorWorkload}'s:
 *
 * <ul>
 *   <li>{@code single-gpu}: 1,000 nodes x 8 GPUs, 8,000 claims of one GPU with a CEL memory
 *       selector ({@code >= 40Gi}).
 *   <li>{@code pcie-4gpu}: 8-GPU nodes with two PCIe roots (4 GPUs each); claims of 4 GPUs with
 *       {@code matchAttribute} on {@code resource.kubernetes.io/pcieRoot} (GPUs alternate roots, so
 *       the search has to backtrack).
 *   <li>{@code first-available}: {@code firstAvailable} of one A100 or else two L4s; every node's
 *       A100 is already allocated, so the first choice fails on every node.
 * </ul>
 *
 * <p>Run (a few seconds per case): {@code ./mvnw -q -pl benchmarks -am package -DskipTests && java
 * -jar benchmarks/target/benchmarks.jar AllocatorBenchmark}
 */
@State(Scope.Thread)
@BenchmarkMode({Mode.Throughput, Mode.SampleTime})
@OutputTimeUnit(TimeUnit.MICROSECONDS)
@Warmup(iterations = 2, time = 2)
@Measurement(iterations = 3, time = 2)
@Fork(1)
public class AllocatorBenchmark {

  @Param({"single-gpu", "pcie-4gpu", "first-available"})
  public String scenario;

  @Param({"1000"})
  public int nodes;

  private List<Node> nodeList;
  private AllocationSnapshot empty;
  private AllocationSnapshot snapshot;
  private AllocatorOptions options;
  private List<ResourceClaim> claims;
  private int next;

  @Setup(Level.Trial)
  public void setUp() {
    AllocatorWorkload w = AllocatorWorkload.of(scenario, nodes);
    nodeList = w.nodes();
    empty =
        AllocationSnapshot.of(
            w.slices(),
            InMemoryDeviceClassLister.of(w.deviceClass()),
            AllocatedState.fromClaims(w.existing()));
    snapshot = empty;
    AtomicLong ids = new AtomicLong();
    options =
        AllocatorOptions.defaults(
            AllocatorFeatures.defaults(),
            () -> "00000000-0000-4000-8000-" + String.format("%012d", ids.incrementAndGet()));
    claims = w.claims();
    next = 0;
  }

  /** Allocates the next claim as its own pod; returns the chosen node (null: none). */
  @Benchmark
  public String allocateOnePod() {
    if (next == claims.size()) {
      snapshot = empty;
      next = 0;
    }
    ResourceClaim claim = claims.get(next++);
    PodScheduler.Placement p =
        PodScheduler.schedule(new Allocator(snapshot, options), nodeList, null, List.of(claim));
    if (!p.allocated()) {
      throw new IllegalStateException(
          "benchmark claim not allocated: "
              + ((ClaimOutcome.NotAllocated) p.outcomes().get(0)).explanation().summary());
    }
    AllocationResult result = ((ClaimOutcome.Allocated) p.outcomes().get(0)).result();
    snapshot = snapshot.withAllocated(snapshot.allocated().plus(result));
    return p.node();
  }
}
