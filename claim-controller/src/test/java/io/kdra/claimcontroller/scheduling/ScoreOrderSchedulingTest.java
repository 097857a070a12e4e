package io.kdra.claimcontroller.scheduling;

import static io.kdra.claimcontroller.domain.K.NS;
import static io.kdra.core.testing.AllocFixtures.DRIVER;
import static org.assertj.core.api.Assertions.assertThat;

import io.fabric8.kubernetes.api.model.NodeBuilder;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.PodBuilder;
import io.fabric8.kubernetes.api.model.Quantity;
import io.fabric8.kubernetes.api.model.resource.v1.ResourceClaim;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.server.mock.EnableKubernetesMockClient;
import io.kdra.claimcontroller.domain.K;
import io.kdra.claimcontroller.domain.TemplateMode;
import io.kdra.claimcontroller.k8s.ClaimWriter;
import io.kdra.claimcontroller.k8s.PodBinder;
import io.kdra.claimcontroller.k8s.PodWriter;
import io.kdra.core.alloc.AllocatorFeatures;
import io.kdra.core.alloc.AllocatorOptions;
import io.kdra.core.testing.AllocFixtures;
import io.kdra.events.EventRecorder;
import java.time.Clock;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/**
 * Pods with claims, end to end against the fabric8 mock API server: the allocator walks the nodes
 * highest score first, so its first fit is the scoring's choice and it is asked once; with {@code
 * firstAvailable} alternatives the DynamicResources score joins the weighted sum as kube-scheduler
 * 1.37 adds it (weight 2, normalised to the best node).
 */
@EnableKubernetesMockClient(crud = true)
class ScoreOrderSchedulingTest {

  KubernetesClient client;

  final PodBinder binder =
      (pod, node) ->
          client
              .pods()
              .inNamespace(NS)
              .withName(pod.getMetadata().getName())
              .edit(p -> new PodBuilder(p).editSpec().withNodeName(node).endSpec().build());

  PodScheduling scheduling(PodAllocator allocator) {
    return new PodScheduling(
        new ApiView(client),
        new RecentWrites(),
        new PodScheduling.Writers(
            new ClaimWriter(client, K.SCHEDULER, 3),
            new PodWriter(client, 3, Clock.systemUTC()),
            binder,
            new EventRecorder(client, K.SCHEDULER, Clock.systemUTC())),
        allocator,
        PodScheduling.Settings.of(TemplateMode.OWN, ClaimTracer.NOOP));
  }

  void node(String name) {
    client
        .nodes()
        .resource(
            new NodeBuilder(K.readyNode(name))
                .editMetadata()
                .addToLabels("kubernetes.io/hostname", name)
                .endMetadata()
                .build())
        .create();
  }

  /** A pod bound to {@code node} that requests {@code cpu}: it lowers the node's score. */
  void load(String node, String cpu) {
    client
        .resource(
            K.pod("load-" + node)
                .editSpec()
                .withNodeName(node)
                .editFirstContainer()
                .withNewResources()
                .addToRequests("cpu", new Quantity(cpu))
                .endResources()
                .endContainer()
                .endSpec()
                .build())
        .create();
  }

  Pod create(Pod p) {
    return client.resource(p).create();
  }

  @Test
  void theAllocatorIsAskedOnceAndItsFirstFitIsTheScoringsChoice() {
    // scores by free CPU: node-d > node-c > node-b > node-a; node-d's one device is taken, so the
    // best node where the claim fits is node-c, which name order would reach third
    for (String n : new String[] {"node-a", "node-b", "node-c", "node-d"}) {
      node(n);
    }
    load("node-a", "3");
    load("node-b", "2");
    load("node-c", "1");
    ResourceClaim taken = K.claim("taken").build();
    taken.setStatus(new io.fabric8.kubernetes.api.model.resource.v1.ResourceClaimStatus());
    taken.getStatus().setAllocation(FakeAllocator.result("node-d", "dev-0"));
    client.resource(taken).create();
    client.resource(K.claim("gpu").build()).create();
    FakeAllocator allocator = new FakeAllocator(1);

    Outcome o = scheduling(allocator).schedule(create(K.podWithClaim("web", "gpu", "gpu")));

    assertThat(o).isEqualTo(new Outcome.Bound("node-c"));
    assertThat(allocator.calls).as("allocator searches").isEqualTo(1);
  }

  /**
   * node-a has an L4 only, node-b an A100 and an L4; the claim prefers an A100. DynamicResources
   * scores node-b 2 x 100 and node-a 2 x 87 (raw 8 and 7, normalised to 8): node-b wins unless its
   * other scores trail by more than 26.
   */
  @ParameterizedTest(name = "node-b loaded with {0} CPU: {1}")
  @CsvSource({"400m, node-b", "3, node-a"})
  void theFirstChoicesScoreIsWeighedWithTheOthers(String loadOnB, String expected) {
    node("node-a");
    node("node-b");
    load("node-b", loadOnB);
    String model = "device.attributes[\"" + DRIVER + "\"].model == ";
    client.resource(AllocFixtures.deviceClass("a100", model + "\"A100\"")).create();
    client.resource(AllocFixtures.deviceClass("l4", model + "\"L4\"")).create();
    client
        .resource(
            AllocFixtures.slice("a", "node-a", AllocFixtures.gpu("l0", "L4", "24Gi", "p0")).build())
        .create();
    client
        .resource(
            AllocFixtures.slice(
                    "b",
                    "node-b",
                    AllocFixtures.gpu("x0", "A100", "40Gi", "p0"),
                    AllocFixtures.gpu("l0", "L4", "24Gi", "p0"))
                .build())
        .create();
    ResourceClaim claim =
        AllocFixtures.claim(
                "gpu",
                AllocFixtures.firstAvailable(
                    "gpu", AllocFixtures.sub("a100", "a100", 1), AllocFixtures.sub("l4", "l4", 1)))
            .build();
    claim.getMetadata().setNamespace(NS);
    client.resource(claim).create();
    PodScheduling s =
        scheduling(
            new DraCorePodAllocator(
                AllocatorOptions.defaults(AllocatorFeatures.defaults(), () -> "share")));

    assertThat(s.schedule(create(K.podWithClaim("web", "gpu", "gpu"))))
        .isEqualTo(new Outcome.Bound(expected));
  }
}
