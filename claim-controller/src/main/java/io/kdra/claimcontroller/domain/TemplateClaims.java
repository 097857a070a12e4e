package io.kdra.claimcontroller.domain;

import io.fabric8.kubernetes.api.model.HasMetadata;
import io.fabric8.kubernetes.api.model.ObjectMeta;
import io.fabric8.kubernetes.api.model.OwnerReference;
import io.fabric8.kubernetes.api.model.OwnerReferenceBuilder;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.resource.v1.ResourceClaim;
import io.fabric8.kubernetes.api.model.resource.v1.ResourceClaimBuilder;
import io.fabric8.kubernetes.api.model.resource.v1.ResourceClaimSpecBuilder;
import io.fabric8.kubernetes.api.model.resource.v1.ResourceClaimTemplate;
import java.util.Collection;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Optional;

/**
 * Claims derived from a {@code ResourceClaimTemplate} for one pod claim entry, following upstream's
 * resourceclaim controller: what to create, and how to recognise one created earlier (by this
 * controller, by an earlier run of it, or by kube-controller-manager). Pure.
 */
public final class TemplateClaims {

  private TemplateClaims() {}

  /**
   * The claim to create for {@code pod}'s entry {@code podClaimName}: generateName from {@link
   * ClaimNaming}, the pod as controlling owner (so garbage collection deletes the claim with the
   * pod; without {@code blockOwnerDeletion}, as upstream, so a foreground deletion of the pod does
   * not wait for it), the template's labels, the template's annotations plus {@link
   * Upstream#POD_CLAIM_NAME_ANNOTATION}, and the template's spec unchanged. Other template metadata
   * is ignored, as upstream does. The template is not modified.
   */
  public static ResourceClaim desired(
      Pod pod, String podClaimName, ResourceClaimTemplate template) {
    return fromTemplate(
        pod.getMetadata().getNamespace(),
        ClaimNaming.generateName(pod.getMetadata().getName(), podClaimName),
        controllerRef(pod),
        podClaimName,
        template);
  }

  /**
   * A claim from {@code template} as upstream's claim controller makes one, for a pod or a
   * PodGroup: the template's labels, its annotations plus the entry's name, its spec; {@code owner}
   * as controller.
   */
  static ResourceClaim fromTemplate(
      String namespace,
      String generateName,
      OwnerReference owner,
      String entry,
      ResourceClaimTemplate template) {
    ObjectMeta tm = template.getSpec() == null ? null : template.getSpec().getMetadata();
    Map<String, String> annotations = new LinkedHashMap<>();
    if (tm != null && tm.getAnnotations() != null) {
      annotations.putAll(tm.getAnnotations());
    }
    annotations.put(Upstream.POD_CLAIM_NAME_ANNOTATION, entry);
    Map<String, String> labels =
        tm == null || tm.getLabels() == null ? null : new LinkedHashMap<>(tm.getLabels());
    return new ResourceClaimBuilder()
        .withNewMetadata()
        .withNamespace(namespace)
        .withGenerateName(generateName)
        .withOwnerReferences(owner)
        .withLabels(labels)
        .withAnnotations(annotations)
        .endMetadata()
        .withSpec(new ResourceClaimSpecBuilder(template.getSpec().getSpec()).build())
        .build();
  }

  /**
   * The controller owner reference upstream puts on claims it creates for a pod
   * (kube-controller-manager 1.36: {@code controller: true}, no {@code blockOwnerDeletion}).
   */
  public static OwnerReference controllerRef(Pod pod) {
    return new OwnerReferenceBuilder()
        .withApiVersion("v1")
        .withKind("Pod")
        .withName(pod.getMetadata().getName())
        .withUid(pod.getMetadata().getUid())
        .withController(true)
        .build();
  }

  /**
   * The controlling owner pod of an object, as upstream's {@code owningPod}: the owner reference
   * with {@code controller: true}, {@code apiVersion: v1} and {@code kind: Pod}.
   */
  public static Optional<OwnerReference> owningPod(HasMetadata object) {
    if (object.getMetadata().getOwnerReferences() == null) {
      return Optional.empty();
    }
    return object.getMetadata().getOwnerReferences().stream()
        .filter(
            o ->
                Boolean.TRUE.equals(o.getController())
                    && "v1".equals(o.getApiVersion())
                    && "Pod".equals(o.getKind()))
        .findFirst();
  }

  /**
   * The UID of an object's controlling owner pod or PodGroup ({@link
   * PodGroupClaims#owningPodGroup}): the key under which claims created from templates are looked
   * up by their owner.
   */
  public static Optional<String> owningPodOrGroupUid(HasMetadata object) {
    return owningPod(object).or(() -> PodGroupClaims.owningPodGroup(object)).map(o -> o.getUid());
  }

  /** Whether {@code claim} is controlled by {@code pod} (same namespace, controller UID). */
  public static boolean isForPod(Pod pod, ResourceClaim claim) {
    return pod.getMetadata().getNamespace().equals(claim.getMetadata().getNamespace())
        && owningPod(claim).map(o -> pod.getMetadata().getUid().equals(o.getUid())).orElse(false);
  }

  /**
   * An existing claim created for this pod entry: controlled by the pod and annotated with the
   * entry's name. This is the look-up that keeps a restart between creating a claim and recording
   * it in the pod status from creating a second one. Claims being deleted are skipped: they can no
   * longer be reserved. When several match (only a foreign writer can cause that), the first by
   * name wins, so that every run picks the same one.
   */
  public static Optional<ResourceClaim> findExisting(
      Pod pod, String podClaimName, Collection<ResourceClaim> claims) {
    return claims.stream()
        .filter(c -> isForPod(pod, c))
        .filter(
            c ->
                c.getMetadata().getAnnotations() != null
                    && podClaimName.equals(
                        c.getMetadata().getAnnotations().get(Upstream.POD_CLAIM_NAME_ANNOTATION)))
        .filter(c -> c.getMetadata().getDeletionTimestamp() == null)
        .min((a, b) -> a.getMetadata().getName().compareTo(b.getMetadata().getName()));
  }
}
