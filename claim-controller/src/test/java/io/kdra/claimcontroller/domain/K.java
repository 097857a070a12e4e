package io.kdra.claimcontroller.domain;

import io.fabric8.kubernetes.api.model.Node;
import io.fabric8.kubernetes.api.model.NodeBuilder;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.PodBuilder;
import io.fabric8.kubernetes.api.model.Quantity;
import io.fabric8.kubernetes.api.model.resource.v1.ResourceClaim;
import io.fabric8.kubernetes.api.model.resource.v1.ResourceClaimBuilder;
import io.fabric8.kubernetes.api.model.resource.v1.ResourceClaimConsumerReferenceBuilder;
import io.fabric8.kubernetes.api.model.resource.v1.ResourceClaimTemplate;
import io.fabric8.kubernetes.api.model.resource.v1.ResourceClaimTemplateBuilder;

/** Tiny fixture factories for the controller's tests; each returns a fresh object. */
public final class K {

  public static final String NS = "ns";
  public static final String SCHEDULER = "dra-claim-controller";

  private K() {}

  /** Pending pod {@code ns/<name>} with UID {@code uid-<name>} and our scheduler name. */
  public static PodBuilder pod(String name) {
    return new PodBuilder()
        .withNewMetadata()
        .withNamespace(NS)
        .withName(name)
        .withUid("uid-" + name)
        .endMetadata()
        .withNewSpec()
        .withSchedulerName(SCHEDULER)
        .addNewContainer()
        .withName("c")
        .withImage("busybox")
        .endContainer()
        .endSpec();
  }

  /** A pod with one entry {@code entry} using template {@code template}. */
  public static Pod podWithTemplate(String name, String entry, String template) {
    return pod(name)
        .editSpec()
        .addNewResourceClaim()
        .withName(entry)
        .withResourceClaimTemplateName(template)
        .endResourceClaim()
        .endSpec()
        .build();
  }

  /**
   * Pod {@code ns/<name>} whose claim entry {@code entry} names the ResourceClaim {@code claim}.
   */
  public static Pod podWithClaim(String name, String entry, String claim) {
    return podWithClaims(name, entry, claim);
  }

  /** Pod {@code ns/<name>} with claim entries given as pairs: entry name, ResourceClaim name. */
  public static Pod podWithClaims(String name, String... entriesAndClaims) {
    if (entriesAndClaims.length % 2 != 0) {
      throw new IllegalArgumentException("pairs of entry and claim names expected");
    }
    var spec = pod(name).editSpec();
    for (int i = 0; i < entriesAndClaims.length; i += 2) {
      spec.addNewResourceClaim()
          .withName(entriesAndClaims[i])
          .withResourceClaimName(entriesAndClaims[i + 1])
          .endResourceClaim();
    }
    return spec.endSpec().build();
  }

  /** Template {@code ns/<name>} with one exact request for class {@code gpu}. */
  public static ResourceClaimTemplate template(String name) {
    return new ResourceClaimTemplateBuilder()
        .withNewMetadata()
        .withNamespace(NS)
        .withName(name)
        .withUid("uid-t-" + name)
        .endMetadata()
        .withNewSpec()
        .withNewMetadata()
        .addToLabels("team", "ml")
        .addToAnnotations("note", "copied")
        .endMetadata()
        .withNewSpec()
        .withNewDevices()
        .addNewRequest()
        .withName("gpu")
        .withNewExactly()
        .withDeviceClassName("gpu")
        .endExactly()
        .endRequest()
        .endDevices()
        .endSpec()
        .endSpec()
        .build();
  }

  /** Claim {@code ns/<name>} with UID {@code uid-c-<name>} and one request. */
  public static ResourceClaimBuilder claim(String name) {
    return new ResourceClaimBuilder()
        .withNewMetadata()
        .withNamespace(NS)
        .withName(name)
        .withUid("uid-c-" + name)
        .withResourceVersion("1")
        .endMetadata()
        .withNewSpec()
        .withNewDevices()
        .addNewRequest()
        .withName("gpu")
        .withNewExactly()
        .withDeviceClassName("gpu")
        .endExactly()
        .endRequest()
        .endDevices()
        .endSpec();
  }

  /** The claim built, owned (controller) by {@code pod} with the pod-claim-name annotation. */
  public static ResourceClaim generated(String name, Pod pod, String entry) {
    return claim(name)
        .editMetadata()
        .addToOwnerReferences(TemplateClaims.controllerRef(pod))
        .addToAnnotations(Upstream.POD_CLAIM_NAME_ANNOTATION, entry)
        .endMetadata()
        .build();
  }

  /** Allocated on node-a, reserved for the pods, with the finalizer. */
  public static ResourceClaimBuilder allocated(ResourceClaimBuilder b, Pod... reservedFor) {
    b.editMetadata().addToFinalizers(Upstream.FINALIZER).endMetadata();
    return allocatedOn("gpu.example.com", "node-a", b, reservedFor);
  }

  /** Device gpu-0 of {@code driver}'s pool {@code node} allocated, reserved for the pods. */
  public static ResourceClaimBuilder allocatedOn(
      String driver, String node, ResourceClaimBuilder b, Pod... reservedFor) {
    b.withNewStatus()
        .withNewAllocation()
        .withNewDevices()
        .addNewResult()
        .withRequest("gpu")
        .withDriver(driver)
        .withPool(node)
        .withDevice("gpu-0")
        .endResult()
        .endDevices()
        .endAllocation()
        .endStatus();
    for (Pod p : reservedFor) {
      b.editStatus()
          .addToReservedFor(
              new ResourceClaimConsumerReferenceBuilder()
                  .withResource("pods")
                  .withName(p.getMetadata().getName())
                  .withUid(p.getMetadata().getUid())
                  .build())
          .endStatus();
    }
    return b;
  }

  /** A Ready node with 4 CPUs, 8Gi memory and 110 pods allocatable. */
  public static NodeBuilder node(String name) {
    return new NodeBuilder()
        .withNewMetadata()
        .withName(name)
        .addToLabels("zone", "a")
        .endMetadata()
        .withNewSpec()
        .endSpec()
        .withNewStatus()
        .addNewCondition()
        .withType("Ready")
        .withStatus("True")
        .endCondition()
        .addToAllocatable("cpu", new Quantity("4"))
        .addToAllocatable("memory", new Quantity("8Gi"))
        .addToAllocatable("pods", new Quantity("110"))
        .endStatus();
  }

  public static Node readyNode(String name) {
    return node(name).build();
  }
}
