package io.kdra.claimcontroller.scheduling;

import static org.assertj.core.api.Assertions.assertThat;

import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.PodBuilder;
import io.fabric8.kubernetes.api.model.resource.v1.ResourceClaim;
import io.kdra.claimcontroller.domain.K;
import io.kdra.claimcontroller.domain.TemplateMode;
import java.util.Map;
import org.junit.jupiter.api.Test;

/**
 * {@link PreEnqueue} end to end: a pod is tried only once every claim it names exists, is recorded
 * where the kubelet looks for it, and is not being deleted.
 */
class PreEnqueueTest extends SchedulingFixture {

  @Test
  void adoptModeWaitsForKubeControllerManager() {
    client.resource(K.template("tpl")).create();
    Pod pod = create(K.podWithTemplate("web", "gpu", "tpl"));
    PodScheduling adopt = newScheduling(TemplateMode.ADOPT);
    assertThat(adopt.schedule(pod)).isInstanceOf(Outcome.Waiting.class);
    assertThat(allClaims()).isEmpty();
    client.resource(K.generated("web-gpu-kcm01", pod, "gpu")).create();
    // kube-controller-manager records the claim in the pod's status after creating it; the
    // kubelet finds it only there, so the pod is not bound before
    assertThat(adopt.schedule(pod)).isInstanceOf(Outcome.Waiting.class);
    Pod recorded =
        client
            .resource(
                new PodBuilder(pod)
                    .editOrNewStatus()
                    .addNewResourceClaimStatus()
                    .withName("gpu")
                    .withResourceClaimName("web-gpu-kcm01")
                    .endResourceClaimStatus()
                    .endStatus()
                    .build())
            .updateStatus();
    assertThat(adopt.schedule(recorded)).isEqualTo(new Outcome.Bound("node-a"));
  }

  @Test
  void aMissingClaimMakesThePodUnschedulableWithTheName() {
    Pod pod = K.podWithClaim("web", "shared", "no-such-claim");
    assertThat(scheduling.schedule(create(pod)))
        .isEqualTo(
            new Outcome.Unschedulable(
                "pod claim entry shared: ResourceClaim no-such-claim does not exist",
                Map.of(),
                "ClaimMissing"));
  }

  @Test
  void aClaimBeingDeletedMakesThePodUnschedulableWithTheName() {
    // kept by its delete-protection finalizer while another pod uses it: the new pod says why
    ResourceClaim kept =
        client
            .resource(
                K.claim("c")
                    .editMetadata()
                    .withFinalizers("resource.kubernetes.io/delete-protection")
                    .endMetadata()
                    .build())
            .create();
    client.resource(kept).delete();
    assertThat(claim("c").getMetadata().getDeletionTimestamp()).isNotNull();
    Pod pod = create(K.podWithClaim("web", "gpu", "c"));

    assertThat(scheduling.schedule(pod))
        .isEqualTo(
            new Outcome.Unschedulable(
                "pod claim entry gpu: ResourceClaim c is being deleted",
                Map.of(),
                "ClaimBeingDeleted"));
  }
}
