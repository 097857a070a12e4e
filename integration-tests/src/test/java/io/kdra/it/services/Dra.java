package io.kdra.it.services;

import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.PodBuilder;
import io.fabric8.kubernetes.api.model.PodResourceClaimStatus;
import io.fabric8.kubernetes.api.model.PodSpec;
import io.fabric8.kubernetes.api.model.apps.Deployment;
import io.fabric8.kubernetes.api.model.apps.DeploymentBuilder;
import io.fabric8.kubernetes.api.model.resource.v1.DeviceClass;
import io.fabric8.kubernetes.api.model.resource.v1.DeviceClassBuilder;
import io.fabric8.kubernetes.api.model.resource.v1.ResourceClaim;
import io.fabric8.kubernetes.api.model.resource.v1.ResourceClaimTemplate;
import io.fabric8.kubernetes.api.model.resource.v1.ResourceClaimTemplateBuilder;
import io.fabric8.kubernetes.api.model.resource.v1.ResourceSlice;
import io.fabric8.kubernetes.client.KubernetesClient;
import java.util.List;
import java.util.Objects;

/** Builders and look-ups the scenarios share. */
public final class Dra {
  private Dra() {}

  /** A DeviceClass selecting kdra GPUs that also pass {@code extraCel} (may be null). */
  public static DeviceClass gpuClass(String name, String extraCel) {
    String cel =
        "device.driver == \""
            + Stack.DRIVER
            + "\" && device.attributes[\""
            + Stack.DRIVER
            + "\"].type == \"gpu\""
            + (extraCel == null ? "" : " && " + extraCel);
    return new DeviceClassBuilder()
        .withNewMetadata()
        .withName(name)
        .endMetadata()
        .withNewSpec()
        .addNewSelector()
        .withNewCel()
        .withExpression(cel)
        .endCel()
        .endSelector()
        .endSpec()
        .build();
  }

  /** A template with one request {@code gpu} for {@code count} devices of {@code deviceClass}. */
  public static ResourceClaimTemplate template(
      String namespace, String name, String deviceClass, long count) {
    return new ResourceClaimTemplateBuilder()
        .withNewMetadata()
        .withName(name)
        .withNamespace(namespace)
        .endMetadata()
        .withNewSpec()
        .withNewSpec()
        .withNewDevices()
        .addNewRequest()
        .withName("gpu")
        .withNewExactly()
        .withDeviceClassName(deviceClass)
        .withAllocationMode("ExactCount")
        .withCount(count)
        .endExactly()
        .endRequest()
        .endDevices()
        .endSpec()
        .endSpec()
        .build();
  }

  /** A pod for the claim-controller with one claim entry {@code gpu} from {@code template}. */
  public static Pod podWithTemplate(String namespace, String name, String template) {
    return new PodBuilder()
        .withNewMetadata()
        .withName(name)
        .withNamespace(namespace)
        .endMetadata()
        .withNewSpec()
        .withSchedulerName(Stack.SCHEDULER)
        .addNewResourceClaim()
        .withName("gpu")
        .withResourceClaimTemplateName(template)
        .endResourceClaim()
        .addNewContainer()
        .withName("app")
        .withImage("app:1")
        .withNewResources()
        .addNewClaim()
        .withName("gpu")
        .endClaim()
        .addToRequests("cpu", new io.fabric8.kubernetes.api.model.Quantity("100m"))
        .endResources()
        .endContainer()
        .endSpec()
        .build();
  }

  /** A claim with one request {@code gpu} for {@code count} devices of {@code deviceClass}. */
  public static ResourceClaim claim(String namespace, String name, String deviceClass, long count) {
    return new io.fabric8.kubernetes.api.model.resource.v1.ResourceClaimBuilder()
        .withNewMetadata()
        .withName(name)
        .withNamespace(namespace)
        .endMetadata()
        .withNewSpec()
        .withNewDevices()
        .addNewRequest()
        .withName("gpu")
        .withNewExactly()
        .withDeviceClassName(deviceClass)
        .withAllocationMode("ExactCount")
        .withCount(count)
        .endExactly()
        .endRequest()
        .endDevices()
        .endSpec()
        .build();
  }

  /** A pod for the claim-controller with one claim entry {@code gpu} naming {@code claim}. */
  public static Pod podWithClaim(String namespace, String name, String claim) {
    Pod pod = podWithTemplate(namespace, name, "unused");
    pod.getSpec().getResourceClaims().get(0).setResourceClaimTemplateName(null);
    pod.getSpec().getResourceClaims().get(0).setResourceClaimName(claim);
    return pod;
  }

  /** The claim generated for the pod's entry {@code entry}, or null. */
  public static ResourceClaim claimOf(KubernetesClient client, Pod pod, String entry) {
    Pod current =
        client
            .pods()
            .inNamespace(pod.getMetadata().getNamespace())
            .withName(pod.getMetadata().getName())
            .get();
    if (current == null || current.getStatus() == null) {
      return null;
    }
    return current.getStatus().getResourceClaimStatuses().stream()
        .filter(s -> s.getName().equals(entry))
        .map(PodResourceClaimStatus::getResourceClaimName)
        .filter(Objects::nonNull)
        .map(
            n ->
                client
                    .resources(ResourceClaim.class)
                    .inNamespace(pod.getMetadata().getNamespace())
                    .withName(n)
                    .get())
        .filter(Objects::nonNull)
        .findFirst()
        .orElse(null);
  }

  /** {@code pool/device} of every allocated device of the claim. */
  public static List<String> devices(ResourceClaim claim) {
    if (claim == null || claim.getStatus() == null || claim.getStatus().getAllocation() == null) {
      return List.of();
    }
    return claim.getStatus().getAllocation().getDevices().getResults().stream()
        .map(r -> r.getPool() + "/" + r.getDevice())
        .toList();
  }

  /** Devices published for {@code node} by the kdra driver. */
  public static long publishedDevices(KubernetesClient client, String node) {
    return publishedDevices(client, Stack.DRIVER, node);
  }

  /** Devices published for {@code node} by {@code driver}. */
  public static long publishedDevices(KubernetesClient client, String driver, String node) {
    return client.resources(ResourceSlice.class).list().getItems().stream()
        .filter(s -> driver.equals(s.getSpec().getDriver()))
        .filter(s -> node.equals(s.getSpec().getNodeName()))
        .mapToLong(s -> s.getSpec().getDevices().size())
        .sum();
  }

  /** A Deployment of {@code replicas} pods labelled {@code app: <name>} with {@code spec}. */
  public static Deployment deployment(String namespace, String name, int replicas, PodSpec spec) {
    return new DeploymentBuilder()
        .withNewMetadata()
        .withName(name)
        .withNamespace(namespace)
        .endMetadata()
        .withNewSpec()
        .withReplicas(replicas)
        .withNewSelector()
        .addToMatchLabels("app", name)
        .endSelector()
        .withNewTemplate()
        .withNewMetadata()
        .addToLabels("app", name)
        .endMetadata()
        .withSpec(spec)
        .endTemplate()
        .endSpec()
        .build();
  }

  public static Pod get(KubernetesClient client, Pod pod) {
    return client
        .pods()
        .inNamespace(pod.getMetadata().getNamespace())
        .withName(pod.getMetadata().getName())
        .get();
  }
}
