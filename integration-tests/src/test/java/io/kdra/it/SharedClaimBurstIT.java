package io.kdra.it;

import static io.kdra.it.nodes.SimulatedNode.l4s;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.resource.v1.ResourceClaim;
import io.fabric8.kubernetes.api.model.resource.v1.ResourceClaimConsumerReference;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.kdra.it.chart.KdraChart;
import io.kdra.it.controlplane.ControlPlane;
import io.kdra.it.services.AllocationInvariants;
import io.kdra.it.services.Dra;
import io.kdra.it.services.KdraStack;
import io.kdra.it.services.Stack;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * The scheduling benchmark's {@code shared} workload in small, repeated: ResourceClaims created
 * first, then {@value #PODS_PER_CLAIM} pods per claim, all in one burst, so that pods sharing a
 * claim not allocated yet are scheduled together. As many claims as devices, so that a device that
 * looks free when it is not is taken by another claim. In every state the claims pass through no
 * device is in two claims ({@link AllocationInvariants}), and at the end every pod is bound where
 * its claim's device is, reserved for it. Until the scheduling cycle read the pod's claims again
 * under its lock, a pod whose claim another pod had just allocated allocated it again, and the
 * first allocation's device went to another claim.
 */
@ExtendWith(ControlPlane.class)
class SharedClaimBurstIT {

  static final int NODES = 3;
  static final int DEVICES_PER_NODE = 4;
  static final int CLAIMS = NODES * DEVICES_PER_NODE;
  static final int PODS_PER_CLAIM = 3;
  static final int BURSTS = 3;

  @RegisterExtension
  static final KdraStack STACK =
      KdraStack.nodes(
          l4s("node-a", DEVICES_PER_NODE),
          l4s("node-b", DEVICES_PER_NODE),
          l4s("node-c", DEVICES_PER_NODE));

  private static Stack stack;
  private static KubernetesClient client;

  @BeforeAll
  static void published() {
    stack = STACK.get();
    client = stack.client;
    await()
        .atMost(Duration.ofSeconds(60))
        .untilAsserted(
            () -> {
              for (String node : List.of("node-a", "node-b", "node-c")) {
                assertThat(Dra.publishedDevices(client, node)).isEqualTo(DEVICES_PER_NODE);
              }
            });
  }

  @AfterEach
  void everythingGone() {
    String ns = stack.namespace;
    client.resources(ResourceClaim.class).inNamespace(ns).delete();
    // one by one: deleting a burst's pods in one request can outlast the client's timeout when the
    // machine is loaded
    for (Pod pod : client.pods().inNamespace(ns).list().getItems()) {
      client.resource(pod).delete();
    }
    await()
        .atMost(Duration.ofSeconds(120))
        .untilAsserted(
            () -> {
              assertThat(client.pods().inNamespace(ns).list().getItems()).isEmpty();
              assertThat(client.resources(ResourceClaim.class).inNamespace(ns).list().getItems())
                  .isEmpty();
            });
  }

  @Test
  void podsSharingClaimsInABurstNeverGetADeviceOfAnotherClaim() throws Exception {
    for (int burst = 0; burst < BURSTS; burst++) {
      String ns = stack.namespace;
      try (AllocationInvariants invariants = new AllocationInvariants(client, ns, Stack.DRIVER)) {
        for (int c = 0; c < CLAIMS; c++) {
          client.resource(Dra.claim(ns, claimName(burst, c), KdraChart.GPU_CLASS, 1)).create();
        }
        List<Pod> pods = createInOneBurst(ns, burst);
        await()
            .atMost(Duration.ofSeconds(120))
            .until(() -> !invariants.violations.isEmpty() || bound(ns) == pods.size());
        assertThat(invariants.violations).as("burst %d", burst).isEmpty();
        for (Pod pod : pods) {
          Pod now = Dra.get(client, pod);
          String node = now.getSpec().getNodeName();
          assertThat(node).as("pod %s bound", pod.getMetadata().getName()).isNotNull();
          ResourceClaim claim =
              client
                  .resources(ResourceClaim.class)
                  .inNamespace(ns)
                  .withName(pod.getSpec().getResourceClaims().get(0).getResourceClaimName())
                  .get();
          assertThat(Dra.devices(claim))
              .as("claim %s of pod %s on %s", claim.getMetadata().getName(), pod, node)
              .singleElement()
              .asString()
              .startsWith(node + "/");
          assertThat(claim.getStatus().getReservedFor())
              .extracting(ResourceClaimConsumerReference::getUid)
              .contains(now.getMetadata().getUid());
        }
      }
      everythingGone();
    }
  }

  /** {@value #PODS_PER_CLAIM} pods per claim, created by several threads at once. */
  private static List<Pod> createInOneBurst(String ns, int burst) throws Exception {
    ExecutorService creators = Executors.newFixedThreadPool(8);
    try {
      List<Future<Pod>> created = new ArrayList<>();
      for (int i = 0; i < CLAIMS * PODS_PER_CLAIM; i++) {
        String pod = String.format("shared-%d-%02d", burst, i);
        String claim = claimName(burst, i / PODS_PER_CLAIM);
        created.add(
            creators.submit(() -> client.resource(Dra.podWithClaim(ns, pod, claim)).create()));
      }
      List<Pod> pods = new ArrayList<>();
      for (Future<Pod> f : created) {
        pods.add(f.get());
      }
      return pods;
    } finally {
      creators.shutdown();
    }
  }

  private static String claimName(int burst, int claim) {
    return "shared-" + burst + "-" + claim;
  }

  private static long bound(String ns) {
    return client.pods().inNamespace(ns).list().getItems().stream()
        .filter(p -> p.getSpec().getNodeName() != null)
        .count();
  }
}
