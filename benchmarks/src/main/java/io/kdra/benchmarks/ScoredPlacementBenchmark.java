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
import io.kdra.core.alloc.Deadline;
import io.kdra.core.alloc.InMemoryDeviceClassLister;
import io.kdra.core.alloc.PodScheduler;
import io.kdra.core.alloc.RankedSearch;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;
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
 * The claim-controller's device search for a pod whose nodes are scored, before and after the
 * search in score order, on {@link AllocatorWorkload}'s clusters. Each node's base score stands in
 * for the default score plugins: a fixed share for other workloads (seeded, 0..100) plus the share
 * of its devices still free (LeastAllocated spreads pods), kept incrementally, so neither side pays
 * for scoring itself.
 *
 * <ul>
 *   <li>{@code searchAgain} (the claim-controller until now): the allocator's first fit in name
 *       order from a rotating start, then the nodes scoring higher than it searched again, until
 *       none of them fits.
 *   <li>{@code scoreOrder}: the nodes sorted by score, then one {@link RankedSearch}.
 * </ul>
 *
 * <p>One invocation places one pod (one claim); the state is reset when the cluster is full. Run:
 * {@code java -jar benchmarks/target/benchmarks.jar ScoredPlacementBenchmark}, or, on a shared
 * machine, {@code java -cp benchmarks/target/benchmarks.jar
 * io.kdra.benchmarks.ScoredPlacementBenchmark [pods] [rounds] [scenarios]}: the thread's CPU time
 * per pod (less disturbed by other processes than wall time), searches and nodes examined per pod,
 * the two sides alternating round by round.
 */
@State(Scope.Thread)
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.MICROSECONDS)
@Warmup(iterations = 2, time = 2)
@Measurement(iterations = 3, time = 2)
@Fork(1)
public class ScoredPlacementBenchmark {

  @Param({"single-gpu", "first-available"})
  public String scenario;

  @Param({"1000"})
  public int nodes;

  private List<Node> byName;
  private Map<String, Integer> position;
  private AllocationSnapshot empty;
  private AllocationSnapshot snapshot;
  private AllocatorOptions options;
  private List<ResourceClaim> claims;
  private long[] other;
  private long[] score;
  private int[] placed;
  private int perNode;
  private int next;
  private int nextStart;

  /** Allocator searches and nodes examined so far, for {@link #main}'s report. */
  long searches;

  long examined;

  @Setup(Level.Trial)
  public void setUp() {
    AllocatorWorkload w = AllocatorWorkload.of(scenario, nodes);
    byName = w.nodes();
    position = new HashMap<>();
    for (int i = 0; i < byName.size(); i++) {
      position.put(byName.get(i).getMetadata().getName(), i);
    }
    empty =
        AllocationSnapshot.of(
            w.slices(),
            InMemoryDeviceClassLister.of(w.deviceClass()),
            AllocatedState.fromClaims(w.existing()));
    AtomicLong ids = new AtomicLong();
    options =
        AllocatorOptions.defaults(
            AllocatorFeatures.defaults(),
            () -> "00000000-0000-4000-8000-" + String.format("%012d", ids.incrementAndGet()));
    claims = w.claims();
    perNode = AllocatorWorkload.claimsPerNode(scenario);
    Random random = new Random(7);
    other = new long[byName.size()];
    for (int i = 0; i < other.length; i++) {
      other[i] = random.nextInt(101);
    }
    reset();
  }

  private void reset() {
    snapshot = empty;
    next = 0;
    nextStart = 0;
    placed = new int[byName.size()];
    score = new long[byName.size()];
    for (int i = 0; i < score.length; i++) {
      score[i] = scoreOf(i);
    }
  }

  private long scoreOf(int i) {
    return other[i] + 100L * (perNode - placed[i]) / perNode;
  }

  /** Before: first fit in name order, then the higher-scoring nodes again until none fits. */
  @Benchmark
  public String searchAgain() {
    ResourceClaim claim = nextClaim();
    PodScheduler.Searched s = searchByName(byName, claim);
    PodScheduler.Placement best = s.explained();
    while (best.allocated()) {
      long bar = score[position.get(best.node())];
      List<Node> higher = new ArrayList<>();
      for (int i = 0; i < byName.size(); i++) {
        if (score[i] > bar) {
          higher.add(byName.get(i));
        }
      }
      if (higher.isEmpty()) {
        break;
      }
      PodScheduler.Placement better = searchByName(higher, claim).explained();
      if (!better.allocated()) {
        break;
      }
      best = better;
    }
    return record(best);
  }

  private PodScheduler.Searched searchByName(List<Node> candidates, ResourceClaim claim) {
    searches++;
    PodScheduler.Searched s =
        PodScheduler.search(
            new Allocator(snapshot, options),
            candidates,
            null,
            List.of(claim),
            List.of(),
            nextStart,
            Deadline.NONE);
    nextStart = (int) ((nextStart + (long) s.examined()) % candidates.size());
    examined += s.examined();
    return s;
  }

  /** After: the nodes by score, one search in that order. */
  @Benchmark
  public String scoreOrder() {
    ResourceClaim claim = nextClaim();
    List<Integer> order = new ArrayList<>(byName.size());
    for (int i = 0; i < byName.size(); i++) {
      order.add(i);
    }
    order.sort(Comparator.comparingLong((Integer i) -> -score[i]).thenComparing(i -> i));
    List<Node> ranked = new ArrayList<>(order.size());
    long[] base = new long[order.size()];
    for (int k = 0; k < order.size(); k++) {
      ranked.add(byName.get(order.get(k)));
      base[k] = score[order.get(k)];
    }
    PodScheduler.Searched s =
        RankedSearch.search(
            new Allocator(snapshot, options),
            new RankedSearch.Ranked(byName, ranked, base),
            null,
            List.of(claim),
            List.of(),
            Deadline.NONE);
    searches++;
    examined += s.examined();
    return record(s.explained());
  }

  private ResourceClaim nextClaim() {
    if (next == claims.size()) {
      reset();
    }
    return claims.get(next++);
  }

  private String record(PodScheduler.Placement p) {
    if (!p.allocated()) {
      throw new IllegalStateException(
          "benchmark claim not allocated: "
              + ((ClaimOutcome.NotAllocated) p.outcomes().get(0)).explanation().summary());
    }
    AllocationResult result = ((ClaimOutcome.Allocated) p.outcomes().get(0)).result();
    snapshot = snapshot.withAllocated(snapshot.allocated().plus(result));
    int i = position.get(p.node());
    placed[i]++;
    score[i] = scoreOf(i);
    return p.node();
  }

  /** The CPU-time comparison; see the class comment. */
  public static void main(String[] args) {
    int pods = args.length > 0 ? Integer.parseInt(args[0]) : 2000;
    int rounds = args.length > 1 ? Integer.parseInt(args[1]) : 3;
    List<String> scenarios =
        args.length > 2 ? List.of(args[2].split(",")) : List.of("single-gpu", "first-available");
    java.lang.management.ThreadMXBean cpu =
        java.lang.management.ManagementFactory.getThreadMXBean();
    System.out.println(
        "| workload | nodes | pods | side | CPU µs/pod | searches/pod | nodes examined/pod |");
    System.out.println("|---|---:|---:|---|---:|---:|---:|");
    for (String scenario : scenarios) {
      ScoredPlacementBenchmark before = new ScoredPlacementBenchmark();
      ScoredPlacementBenchmark after = new ScoredPlacementBenchmark();
      for (ScoredPlacementBenchmark b : List.of(before, after)) {
        b.scenario = scenario;
        b.nodes = 1000;
        b.setUp();
      }
      long[] nanos = new long[2];
      long[] searched = new long[2];
      long[] nodesExamined = new long[2];
      for (int round = -2; round < rounds; round++) { // two rounds of warm-up
        for (int side = 0; side < 2; side++) {
          int which = (round & 1) == 0 ? side : 1 - side;
          ScoredPlacementBenchmark b = which == 0 ? before : after;
          b.searches = 0;
          b.examined = 0;
          long start = cpu.getCurrentThreadCpuTime();
          for (int i = 0; i < pods; i++) {
            if (which == 0) {
              b.searchAgain();
            } else {
              b.scoreOrder();
            }
          }
          long spent = cpu.getCurrentThreadCpuTime() - start;
          if (round >= 0) {
            nanos[which] += spent;
            searched[which] += b.searches;
            nodesExamined[which] += b.examined;
          }
        }
      }
      long total = (long) pods * rounds;
      for (int which = 0; which < 2; which++) {
        System.out.printf(
            "| %s | 1,000 | %d | %s | %.0f | %.2f | %.1f |%n",
            scenario,
            total,
            which == 0 ? "searchAgain (before)" : "scoreOrder (after)",
            nanos[which] / 1000.0 / total,
            (double) searched[which] / total,
            (double) nodesExamined[which] / total);
      }
    }
  }
}
