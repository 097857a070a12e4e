package io.kdra.claimcontroller.scheduling;

import static io.kdra.claimcontroller.domain.K.NS;
import static org.assertj.core.api.Assertions.assertThat;

import io.fabric8.kubernetes.api.model.Node;
import io.fabric8.kubernetes.api.model.NodeBuilder;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.PodBuilder;
import io.fabric8.kubernetes.api.model.Quantity;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.server.mock.EnableKubernetesMockClient;
import io.kdra.claimcontroller.domain.K;
import io.kdra.claimcontroller.domain.TemplateMode;
import io.kdra.claimcontroller.k8s.ClaimWriter;
import io.kdra.claimcontroller.k8s.PodBinder;
import io.kdra.claimcontroller.k8s.PodWriter;
import io.kdra.events.EventRecorder;
import java.time.Clock;
import java.util.function.UnaryOperator;
import org.junit.jupiter.api.Test;

/**
 * The soft rules, end to end against the fabric8 mock API server: among the nodes a pod may use,
 * the one kube-scheduler's default scores rank highest wins, with claims to allocate too.
 */
@EnableKubernetesMockClient(crud = true)
class ScoringSchedulingTest {

  KubernetesClient client;

  final PodBinder binder =
      (pod, node) ->
          client
              .pods()
              .inNamespace(NS)
              .withName(pod.getMetadata().getName())
              .edit(p -> new PodBuilder(p).editSpec().withNodeName(node).endSpec().build());

  FakeAllocator allocator = new FakeAllocator(2);

  PodScheduling scheduling() {
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

  void node(String name, String... labels) {
    NodeBuilder b =
        new NodeBuilder(K.readyNode(name))
            .editMetadata()
            .addToLabels("kubernetes.io/hostname", name)
            .endMetadata();
    for (int i = 0; i + 1 < labels.length; i += 2) {
      b.editMetadata().addToLabels(labels[i], labels[i + 1]).endMetadata();
    }
    Node node = b.build();
    client.nodes().resource(node).create();
  }

  Pod create(Pod p) {
    return client.resource(p).create();
  }

  static PodBuilder prefersSsd(PodBuilder b) {
    return b.editSpec()
        .withNewAffinity()
        .withNewNodeAffinity()
        .addNewPreferredDuringSchedulingIgnoredDuringExecution()
        .withWeight(10)
        .withNewPreference()
        .addNewMatchExpression()
        .withKey("disk")
        .withOperator("In")
        .withValues("ssd")
        .endMatchExpression()
        .endPreference()
        .endPreferredDuringSchedulingIgnoredDuringExecution()
        .endNodeAffinity()
        .endAffinity()
        .endSpec();
  }

  static PodBuilder spreadAnyway(PodBuilder b) {
    return b.editMetadata()
        .addToLabels("app", "web")
        .endMetadata()
        .editSpec()
        .addNewTopologySpreadConstraint()
        .withMaxSkew(1)
        .withTopologyKey("kubernetes.io/hostname")
        .withWhenUnsatisfiable("ScheduleAnyway")
        .withNewLabelSelector()
        .addToMatchLabels("app", "web")
        .endLabelSelector()
        .endTopologySpreadConstraint()
        .endSpec();
  }

  Pod pod(String name, UnaryOperator<PodBuilder> spec) {
    return create(spec.apply(K.pod(name)).build());
  }

  @Test
  void preferredNodeAffinityPutsThePodOnThePreferredNode() {
    node("node-a");
    node("node-b", "disk", "ssd");
    assertThat(scheduling().schedule(pod("web", ScoringSchedulingTest::prefersSsd)))
        .isEqualTo(new Outcome.Bound("node-b"));
  }

  @Test
  void preferredNodeAffinityAlsoChoosesAmongTheNodesWhereTheClaimsFit() {
    node("node-a");
    node("node-b", "disk", "ssd");
    client.resource(K.claim("gpu").build()).create();
    Pod pod = create(prefersSsd(new PodBuilder(K.podWithClaim("web", "gpu", "gpu"))).build());
    assertThat(scheduling().schedule(pod)).isEqualTo(new Outcome.Bound("node-b"));
    assertThat(
            client
                .resources(io.fabric8.kubernetes.api.model.resource.v1.ResourceClaim.class)
                .inNamespace(NS)
                .withName("gpu")
                .get()
                .getStatus()
                .getAllocation()
                .getDevices()
                .getResults())
        .singleElement()
        .satisfies(r -> assertThat(r.getPool()).isEqualTo("node-b"));
  }

  @Test
  void aPreferredNodeWhoseDevicesAreTakenLeavesTheClaimsOnTheNextBest() {
    allocator = new FakeAllocator(1);
    node("node-a");
    node("node-b", "disk", "ssd");
    client.resource(K.claim("gpu-1").build()).create();
    client.resource(K.claim("gpu-2").build()).create();
    PodScheduling s = scheduling();
    Pod first = create(prefersSsd(new PodBuilder(K.podWithClaim("web-1", "gpu", "gpu-1"))).build());
    assertThat(s.schedule(first)).isEqualTo(new Outcome.Bound("node-b"));
    Pod second =
        create(prefersSsd(new PodBuilder(K.podWithClaim("web-2", "gpu", "gpu-2"))).build());
    assertThat(s.schedule(second)).isEqualTo(new Outcome.Bound("node-a"));
  }

  @Test
  void scheduleAnywaySpreadPutsTheSecondReplicaOnTheOtherNode() {
    node("node-a");
    node("node-b");
    PodScheduling s = scheduling();
    // node-b is a little busier with another workload: by resources alone node-a would win again
    Pod other =
        create(
            K.pod("other")
                .editSpec()
                .withNodeName("node-b")
                .editFirstContainer()
                .withNewResources()
                .addToRequests("cpu", new Quantity("200m"))
                .addToRequests("memory", new Quantity("400Mi"))
                .endResources()
                .endContainer()
                .endSpec()
                .build());
    assertThat(other.getSpec().getNodeName()).isEqualTo("node-b");
    assertThat(s.schedule(pod("web-1", ScoringSchedulingTest::spreadAnyway)))
        .isEqualTo(new Outcome.Bound("node-a"));
    assertThat(s.schedule(pod("web-2", ScoringSchedulingTest::spreadAnyway)))
        .isEqualTo(new Outcome.Bound("node-b"));
  }

  @Test
  void withoutSoftRulesTheEmptierNodeWins() {
    node("node-a");
    node("node-b");
    create(
        K.pod("other")
            .editSpec()
            .withNodeName("node-a")
            .editFirstContainer()
            .withNewResources()
            .addToRequests("cpu", new Quantity("1"))
            .endResources()
            .endContainer()
            .endSpec()
            .build());
    assertThat(scheduling().schedule(pod("web", b -> b))).isEqualTo(new Outcome.Bound("node-b"));
  }
}
