package io.kdra.claimcontroller.scheduling;

import static org.assertj.core.api.Assertions.assertThat;

import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.PodBuilder;
import io.fabric8.kubernetes.api.model.Quantity;
import io.kdra.claimcontroller.domain.NodeFilter.NodeUsage;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

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

  @Test
  void boundRunningAndBeingBoundPodsCountOnTheirNodeTerminalAndPendingOnesDoNot() {
    NodeUsageCache cache = new NodeUsageCache();
    Pod a1 = pod("a1", "node-a", "1", "Running");
    Pod a2 = pod("a2", "node-a", "500m", "Pending");
    Pod done = pod("done", "node-a", "4", "Succeeded");
    Pod pending = pod("pending", null, "8", "Pending");
    Pod binding = pod("binding", "node-b", "2", "Pending");

    Map<String, NodeUsage> usage = cache.usage(List.of(a1, a2, done, pending), List.of(binding));

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
    Map<String, NodeUsage> later = cache.usage(List.of(a1, a2, binding), List.of(binding));
    assertThat(later.get("node-b").pods()).isEqualTo(1);
    // a pod gone from the informer no longer counts
    assertThat(cache.usage(List.of(a1), List.of()).get("node-a").pods()).isEqualTo(1);
  }
}
