package io.kdra.claimcontroller.scheduling;

import static org.assertj.core.api.Assertions.assertThat;

import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.PodBuilder;
import io.fabric8.kubernetes.api.model.Quantity;
import io.kdra.claimcontroller.domain.NodeFilter.NodeUsage;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Random;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

class NodeUsageCacheTest {

  static Pod pod(String name, String node, String cpu, String phase) {
    return new PodBuilder()
        .withNewMetadata()
        .withName(name)
        .withNamespace("ns")
        .withUid("uid-" + name)
        .endMetadata()
        .withNewSpec()
        .withNodeName(node)
        .addNewContainer()
        .withName("c")
        .withNewResources()
        .addToRequests("cpu", new Quantity(cpu))
        .endResources()
        .endContainer()
        .endSpec()
        .withNewStatus()
        .withPhase(phase)
        .endStatus()
        .build();
  }

  /** The informer's pods by key, and whether it sends notices. */
  final Map<NodeUsageCache.Key, Pod> informer = new LinkedHashMap<>();

  NodeUsageCache cache(boolean live) {
    return new NodeUsageCache(
        k -> Optional.ofNullable(informer.get(k)),
        () -> List.copyOf(informer.values()),
        () -> live);
  }

  void inform(NodeUsageCache cache, Pod p) {
    informer.put(NodeUsageCache.Key.of(p), p);
    cache.podChanged(p.getMetadata().getNamespace(), p.getMetadata().getName());
  }

  void delete(NodeUsageCache cache, Pod p) {
    informer.remove(NodeUsageCache.Key.of(p));
    cache.podChanged(p.getMetadata().getNamespace(), p.getMetadata().getName());
  }

  static long cpuMillis(NodeUsage u) {
    return u.requests().cpu().value().movePointRight(3).longValueExact();
  }

  @ParameterizedTest(name = "notices: {0}")
  @ValueSource(booleans = {true, false})
  void boundRunningAndBeingBoundPodsCountOnTheirNodeTerminalAndPendingOnesDoNot(boolean live) {
    NodeUsageCache cache = cache(live);
    Pod a1 = pod("a1", "node-a", "1", "Running");
    Pod a2 = pod("a2", "node-a", "500m", "Pending");
    Pod done = pod("done", "node-a", "4", "Succeeded");
    Pod pending = pod("pending", null, "8", "Pending");
    Pod binding = pod("binding", "node-b", "2", "Pending");
    List.of(a1, a2, done, pending).forEach(p -> inform(cache, p));

    Map<String, NodeUsage> usage = cache.usage(List.of(binding));

    assertThat(usage.get("node-a").pods()).isEqualTo(2);
    assertThat(
            usage
                .get("node-a")
                .requests()
                .cpu()
                .compareTo(io.kdra.core.model.Quantity.parse("1500m")))
        .isZero();
    assertThat(usage.get("node-b").pods()).isEqualTo(1);
    assertThat(usage).doesNotContainKey(null);

    // the informer shows the pod being bound: counted once, not twice
    inform(cache, binding);
    delete(cache, done);
    delete(cache, pending);
    Map<String, NodeUsage> later = cache.usage(List.of(binding));
    assertThat(later.get("node-b").pods()).isEqualTo(1);
    // a pod gone from the informer no longer counts
    delete(cache, a2);
    delete(cache, binding);
    Map<String, NodeUsage> last = cache.usage(List.of());
    assertThat(last.get("node-a").pods()).isEqualTo(1);
    assertThat(last).doesNotContainKey("node-b");
  }

  /**
   * After any sequence of pod adds, updates (bound, finished, moved) and deletes, noticed one by
   * one, the usage equals a full pass over the informer's pods.
   */
  @Test
  void afterAnySequenceOfEventsTheUsageEqualsAFullPass() {
    Random random = new Random(22);
    NodeUsageCache incremental = cache(true);
    String[] nodes = {null, "n0", "n1", "n2"};
    String[] phases = {"Pending", "Running", "Succeeded", "Failed"};
    for (int step = 0; step < 3000; step++) {
      String name = "p" + random.nextInt(40);
      Pod p =
          pod(
              name,
              nodes[random.nextInt(nodes.length)],
              (1 + random.nextInt(8)) * 100 + "m",
              phases[random.nextInt(phases.length)]);
      if (random.nextInt(5) == 0) {
        delete(incremental, p);
      } else {
        inform(incremental, p);
      }
      if (random.nextInt(3) == 0) {
        Map<String, NodeUsage> got = incremental.usage(List.of());
        Map<String, NodeUsage> want = cache(false).usage(List.of());
        assertThat(got.keySet()).as("step %d", step).isEqualTo(want.keySet());
        want.forEach(
            (node, u) -> {
              assertThat(got.get(node).pods()).isEqualTo(u.pods());
              assertThat(cpuMillis(got.get(node))).isEqualTo(cpuMillis(u));
            });
      }
    }
  }

  static Pod withAntiAffinity(Pod p) {
    return new PodBuilder(p)
        .editSpec()
        .withNewAffinity()
        .withNewPodAntiAffinity()
        .addNewRequiredDuringSchedulingIgnoredDuringExecution()
        .withTopologyKey("kubernetes.io/hostname")
        .endRequiredDuringSchedulingIgnoredDuringExecution()
        .endPodAntiAffinity()
        .endAffinity()
        .endSpec()
        .build();
  }

  @ParameterizedTest(name = "notices: {0}")
  @ValueSource(booleans = {true, false})
  void placedPodsAndThoseWithRequiredAntiAffinityAreKeptApart(boolean live) {
    NodeUsageCache cache = cache(live);
    Pod plain = pod("plain", "node-a", "1", "Running");
    Pod anti = withAntiAffinity(pod("anti", "node-a", "1", "Running"));
    Pod binding = withAntiAffinity(pod("binding", "node-b", "1", "Pending"));
    List.of(plain, anti).forEach(p -> inform(cache, p));

    cache.usage(List.of(binding));
    assertThat(cache.placed()).containsExactlyInAnyOrder(plain, anti, binding);
    assertThat(cache.placedWithAntiAffinity()).containsExactlyInAnyOrder(anti, binding);

    Pod finished = new PodBuilder(anti).editStatus().withPhase("Succeeded").endStatus().build();
    inform(cache, finished);
    cache.usage(List.of());
    assertThat(cache.placed()).containsExactly(plain);
    assertThat(cache.placedWithAntiAffinity()).isEmpty();
  }
}
