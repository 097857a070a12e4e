package io.kdra.claimcontroller.domain;

import io.fabric8.kubernetes.api.model.Node;
import io.fabric8.kubernetes.api.model.OwnerReference;
import io.fabric8.kubernetes.api.model.PersistentVolumeClaim;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.Volume;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * What the four volume plugins read of pods and claims, as component-helpers' storage and ephemeral
 * helpers read it; kept apart so each plugin reads them the same way. Pure.
 */
final class VolumeHelpers {

  static final String ANN_BETA_STORAGE_CLASS = "volume.beta.kubernetes.io/storage-class";
  static final String WAIT_FOR_FIRST_CONSUMER = "WaitForFirstConsumer";

  private VolumeHelpers() {}

  static List<Volume> volumes(Pod pod) {
    return pod.getSpec() == null || pod.getSpec().getVolumes() == null
        ? List.of()
        : pod.getSpec().getVolumes();
  }

  /** The claim a volume uses: its {@code claimName}, or {@code <pod>-<volume>} when ephemeral. */
  static String claimName(Pod pod, Volume v) {
    return v.getPersistentVolumeClaim() != null
        ? v.getPersistentVolumeClaim().getClaimName()
        : pod.getMetadata().getName() + "-" + v.getName();
  }

  /** The claims the pod's volumes use, in order (without repeats). */
  static List<String> claimNames(Pod pod) {
    Set<String> names = new LinkedHashSet<>();
    for (Volume v : volumes(pod)) {
      if (v.getPersistentVolumeClaim() != null || v.getEphemeral() != null) {
        names.add(claimName(pod, v));
      }
    }
    return List.copyOf(names);
  }

  static String storageClassName(PersistentVolumeClaim pvc) {
    Map<String, String> ann = pvc.getMetadata().getAnnotations();
    if (ann != null && ann.containsKey(ANN_BETA_STORAGE_CLASS)) {
      return ann.get(ANN_BETA_STORAGE_CLASS);
    }
    String name = pvc.getSpec() == null ? null : pvc.getSpec().getStorageClassName();
    return name == null ? "" : name;
  }

  /** The claim's {@code resources.requests.storage}; null when it requests none. */
  static io.fabric8.kubernetes.api.model.Quantity storageRequest(PersistentVolumeClaim pvc) {
    var spec = pvc.getSpec();
    if (spec == null || spec.getResources() == null || spec.getResources().getRequests() == null) {
      return null;
    }
    return spec.getResources().getRequests().get("storage");
  }

  static String volumeName(PersistentVolumeClaim pvc) {
    String n = pvc.getSpec() == null ? null : pvc.getSpec().getVolumeName();
    return n == null ? "" : n;
  }

  /**
   * Whether the claim is the pod's own ephemeral claim (component-helpers' {@code VolumeIsForPod}).
   */
  static boolean isControlledBy(PersistentVolumeClaim pvc, Pod pod) {
    if (!pod.getMetadata().getNamespace().equals(pvc.getMetadata().getNamespace())) {
      return false;
    }
    List<OwnerReference> refs = pvc.getMetadata().getOwnerReferences();
    return refs != null
        && refs.stream()
            .anyMatch(
                r ->
                    Boolean.TRUE.equals(r.getController())
                        && pod.getMetadata().getUid().equals(r.getUid()));
  }

  /** The API's not-found message, which upstream's PreFilters pass on as their reason. */
  static String notFound(String resource, String name) {
    return resource + " \"" + name + "\" not found";
  }

  static Map<String, String> labels(Node node) {
    return node.getMetadata().getLabels() == null ? Map.of() : node.getMetadata().getLabels();
  }
}
