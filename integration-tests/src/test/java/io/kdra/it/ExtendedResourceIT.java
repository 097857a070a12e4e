package io.kdra.it;

import static io.kdra.it.nodes.SimulatedNode.oneA100;
import static io.kdra.it.nodes.SimulatedNode.twoL4s;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.PodSpec;
import io.fabric8.kubernetes.api.model.PodSpecBuilder;
import io.fabric8.kubernetes.api.model.Quantity;
import io.fabric8.kubernetes.api.model.apps.DeploymentBuilder;
import io.fabric8.kubernetes.api.model.resource.v1.DeviceClass;
import io.fabric8.kubernetes.api.model.resource.v1.DeviceClassBuilder;
import io.fabric8.kubernetes.api.model.resource.v1.ResourceClaim;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.kdra.it.controlplane.ControlPlane;
import io.kdra.it.services.Dra;
import io.kdra.it.services.KdraStack;
import io.kdra.it.services.Stack;
import java.time.Duration;
import java.util.List;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * Extended resources served by DRA (KEP-5004, {@code DRAExtendedResource}, beta and on by default
 * in 1.36), on the full control plane: a device-plugin-style Deployment ({@code resources.limits:
 * {gpu.kdra.io/gpu: 2}}, no resource claims) whose pods name our scheduler gets two GPUs from the
 * DeviceClass that names {@code gpu.kdra.io/gpu}. The special claim and the pod's {@code
 * status.extendedResourceClaimStatus} are as kube-scheduler writes them, the kubelet prepares the
 * claim named there, and scaling to 0 frees the devices.
 */
@ExtendWith(ControlPlane.class)
class ExtendedResourceIT {

  @RegisterExtension
  static final KdraStack STACK =
      KdraStack.nodes(twoL4s("node-a"), oneA100("node-b")).fullControlPlane();

  private static final Duration TIMEOUT = Duration.ofSeconds(120);
  private static final String RESOURCE = "gpu.kdra.io/gpu";

  private static Stack stack;
  private static KubernetesClient client;

  @BeforeAll
  static void classServesTheName() {
    stack = STACK.get();
    client = stack.client;
    DeviceClass created =
        stack.createClusterScoped(
            new DeviceClassBuilder(Dra.gpuClass("gpu-extended", null))
                .editSpec()
                .withExtendedResourceName(RESOURCE)
                .endSpec()
                .build());
    // the API server keeps the field only while the feature gate is on
    assertThat(created.getSpec().getExtendedResourceName()).isEqualTo(RESOURCE);
    await()
        .atMost(Duration.ofSeconds(60))
        .untilAsserted(
            () -> {
              assertThat(Dra.publishedDevices(client, "node-a")).isEqualTo(2);
              assertThat(Dra.publishedDevices(client, "node-b")).isEqualTo(1);
            });
  }

  @AfterEach
  void nothingLeft() {
    client.apps().deployments().inNamespace(stack.namespace).delete();
    await()
        .atMost(TIMEOUT)
        .untilAsserted(
            () ->
                assertThat(
                        client.apps().replicaSets().inNamespace(stack.namespace).list().getItems())
                    .isEmpty());
    stack.deletePodsAndAwaitClaimsGone();
  }

  @Test
  void aDevicePluginStyleDeploymentGetsItsGpusAndScalingToZeroFreesThem() {
    PodSpec spec =
        new PodSpecBuilder()
            .withSchedulerName(Stack.SCHEDULER)
            .addNewContainer()
            .withName("cuda")
            .withImage("registry.invalid/cuda:unused")
            .withNewResources()
            .addToLimits(RESOURCE, new Quantity("2"))
            .endResources()
            .endContainer()
            .build();
    client
        .resource(
            new DeploymentBuilder()
                .withNewMetadata()
                .withName("train")
                .withNamespace(stack.namespace)
                .endMetadata()
                .withNewSpec()
                .withReplicas(1)
                .withNewSelector()
                .addToMatchLabels("app", "train")
                .endSelector()
                .withNewTemplate()
                .withNewMetadata()
                .addToLabels("app", "train")
                .endMetadata()
                .withSpec(spec)
                .endTemplate()
                .endSpec()
                .build())
        .create();

    Pod pod = awaitPrepared();
    // the only node with two GPUs
    assertThat(pod.getSpec().getNodeName()).isEqualTo("node-a");
    // the manifest is unchanged: no claims in the spec
    assertThat(pod.getSpec().getResourceClaims()).isEmpty();
    var status = pod.getStatus().getExtendedResourceClaimStatus();
    assertThat(status.getRequestMappings())
        .singleElement()
        .satisfies(
            m -> {
              assertThat(m.getContainerName()).isEqualTo("cuda");
              assertThat(m.getResourceName()).isEqualTo(RESOURCE);
              assertThat(m.getRequestName()).isEqualTo("container-0-request-0");
            });
    ResourceClaim claim =
        client
            .resources(ResourceClaim.class)
            .inNamespace(stack.namespace)
            .withName(status.getResourceClaimName())
            .get();
    assertThat(claim.getMetadata().getName())
        .startsWith(pod.getMetadata().getName() + "-extended-resources-");
    assertThat(claim.getMetadata().getAnnotations())
        .containsEntry("resource.kubernetes.io/extended-resource-claim", "true");
    assertThat(claim.getMetadata().getOwnerReferences())
        .singleElement()
        .satisfies(
            o -> {
              assertThat(o.getKind()).isEqualTo("Pod");
              assertThat(o.getUid()).isEqualTo(pod.getMetadata().getUid());
              assertThat(o.getController()).isTrue();
            });
    assertThat(claim.getSpec().getDevices().getRequests())
        .singleElement()
        .satisfies(
            r -> {
              assertThat(r.getName()).isEqualTo("container-0-request-0");
              assertThat(r.getExactly().getDeviceClassName()).isEqualTo("gpu-extended");
              assertThat(r.getExactly().getAllocationMode()).isEqualTo("ExactCount");
              assertThat(r.getExactly().getCount()).isEqualTo(2L);
            });
    assertThat(Dra.devices(claim)).containsExactlyInAnyOrder("node-a/gpu-0", "node-a/gpu-1");
    assertThat(claim.getMetadata().getFinalizers())
        .contains("resource.kubernetes.io/delete-protection");
    assertThat(claim.getStatus().getReservedFor())
        .singleElement()
        .satisfies(r -> assertThat(r.getUid()).isEqualTo(pod.getMetadata().getUid()));
    assertThat(stack.nodes.kubelet("node-a").prepared(pod).deviceCdiIds()).hasSize(2);

    scale(0);
    await()
        .atMost(TIMEOUT)
        .untilAsserted(
            () -> {
              assertThat(pods()).isEmpty();
              assertThat(claims()).isEmpty();
              assertThat(stack.nodes.kubelet("node-a").prepared()).isEmpty();
            });

    // the devices are free: the next replica gets them again
    scale(1);
    Pod again = awaitPrepared();
    assertThat(again.getMetadata().getUid()).isNotEqualTo(pod.getMetadata().getUid());
    assertThat(Dra.devices(claims().get(0)))
        .containsExactlyInAnyOrder("node-a/gpu-0", "node-a/gpu-1");
  }

  @Test
  void aReplicaThatNoNodeCanServeStaysPendingWithoutAClaim() {
    PodSpec spec =
        new PodSpecBuilder()
            .withSchedulerName(Stack.SCHEDULER)
            .addNewContainer()
            .withName("cuda")
            .withImage("registry.invalid/cuda:unused")
            .withNewResources()
            .addToLimits(RESOURCE, new Quantity("3"))
            .endResources()
            .endContainer()
            .build();
    Pod pod =
        client
            .resource(
                new io.fabric8.kubernetes.api.model.PodBuilder()
                    .withNewMetadata()
                    .withName("too-big")
                    .withNamespace(stack.namespace)
                    .endMetadata()
                    .withSpec(spec)
                    .build())
            .create();
    await()
        .atMost(TIMEOUT)
        .untilAsserted(
            () ->
                assertThat(Dra.get(client, pod).getStatus().getConditions())
                    .anySatisfy(
                        c -> {
                          assertThat(c.getType()).isEqualTo("PodScheduled");
                          assertThat(c.getReason()).isEqualTo("Unschedulable");
                        }));
    assertThat(claims()).isEmpty();
    assertThat(Dra.get(client, pod).getSpec().getNodeName()).isNull();
  }

  /**
   * The same pod for each scheduler: kube-scheduler's special claim and pod status are the
   * reference for ours (an init container that reuses a container's request, a resource whose index
   * among the container's sorted request names is 1).
   */
  @Test
  void ourClaimAndPodStatusAreTheOnesKubeSchedulerWrites() {
    Pod ours = client.resource(twoContainerPod("ours", Stack.SCHEDULER)).create();
    Pod upstream = client.resource(twoContainerPod("upstream", "default-scheduler")).create();
    for (Pod p : List.of(ours, upstream)) {
      await()
          .atMost(TIMEOUT)
          .untilAsserted(
              () -> {
                Pod now = Dra.get(client, p);
                assertThat(now.getSpec().getNodeName()).isNotNull();
                assertThat(now.getStatus().getExtendedResourceClaimStatus()).isNotNull();
              });
    }
    Pod oursNow = Dra.get(client, ours);
    Pod upstreamNow = Dra.get(client, upstream);
    assertThat(oursNow.getStatus().getExtendedResourceClaimStatus().getRequestMappings())
        .isEqualTo(upstreamNow.getStatus().getExtendedResourceClaimStatus().getRequestMappings());
    ResourceClaim oursClaim = claimOf(oursNow);
    ResourceClaim upstreamClaim = claimOf(upstreamNow);
    assertThat(oursClaim.getSpec()).isEqualTo(upstreamClaim.getSpec());
    assertThat(oursClaim.getSpec().getDevices().getRequests())
        .extracting(r -> r.getName())
        .containsExactly("container-1-request-1");
    assertThat(oursClaim.getMetadata().getAnnotations())
        .containsEntry("resource.kubernetes.io/extended-resource-claim", "true");
    assertThat(upstreamClaim.getMetadata().getAnnotations())
        .containsEntry("resource.kubernetes.io/extended-resource-claim", "true");
    assertThat(oursClaim.getMetadata().getOwnerReferences())
        .singleElement()
        .usingRecursiveComparison()
        .ignoringFields("name", "uid")
        .isEqualTo(upstreamClaim.getMetadata().getOwnerReferences().get(0));
    assertThat(oursClaim.getMetadata().getFinalizers())
        .isEqualTo(upstreamClaim.getMetadata().getFinalizers());
    assertThat(oursClaim.getStatus().getReservedFor())
        .singleElement()
        .satisfies(r -> assertThat(r.getUid()).isEqualTo(ours.getMetadata().getUid()));
  }

  private static Pod twoContainerPod(String name, String scheduler) {
    return new io.fabric8.kubernetes.api.model.PodBuilder()
        .withNewMetadata()
        .withName(name)
        .withNamespace(stack.namespace)
        .endMetadata()
        .withNewSpec()
        .withSchedulerName(scheduler)
        .addNewInitContainer()
        .withName("setup")
        .withImage("registry.invalid/setup:unused")
        .withNewResources()
        .addToLimits(RESOURCE, new Quantity("1"))
        .endResources()
        .endInitContainer()
        .addNewContainer()
        .withName("serve")
        .withImage("registry.invalid/cuda:unused")
        .withNewResources()
        .addToRequests("cpu", new Quantity("10m"))
        .addToLimits(RESOURCE, new Quantity("1"))
        .endResources()
        .endContainer()
        .endSpec()
        .build();
  }

  private ResourceClaim claimOf(Pod pod) {
    return client
        .resources(ResourceClaim.class)
        .inNamespace(stack.namespace)
        .withName(pod.getStatus().getExtendedResourceClaimStatus().getResourceClaimName())
        .get();
  }

  private Pod awaitPrepared() {
    return await()
        .atMost(TIMEOUT)
        .until(
            () -> {
              List<Pod> ps = pods();
              if (ps.size() != 1
                  || ps.get(0).getSpec().getNodeName() == null
                  || ps.get(0).getStatus().getExtendedResourceClaimStatus() == null) {
                return null;
              }
              Pod p = ps.get(0);
              return stack.nodes.kubelet(p.getSpec().getNodeName()).prepared(p) == null ? null : p;
            },
            p -> p != null);
  }

  private void scale(int replicas) {
    client.apps().deployments().inNamespace(stack.namespace).withName("train").scale(replicas);
  }

  private List<Pod> pods() {
    return client
        .pods()
        .inNamespace(stack.namespace)
        .withLabel("app", "train")
        .list()
        .getItems()
        .stream()
        .filter(p -> p.getMetadata().getDeletionTimestamp() == null)
        .toList();
  }

  private List<ResourceClaim> claims() {
    return client.resources(ResourceClaim.class).inNamespace(stack.namespace).list().getItems();
  }
}
