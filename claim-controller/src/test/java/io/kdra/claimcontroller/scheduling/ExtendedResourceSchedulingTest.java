package io.kdra.claimcontroller.scheduling;

import static io.kdra.claimcontroller.domain.K.NS;
import static org.assertj.core.api.Assertions.assertThat;

import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.PodBuilder;
import io.fabric8.kubernetes.api.model.Quantity;
import io.fabric8.kubernetes.api.model.resource.v1.DeviceClassBuilder;
import io.fabric8.kubernetes.api.model.resource.v1.DeviceRequestAllocationResult;
import io.fabric8.kubernetes.api.model.resource.v1.ResourceClaim;
import io.fabric8.kubernetes.api.model.resource.v1.ResourceClaimBuilder;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientException;
import io.fabric8.kubernetes.client.server.mock.EnableKubernetesMockClient;
import io.kdra.claimcontroller.domain.K;
import io.kdra.claimcontroller.domain.Kdra;
import io.kdra.claimcontroller.domain.TemplateMode;
import io.kdra.claimcontroller.domain.Upstream;
import io.kdra.claimcontroller.k8s.ClaimWriter;
import io.kdra.claimcontroller.k8s.PodBinder;
import io.kdra.claimcontroller.k8s.PodWriter;
import io.kdra.core.alloc.AllocatorFeatures;
import io.kdra.core.alloc.AllocatorOptions;
import io.kdra.core.extended.ExtendedResourceClaims;
import io.kdra.core.testing.AllocFixtures;
import io.kdra.events.EventRecorder;
import java.time.Clock;
import java.util.List;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * Extended resources served by DRA (KEP-5004) through a scheduling attempt, against the fabric8
 * mock API server with dra-core's allocator: the special claim as kube-scheduler creates it, the
 * pod's status, device-plugin nodes, and the undoing of an attempt.
 */
@EnableKubernetesMockClient(crud = true)
class ExtendedResourceSchedulingTest {

  static final String GPU = "gpu.example.com/gpu";

  KubernetesClient client;
  ApiView view;
  PodBinder binder;

  @BeforeEach
  void setUp() {
    view = new ApiView(client);
    binder =
        (pod, node) ->
            client
                .pods()
                .inNamespace(NS)
                .withName(pod.getMetadata().getName())
                .edit(p -> new PodBuilder(p).editSpec().withNodeName(node).endSpec().build());
    client
        .resource(
            new DeviceClassBuilder(AllocFixtures.deviceClass("gpu"))
                .editSpec()
                .withExtendedResourceName(GPU)
                .endSpec()
                .build())
        .create();
  }

  PodScheduling scheduling(PodBinder b) {
    return new PodScheduling(
        view,
        new RecentWrites(),
        new PodScheduling.Writers(
            new ClaimWriter(client, K.SCHEDULER, 3),
            new PodWriter(client, 3, Clock.systemUTC()),
            b,
            new EventRecorder(client, K.SCHEDULER, Clock.systemUTC())),
        new DraCorePodAllocator(
            AllocatorOptions.defaults(AllocatorFeatures.defaults(), () -> "share")),
        PodScheduling.Settings.of(TemplateMode.OWN, ClaimTracer.NOOP));
  }

  void draNode(String node, int devices) {
    client.nodes().resource(K.readyNode(node)).create();
    io.fabric8.kubernetes.api.model.resource.v1.Device[] ds =
        new io.fabric8.kubernetes.api.model.resource.v1.Device[devices];
    for (int i = 0; i < devices; i++) {
      ds[i] = AllocFixtures.device("gpu-" + i).build();
    }
    client.resource(AllocFixtures.slice(node + "-gpu", node, ds).slice()).create();
  }

  void pluginNode(String node, int gpus) {
    client
        .nodes()
        .resource(
            K.node(node)
                .editStatus()
                .addToAllocatable(GPU, new Quantity(String.valueOf(gpus)))
                .endStatus()
                .build())
        .create();
  }

  /** A device-plugin-style pod: {@code limits: {gpu.example.com/gpu: n}}, no claims. */
  Pod gpuPod(String name, int n) {
    return client
        .resource(
            K.pod(name)
                .editSpec()
                .editFirstContainer()
                .withNewResources()
                .addToLimits(GPU, new Quantity(String.valueOf(n)))
                .endResources()
                .endContainer()
                .endSpec()
                .build())
        .create();
  }

  Pod get(String name) {
    return client.pods().inNamespace(NS).withName(name).get();
  }

  List<ResourceClaim> claims() {
    return client.resources(ResourceClaim.class).inNamespace(NS).list().getItems();
  }

  @Test
  void theSpecialClaimGoesToTheHighestScoringNodeNotTheFirstByName() {
    draNode("node-a", 1);
    draNode("node-b", 1);
    // node-a is busier: the default scores (LeastAllocated, BalancedAllocation) rank node-b first
    client
        .resource(
            K.pod("load")
                .editSpec()
                .withNodeName("node-a")
                .editFirstContainer()
                .withNewResources()
                .addToRequests("cpu", new Quantity("2"))
                .endResources()
                .endContainer()
                .endSpec()
                .build())
        .create();

    assertThat(scheduling(binder).schedule(gpuPod("web", 1)))
        .isEqualTo(new Outcome.Bound("node-b"));
  }

  @Test
  void theSpecialClaimIsCreatedAllocatedReservedAndRecordedAsKubeSchedulerDoes() {
    draNode("node-a", 3);
    Pod pod = gpuPod("web", 2);

    assertThat(scheduling(binder).schedule(pod)).isEqualTo(new Outcome.Bound("node-a"));

    ResourceClaim claim = claims().get(0);
    assertThat(claims()).hasSize(1);
    assertThat(claim.getMetadata().getName()).startsWith("web-extended-resources-");
    assertThat(claim.getMetadata().getAnnotations())
        .containsEntry(ExtendedResourceClaims.ANNOTATION, "true")
        .containsEntry(Kdra.SCHEDULER_ANNOTATION, K.SCHEDULER);
    assertThat(claim.getMetadata().getOwnerReferences())
        .singleElement()
        .satisfies(
            o -> {
              assertThat(o.getKind()).isEqualTo("Pod");
              assertThat(o.getUid()).isEqualTo(pod.getMetadata().getUid());
              assertThat(o.getController()).isTrue();
            });
    assertThat(claim.getMetadata().getFinalizers()).containsExactly(Upstream.FINALIZER);
    assertThat(claim.getSpec().getDevices().getRequests())
        .singleElement()
        .satisfies(
            r -> {
              assertThat(r.getName()).isEqualTo("container-0-request-0");
              assertThat(r.getExactly().getDeviceClassName()).isEqualTo("gpu");
              assertThat(r.getExactly().getCount()).isEqualTo(2L);
            });
    assertThat(claim.getStatus().getAllocation().getDevices().getResults())
        .extracting(DeviceRequestAllocationResult::getRequest)
        .containsExactly("container-0-request-0", "container-0-request-0");
    assertThat(claim.getStatus().getReservedFor())
        .singleElement()
        .satisfies(r -> assertThat(r.getUid()).isEqualTo(pod.getMetadata().getUid()));
    Pod bound = get("web");
    assertThat(bound.getSpec().getNodeName()).isEqualTo("node-a");
    assertThat(bound.getStatus().getExtendedResourceClaimStatus())
        .satisfies(
            s -> {
              assertThat(s.getResourceClaimName()).isEqualTo(claim.getMetadata().getName());
              assertThat(s.getRequestMappings())
                  .singleElement()
                  .satisfies(
                      m -> {
                        assertThat(m.getContainerName()).isEqualTo("c");
                        assertThat(m.getResourceName()).isEqualTo(GPU);
                        assertThat(m.getRequestName()).isEqualTo("container-0-request-0");
                      });
            });
  }

  @Test
  void aNodeWhoseDevicePluginAdvertisesTheNameServesItWithoutAClaim() {
    pluginNode("node-a", 4);
    assertThat(scheduling(binder).schedule(gpuPod("web", 2)))
        .isEqualTo(new Outcome.Bound("node-a"));
    assertThat(claims()).isEmpty();
    assertThat(
            get("web").getStatus() == null
                || get("web").getStatus().getExtendedResourceClaimStatus() == null)
        .isTrue();
  }

  @Test
  void aFullDevicePluginNodeIsPassedOverForADraNode() {
    pluginNode("node-a", 1);
    draNode("node-b", 2);
    assertThat(scheduling(binder).schedule(gpuPod("web", 2)))
        .isEqualTo(new Outcome.Bound("node-b"));
    assertThat(claims())
        .singleElement()
        .satisfies(
            c -> assertThat(c.getStatus().getAllocation().getDevices().getResults()).hasSize(2));
  }

  @Test
  void tooFewDevicesLeavesThePodUnschedulableAndCreatesNothing() {
    draNode("node-a", 1);
    Outcome o = scheduling(binder).schedule(gpuPod("web", 2));
    assertThat(o).isInstanceOf(Outcome.Unschedulable.class);
    assertThat(claims()).isEmpty();
  }

  @Test
  void aResourceNoClassServesAndNoNodeAdvertisesIsInsufficient() {
    client.nodes().resource(K.readyNode("node-a")).create();
    Pod pod =
        client
            .resource(
                K.pod("web")
                    .editSpec()
                    .editFirstContainer()
                    .withNewResources()
                    .addToLimits("example.com/other", new Quantity("1"))
                    .endResources()
                    .endContainer()
                    .endSpec()
                    .build())
            .create();
    Outcome o = scheduling(binder).schedule(pod);
    assertThat(o).isInstanceOf(Outcome.Unschedulable.class);
    assertThat(((Outcome.Unschedulable) o).message())
        .isEqualTo("0/1 nodes are available: 1 Insufficient example.com/other.");
  }

  @Test
  void aFailedBindingDeletesTheClaimItCreated() {
    draNode("node-a", 2);
    PodBinder gone =
        (pod, node) -> {
          throw new KubernetesClientException("gone", 404, null);
        };
    PodScheduling s = scheduling(gone);
    assertThat(s.schedule(gpuPod("web", 2))).isInstanceOf(Outcome.Waiting.class);
    assertThat(claims()).isEmpty();
    // the devices are free again for the next attempt
    assertThat(s.schedule(get("web"))).isInstanceOf(Outcome.Waiting.class);
  }

  @Test
  void aClaimLeftByAnEarlierAttemptIsDeletedAndThePodScheduledAgain() {
    draNode("node-a", 2);
    Pod pod = gpuPod("web", 2);
    client
        .resource(
            new ResourceClaimBuilder(
                    ExtendedResourceClaims.desired(
                        pod, new ExtendedResourceClaims.Spec(List.of(), List.of()), "x"))
                .editMetadata()
                .withName("web-extended-resources-old")
                .withUid(null)
                .withGenerateName(null)
                .addToFinalizers(Upstream.FINALIZER)
                .endMetadata()
                .build())
        .create();
    PodScheduling s = scheduling(binder);

    assertThat(s.schedule(pod)).isInstanceOf(Outcome.Retry.class);
    assertThat(claims()).isEmpty();
    assertThat(s.schedule(get("web"))).isEqualTo(new Outcome.Bound("node-a"));
    assertThat(claims())
        .singleElement()
        .satisfies(
            c -> assertThat(c.getMetadata().getName()).isNotEqualTo("web-extended-resources-old"));
  }
}
