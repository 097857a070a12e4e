package io.kdra.it;

import static io.kdra.it.nodes.SimulatedNode.l4s;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.fabric8.kubernetes.api.model.resource.v1.ResourceSlice;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.kdra.it.controlplane.ControlPlane;
import io.kdra.it.services.AllocationInvariants;
import io.kdra.it.services.Dra;
import io.kdra.it.services.KdraStack;
import io.kdra.it.services.Stack;
import io.kdra.it.support.PausableProxy;
import io.kdra.it.support.ServiceProcess;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * Partitions between a node's driver and the slice-publisher (a {@link PausableProxy} between
 * them), shorter and longer than the publisher's staleness timers, with node-b's driver beside it
 * untouched as the control:
 *
 * <ul>
 *   <li>a silent partition shorter than the disconnected taint's grace leaves node-a's pool alone:
 *       no taint, no removal, and the stream goes on;
 *   <li>a silent partition longer than the removal time: node-a's devices are tainted, then its
 *       pool is removed; once it heals, the driver (which gave up the unanswered stream) reaches
 *       the publisher again and the pool is published again, untainted;
 *   <li>the same with a loud partition (every connection closed, new ones refused): the stream's
 *       end taints the devices {@code disconnected}, then the pool goes, and comes back.
 * </ul>
 *
 * <p>Stale timers shortened for the test: disconnected taint after {@value #DISCONNECTED_S} s,
 * stale taint after {@value #TAINT_S} s, removal after {@value #REMOVE_S} s (the chart's: 20 s, 2
 * min, 10 min); the driver's heartbeat is the harness's 2 s, its acknowledgement timeout the
 * default 15 s.
 */
@ExtendWith(ControlPlane.class)
class PublisherPartitionIT {

  static final int DEVICES = 2;
  static final long DISCONNECTED_S = 4;
  static final long TAINT_S = 8;
  static final long REMOVE_S = 20;

  @RegisterExtension
  static final KdraStack STACK =
      KdraStack.nodes(l4s("node-a", DEVICES), l4s("node-b", DEVICES))
          .withPublishers(1)
          .withProperties(
              Map.of(
                  "kdra.slice-publisher.stale.disconnected-taint-after", DISCONNECTED_S + "s",
                  "kdra.slice-publisher.stale.taint-after", TAINT_S + "s",
                  "kdra.slice-publisher.stale.remove-after", REMOVE_S + "s"));

  private static Stack stack;
  private static KubernetesClient client;
  private static PausableProxy link;

  @BeforeAll
  static void published() {
    stack = STACK.get();
    client = stack.client;
    link = stack.services.publisherLink("node-a");
  }

  @BeforeEach
  void bothPoolsPublishedUntainted() {
    link.heal();
    await()
        .atMost(Duration.ofSeconds(90))
        .untilAsserted(
            () -> {
              for (String node : List.of("node-a", "node-b")) {
                assertThat(Dra.publishedDevices(client, node)).as(node).isEqualTo(DEVICES);
                assertThat(taints(node)).as(node).containsOnly("");
              }
            });
  }

  @Test
  void aSilentPartitionShorterThanTheGraceLeavesThePoolAlone() {
    try (AllocationInvariants watch =
        new AllocationInvariants(client, stack.namespace, Stack.DRIVER)) {
      PoolEvents nodeA = new PoolEvents(watch, "node-a");
      int logBefore = driverLog("node-a").length();
      link.pause();
      long paused = System.nanoTime();
      // the partition's length, not a wait for a state: shorter than the disconnected grace, so
      // shorter than every timer
      ServiceProcess.sleep(1500);
      link.heal();
      System.out.printf(
          "[it] node-a's link paused %d ms%n", (System.nanoTime() - paused) / 1_000_000);
      // a taint would come within the stale taint's time of the last snapshot before the pause:
      // nothing may happen to node-a's pool for that long and more
      await()
          .during(Duration.ofSeconds(TAINT_S + DISCONNECTED_S))
          .atMost(Duration.ofSeconds(TAINT_S + DISCONNECTED_S + 30))
          .until(() -> nodeA.untouched() && Dra.publishedDevices(client, "node-a") == DEVICES);
      assertThat(driverLog("node-a").substring(logBefore))
          .as("the driver kept its stream")
          .doesNotContain("inventory stream to");
    }
  }

  @Test
  void aSilentPartitionLongerThanTheRemovalTaintsThenRemovesAndHealingRepublishes() {
    // the silence taint has no value (the publisher's metric calls it "silent")
    longPartition(link::pause, "");
  }

  @Test
  void aLoudPartitionLongerThanTheRemovalTaintsThenRemovesAndHealingRepublishes() {
    longPartition(link::cut, "disconnected");
  }

  private void longPartition(Runnable partition, String taintValue) {
    try (AllocationInvariants watch =
        new AllocationInvariants(client, stack.namespace, Stack.DRIVER)) {
      PoolEvents nodeA = new PoolEvents(watch, "node-a");
      PoolEvents nodeB = new PoolEvents(watch, "node-b");
      long started = System.nanoTime();
      partition.run();
      await()
          .atMost(Duration.ofSeconds(TAINT_S + 60))
          .pollInterval(Duration.ofMillis(200))
          .until(() -> taints("node-a").contains("kdra.io/driver-unresponsive=" + taintValue));
      assertThat(taints("node-b")).as("node-b, not partitioned").containsOnly("");
      long tainted = (System.nanoTime() - started) / 1_000_000;
      await()
          .atMost(Duration.ofSeconds(REMOVE_S + 60))
          .pollInterval(Duration.ofMillis(200))
          .until(() -> Dra.publishedDevices(client, "node-a") == 0);
      long removed = (System.nanoTime() - started) / 1_000_000;
      assertThat(nodeA.tainted()).as("node-a tainted before its pool went").isTrue();

      link.heal();
      long healed = System.nanoTime();
      await()
          .atMost(Duration.ofSeconds(60))
          .pollInterval(Duration.ofMillis(200))
          .untilAsserted(
              () -> {
                assertThat(Dra.publishedDevices(client, "node-a")).isEqualTo(DEVICES);
                assertThat(taints("node-a")).containsOnly("");
              });
      System.out.printf(
          "[it] node-a's link %s: tainted %s after %d ms, removed after %d ms; published again %d ms"
              + " after healing%n",
          taintValue.isEmpty() ? "paused" : "cut",
          taintValue.isEmpty() ? "(silent)" : taintValue,
          tainted,
          removed,
          (System.nanoTime() - healed) / 1_000_000);
      assertThat(nodeB.untouched()).as("node-b, not partitioned").isTrue();
      assertThat(Dra.publishedDevices(client, "node-b")).isEqualTo(DEVICES);
    }
  }

  /** What the invariants' slice watch saw of one node's pool. */
  private record PoolEvents(AllocationInvariants watch, String node) {
    boolean tainted() {
      return watch.taintedSlices.stream().anyMatch(s -> s.contains(" of " + node + ":"));
    }

    boolean removed() {
      return watch.deletedSlices.stream().anyMatch(s -> s.endsWith(" of " + node));
    }

    boolean untouched() {
      return !tainted() && !removed();
    }
  }

  private static String driverLog(String node) {
    try {
      return java.nio.file.Files.readString(stack.services.process("device-driver-" + node).log);
    } catch (java.io.IOException e) {
      throw new java.io.UncheckedIOException(e);
    }
  }

  /** Each published device of {@code node} as its taints, "key=value" joined; "" for none. */
  private static List<String> taints(String node) {
    return client.resources(ResourceSlice.class).list().getItems().stream()
        .filter(
            s ->
                Stack.DRIVER.equals(s.getSpec().getDriver())
                    && node.equals(s.getSpec().getNodeName()))
        .flatMap(s -> s.getSpec().getDevices().stream())
        .map(
            d ->
                d.getTaints() == null
                    ? ""
                    : String.join(
                        ",",
                        d.getTaints().stream()
                            .map(t -> t.getKey() + "=" + (t.getValue() == null ? "" : t.getValue()))
                            .toList()))
        .toList();
  }
}
