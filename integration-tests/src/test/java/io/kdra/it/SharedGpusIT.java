package io.kdra.it;

import static io.kdra.it.nodes.SimulatedNode.migA100;
import static io.kdra.it.nodes.SimulatedNode.twoL4s;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.PodCondition;
import io.fabric8.kubernetes.api.model.Quantity;
import io.fabric8.kubernetes.api.model.resource.v1.Device;
import io.fabric8.kubernetes.api.model.resource.v1.DeviceRequestAllocationResult;
import io.fabric8.kubernetes.api.model.resource.v1.ResourceClaim;
import io.fabric8.kubernetes.api.model.resource.v1.ResourceSlice;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.kdra.it.controlplane.ControlPlane;
import io.kdra.it.nodes.SimulatedNode;
import io.kdra.it.services.Dra;
import io.kdra.it.services.KdraStack;
import io.kdra.it.services.Stack;
import java.math.BigDecimal;
import java.nio.file.Files;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Set;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * Shared and partitioned GPUs end to end, on the real API server with the real services: node-ts
 * has two L4s that its driver shares by time-slicing ({@code kdra.device-driver.sharing.strategy},
 * four shares each), node-mig one MIG-enabled A100 with its partitions on shared counters ({@code
 * kdra.device-driver.mig-mode=dynamic}). Claims get shares and partitions through the allocator's
 * own accounting, the driver prepares them (its commands recorded on simulated hardware), and
 * nothing is over-committed: asserted from the claims' consumedCapacity and the counters of the
 * devices they got, as the published slices state them.
 */
@ExtendWith(ControlPlane.class)
class SharedGpusIT {

  @RegisterExtension
  static final KdraStack STACK =
      KdraStack.nodes(twoL4s("node-ts"), migA100("node-mig"))
          .withProperties(
              Map.of(
                  "kdra.device-driver.sharing.strategy", "time-slicing",
                  "kdra.device-driver.sharing.shares", "4",
                  "kdra.device-driver.mig-mode", "dynamic"));

  private static Stack stack;
  private static KubernetesClient client;

  @BeforeAll
  static void slicesPublished() {
    stack = STACK.get();
    client = stack.client;
    await()
        .atMost(Duration.ofSeconds(90))
        .untilAsserted(
            () -> {
              assertThat(devices("node-ts")).hasSize(2);
              assertThat(devices("node-mig")).hasSize(15);
            });
    stack.createClusterScoped(
        Dra.gpuClass(
            "shared-gpu",
            "device.allowMultipleAllocations && device.attributes[\""
                + Stack.DRIVER
                + "\"].sharing == \"TimeSlicing\""));
    stack.createClusterScoped(
        Dra.gpuClass("whole-mig-gpu", "device.attributes[\"" + Stack.DRIVER + "\"].migEnabled"));
    stack.createClusterScoped(
        new io.fabric8.kubernetes.api.model.resource.v1.DeviceClassBuilder()
            .withNewMetadata()
            .withName("mig-3g")
            .endMetadata()
            .withNewSpec()
            .addNewSelector()
            .withNewCel()
            .withExpression(
                "device.driver == \""
                    + Stack.DRIVER
                    + "\" && device.attributes[\""
                    + Stack.DRIVER
                    + "\"].type == \"mig\" && "
                    + "device.attributes[\""
                    + Stack.DRIVER
                    + "\"].profile == \"3g.20gb\"")
            .endCel()
            .endSelector()
            .endSpec()
            .build());
  }

  @AfterEach
  void noPodsLeft() {
    stack.deletePodsAndAwaitClaimsGone();
  }

  @Test
  void eightPodsShareTwoGpusByTimeSlicingAndANinthWaits() throws Exception {
    Device published = devices("node-ts").get(0);
    assertThat(published.getAllowMultipleAllocations()).isTrue();
    assertThat(published.getCapacity().get("shares").getValue()).isEqualTo(new Quantity("4"));
    assertThat(published.getCapacity().get("memory").getRequestPolicy().getDefault())
        .isEqualTo(new Quantity("6Gi"));

    String ns = stack.namespace;
    client.resource(Dra.template(ns, "gpu-share", "shared-gpu", 1)).create();
    List<Pod> pods = new ArrayList<>();
    for (int i = 0; i < 8; i++) {
      pods.add(client.resource(Dra.podWithTemplate(ns, "inference-" + i, "gpu-share")).create());
    }
    await()
        .atMost(Duration.ofSeconds(120))
        .untilAsserted(
            () -> {
              for (Pod pod : pods) {
                assertThat(stack.nodes.kubelet("node-ts").prepared(pod))
                    .as(pod.getMetadata().getName())
                    .isNotNull();
              }
            });
    List<ResourceClaim> claims = pods.stream().map(p -> Dra.claimOf(client, p, "gpu")).toList();
    Map<String, BigDecimal> shares = new HashMap<>();
    Map<String, BigDecimal> memory = new HashMap<>();
    Set<String> shareIds = new HashSet<>();
    for (ResourceClaim c : claims) {
      DeviceRequestAllocationResult r = result(c);
      assertThat(r.getShareID()).isNotNull();
      assertThat(shareIds.add(r.getShareID())).isTrue();
      shares.merge(r.getDevice(), amount(r.getConsumedCapacity().get("shares")), BigDecimal::add);
      memory.merge(r.getDevice(), amount(r.getConsumedCapacity().get("memory")), BigDecimal::add);
    }
    // 4 shares of 6Gi on each 24Gi GPU: exactly full, never more
    assertThat(shares).containsOnlyKeys("gpu-0", "gpu-1");
    shares.values().forEach(v -> assertThat(v).isEqualByComparingTo("4"));
    memory.values().forEach(v -> assertThat(v).isEqualByComparingTo(new BigDecimal(24L << 30)));

    Pod ninth = client.resource(Dra.podWithTemplate(ns, "inference-8", "gpu-share")).create();
    await()
        .atMost(Duration.ofSeconds(90))
        .untilAsserted(() -> assertThat(scheduledCondition(ninth)).isEqualTo("False"));

    // the prepare step applied the strategy; on simulated hardware the commands are logged
    await()
        .atMost(Duration.ofSeconds(30))
        .untilAsserted(
            () ->
                assertThat(Files.readString(stack.services.process("device-driver-node-ts").log))
                    .contains(
                        "simulated hardware, not running: nvidia-smi -i "
                            + SimulatedNode.uuid("node-ts", 0)
                            + " -c DEFAULT")
                    .contains(
                        "simulated hardware, not running: nvidia-smi compute-policy -i "
                            + SimulatedNode.uuid("node-ts", 0)
                            + " --set-timeslice 0"));

    // one pod gone: its share goes to the ninth
    client.resource(pods.get(0)).delete();
    await()
        .atMost(Duration.ofSeconds(90))
        .untilAsserted(
            () -> assertThat(stack.nodes.kubelet("node-ts").prepared(ninth)).isNotNull());
  }

  @Test
  void partitionsAndTheWholeGpuAreAlternativesTheAllocatorKeepsConsistent() throws Exception {
    String ns = stack.namespace;
    client.resource(Dra.template(ns, "slice", "mig-3g", 1)).create();
    client.resource(Dra.template(ns, "whole", "whole-mig-gpu", 1)).create();
    Pod a = client.resource(Dra.podWithTemplate(ns, "job-a", "slice")).create();
    Pod b = client.resource(Dra.podWithTemplate(ns, "job-b", "slice")).create();
    await()
        .atMost(Duration.ofSeconds(120))
        .untilAsserted(
            () -> {
              assertThat(stack.nodes.kubelet("node-mig").prepared(a)).isNotNull();
              assertThat(stack.nodes.kubelet("node-mig").prepared(b)).isNotNull();
            });
    List<String> got =
        List.of(
            result(Dra.claimOf(client, a, "gpu")).getDevice(),
            result(Dra.claimOf(client, b, "gpu")).getDevice());
    assertThat(got).containsExactlyInAnyOrder("gpu-0-mig-3g20gb-0", "gpu-0-mig-3g20gb-4");
    assertCountersNotOverCommitted(List.of(a, b));

    // the whole GPU and a third 3g.20gb wait: every memory slice is taken
    Pod whole = client.resource(Dra.podWithTemplate(ns, "trainer", "whole")).create();
    Pod c = client.resource(Dra.podWithTemplate(ns, "job-c", "slice")).create();
    await()
        .atMost(Duration.ofSeconds(90))
        .untilAsserted(
            () -> {
              assertThat(scheduledCondition(whole)).isEqualTo("False");
              assertThat(scheduledCondition(c)).isEqualTo("False");
            });
    // prepare created each instance at its placement (dynamic MIG, commands logged)
    await()
        .atMost(Duration.ofSeconds(30))
        .untilAsserted(
            () ->
                assertThat(Files.readString(stack.services.process("device-driver-node-mig").log))
                    .contains("nvidia-smi mig -i 0 -cgi 9:0 -C")
                    .contains("nvidia-smi mig -i 0 -cgi 9:4 -C"));

    client.resource(a).delete();
    client.resource(b).delete();
    // the freed slices go to job-c or the whole GPU to the trainer, never both
    await()
        .atMost(Duration.ofSeconds(120))
        .untilAsserted(
            () ->
                assertThat(
                        List.of(whole, c).stream()
                            .filter(p -> stack.nodes.kubelet("node-mig").prepared(p) != null))
                    .isNotEmpty());
    assertCountersNotOverCommitted(List.of(whole, c));
    // unprepare destroyed the instances of the deleted pods' claims
    await()
        .atMost(Duration.ofSeconds(60))
        .untilAsserted(
            () ->
                assertThat(Files.readString(stack.services.process("device-driver-node-mig").log))
                    .contains("nvidia-smi mig -i 0 -gi 1 -dgi")
                    .contains("nvidia-smi mig -i 0 -gi 2 -dgi"));
  }

  // ---- helpers

  private static List<Device> devices(String node) {
    return client.resources(ResourceSlice.class).list().getItems().stream()
        .filter(s -> Stack.DRIVER.equals(s.getSpec().getDriver()))
        .filter(s -> node.equals(s.getSpec().getNodeName()))
        .flatMap(
            s ->
                s.getSpec().getDevices() == null
                    ? java.util.stream.Stream.empty()
                    : s.getSpec().getDevices().stream())
        .toList();
  }

  /** Sums each counter over the devices the pods' claims got; none may exceed its set. */
  private static void assertCountersNotOverCommitted(List<Pod> pods) {
    Map<String, Device> byName = new HashMap<>();
    devices("node-mig").forEach(d -> byName.put(d.getName(), d));
    Map<String, BigDecimal> capacity = new HashMap<>();
    client.resources(ResourceSlice.class).list().getItems().stream()
        .filter(s -> "node-mig".equals(s.getSpec().getNodeName()))
        .filter(s -> s.getSpec().getSharedCounters() != null)
        .flatMap(s -> s.getSpec().getSharedCounters().stream())
        .forEach(
            set ->
                set.getCounters()
                    .forEach(
                        (k, v) -> capacity.put(set.getName() + "/" + k, amount(v.getValue()))));
    assertThat(capacity).containsKey("gpu-0-mig/memory-slice-7");
    Map<String, BigDecimal> used = new HashMap<>();
    for (Pod p : pods) {
      ResourceClaim c = Dra.claimOf(client, p, "gpu");
      if (c == null || Dra.devices(c).isEmpty()) {
        continue;
      }
      Device d = byName.get(result(c).getDevice());
      d.getConsumesCounters()
          .forEach(
              cc ->
                  cc.getCounters()
                      .forEach(
                          (k, v) ->
                              used.merge(
                                  cc.getCounterSet() + "/" + k,
                                  amount(v.getValue()),
                                  BigDecimal::add)));
    }
    used.forEach((k, v) -> assertThat(v).as(k).isLessThanOrEqualTo(capacity.get(k)));
  }

  private static DeviceRequestAllocationResult result(ResourceClaim c) {
    return c.getStatus().getAllocation().getDevices().getResults().get(0);
  }

  private static BigDecimal amount(Quantity q) {
    return Quantity.getAmountInBytes(Objects.requireNonNull(q));
  }

  private static String scheduledCondition(Pod pod) {
    Pod p = Dra.get(client, pod);
    if (p == null || p.getStatus() == null || p.getStatus().getConditions() == null) {
      return null;
    }
    return p.getStatus().getConditions().stream()
        .filter(c -> "PodScheduled".equals(c.getType()))
        .map(PodCondition::getStatus)
        .findFirst()
        .orElse(null);
  }
}
