package io.kdra.benchmarks;

import io.kdra.slicepublisher.domain.InventoryDevice;
import io.kdra.slicepublisher.domain.NodeInventory;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;

/**
 * The slice-publisher's publication benchmark (docs/dev/benchmarks.md): initial publication of a
 * fleet, then one simulated hour of steady state (every node heartbeats and every pool is resynced
 * every 30 s), then a health change on 10 nodes. Counts writes issued and measures the CPU time of
 * planning and diffing; the time to converge is bounded by the configured write rate, so it is
 * reported as writes / rate when that dominates.
 *
 * <p>Run: {@code java -cp benchmarks/target/benchmarks.jar
 * io.kdra.benchmarks.SlicePublisherSimulation [nodes] [devicesPerNode] [writesPerSecond]}
 */
public final class SlicePublisherSimulation {

  private SlicePublisherSimulation() {}

  public static void main(String[] args) {
    int nodes = args.length > 0 ? Integer.parseInt(args[0]) : 1000;
    int devices = args.length > 1 ? Integer.parseInt(args[1]) : 8;
    double rate = args.length > 2 ? Double.parseDouble(args[2]) : 20;
    Duration period = Duration.ofSeconds(30);

    // warm-up on a throwaway fleet so that the numbers below are not JIT compile time
    for (int i = 0; i < 3; i++) {
      PublisherFleet warm = new PublisherFleet(nodes, devices, Instant.EPOCH);
      warm.syncAll(Instant.EPOCH);
      warm.syncAll(Instant.EPOCH);
    }

    Instant t = Instant.parse("2026-01-01T00:00:00Z");
    PublisherFleet fleet = new PublisherFleet(nodes, devices, t);
    long start = System.nanoTime();
    long initialWrites = fleet.syncAll(t);
    double initialCpuMs = (System.nanoTime() - start) / 1e6;
    double convergeS = Math.max(initialCpuMs / 1000, initialWrites / rate);

    long steadyWrites = 0;
    long passes = 0;
    start = System.nanoTime();
    for (int tick = 0; tick < Duration.ofHours(1).dividedBy(period); tick++) {
      t = t.plus(period);
      fleet.heartbeat(t);
      steadyWrites += fleet.syncAll(t); // the snapshot-triggered syncs
      steadyWrites += fleet.syncAll(t); // the periodic resync
      passes += 2;
    }
    double steadyCpuMs = (System.nanoTime() - start) / 1e6;

    List<String> sick = new ArrayList<>(fleet.inventories.keySet()).subList(0, 10);
    for (String node : sick) {
      NodeInventory i = fleet.inventories.get(node);
      List<InventoryDevice> devs = new ArrayList<>(i.devices());
      devs.set(0, new InventoryDevice(devs.get(0).device(), false, "XID 79"));
      fleet.report(
          new NodeInventory(i.driver(), node, i.sequence() + 1, devs, i.sharedCounters(), t));
    }
    long healthWrites = fleet.syncAll(t);
    long afterWrites = fleet.syncAll(t);

    System.out.printf(
        Locale.ROOT, "| fleet | %d nodes x %d devices, 1 pool/node |%n", nodes, devices);
    System.out.printf(Locale.ROOT, "| initial publication: writes | %d |%n", initialWrites);
    System.out.printf(
        Locale.ROOT,
        "| initial publication: plan+diff CPU | %.0f ms (%.1f us/pool) |%n",
        initialCpuMs,
        initialCpuMs * 1000 / nodes);
    System.out.printf(
        Locale.ROOT,
        "| initial publication: time to converge at %.0f writes/s | %.0f s |%n",
        rate,
        convergeS);
    System.out.printf(Locale.ROOT, "| steady-state hour: pool syncs | %d |%n", passes * nodes);
    System.out.printf(Locale.ROOT, "| steady-state hour: writes | %d |%n", steadyWrites);
    System.out.printf(
        Locale.ROOT,
        "| steady-state hour: plan+diff CPU | %.0f ms (%.1f us/pool sync) |%n",
        steadyCpuMs,
        steadyCpuMs * 1000 / (passes * nodes));
    System.out.printf(
        Locale.ROOT,
        "| one device unhealthy on 10 nodes: writes | %d (then %d) |%n",
        healthWrites,
        afterWrites);
  }
}
