package io.kdra.claimcontroller.domain;

import io.fabric8.kubernetes.api.model.ObjectReference;
import io.fabric8.kubernetes.api.model.ObjectReferenceBuilder;
import io.fabric8.kubernetes.api.model.PersistentVolume;
import io.fabric8.kubernetes.api.model.PersistentVolumeBuilder;
import io.fabric8.kubernetes.api.model.PersistentVolumeClaim;
import io.fabric8.kubernetes.api.model.storage.CSIStorageCapacity;
import java.util.List;
import java.util.Map;
import java.util.Optional;

/**
 * What VolumeBinding decided for a pod's claims that wait for their first consumer on one node
 * (upstream's {@code PodVolumes}): the existing volumes they are bound to, and those to be
 * provisioned there.
 *
 * @param staticBindings each claim with the available volume chosen for it
 * @param dynamicProvisions the claims to be provisioned on the node
 */
public record PodVolumes(
    List<StaticBinding> staticBindings, List<DynamicProvision> dynamicProvisions) {

  /** Nothing to bind or provision. */
  public static final PodVolumes NONE = new PodVolumes(List.of(), List.of());

  /** A claim and the existing volume chosen for it (upstream's {@code BindingInfo}). */
  public record StaticBinding(PersistentVolumeClaim pvc, PersistentVolume pv) {

    /** Set by whoever binds a volume that was not pre-bound to its claim. */
    static final String ANN_BOUND_BY_CONTROLLER = "pv.kubernetes.io/bound-by-controller";

    /**
     * The volume bound to the claim, as component-helpers' {@code GetBindVolumeToClaim} writes it
     * at PreBind: its claim reference set to the claim (with uid and resourceVersion), and marked
     * bound by a controller unless it was pre-bound; empty when it says so already. The PV
     * controller then binds the claim to it.
     */
    public Optional<PersistentVolume> boundVolume() {
      boolean preBound = MatchingVolume.isBoundToClaim(pv, pvc);
      ObjectReference ref = pv.getSpec().getClaimRef();
      var meta = pvc.getMetadata();
      boolean refUpToDate =
          ref != null
              && meta.getName().equals(ref.getName())
              && meta.getNamespace().equals(ref.getNamespace())
              && java.util.Objects.equals(meta.getUid(), ref.getUid());
      Map<String, String> ann = pv.getMetadata().getAnnotations();
      boolean mark = !preBound && (ann == null || !ann.containsKey(ANN_BOUND_BY_CONTROLLER));
      if (refUpToDate && !mark) {
        return Optional.empty();
      }
      PersistentVolumeBuilder b = new PersistentVolumeBuilder(pv);
      if (!refUpToDate) {
        b.editSpec()
            .withClaimRef(
                new ObjectReferenceBuilder()
                    .withKind("PersistentVolumeClaim")
                    .withApiVersion("v1")
                    .withNamespace(meta.getNamespace())
                    .withName(meta.getName())
                    .withUid(meta.getUid())
                    .withResourceVersion(meta.getResourceVersion())
                    .build())
            .endSpec();
      }
      if (mark) {
        b.editMetadata().addToAnnotations(ANN_BOUND_BY_CONTROLLER, "yes").endMetadata();
      }
      return Optional.of(b.build());
    }
  }

  /**
   * A claim to be provisioned on the node, with the CSIStorageCapacity that has room for it (null
   * when its capacity is not checked).
   */
  public record DynamicProvision(PersistentVolumeClaim pvc, CSIStorageCapacity nodeCapacity) {}

  public boolean isEmpty() {
    return staticBindings.isEmpty() && dynamicProvisions.isEmpty();
  }
}
