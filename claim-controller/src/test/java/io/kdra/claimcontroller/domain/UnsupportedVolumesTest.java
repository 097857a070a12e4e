package io.kdra.claimcontroller.domain;

import static org.assertj.core.api.Assertions.assertThat;

import io.fabric8.kubernetes.api.model.Pod;
import org.junit.jupiter.api.Test;

class UnsupportedVolumesTest {

  @Test
  void aPersistentVolumeClaimIsRefusedWithItsField() {
    Pod pod =
        K.pod("p")
            .editSpec()
            .addNewVolume()
            .withName("scratch")
            .withNewEmptyDir()
            .endEmptyDir()
            .endVolume()
            .addNewVolume()
            .withName("data")
            .withNewPersistentVolumeClaim()
            .withClaimName("data")
            .endPersistentVolumeClaim()
            .endVolume()
            .endSpec()
            .build();
    assertThat(UnsupportedVolumes.refusal(pod))
        .hasValueSatisfying(
            r ->
                assertThat(r)
                    .startsWith("spec.volumes[1].persistentVolumeClaim: volume topology is not"));
  }

  @Test
  void anEphemeralVolumeIsRefused() {
    Pod pod =
        K.pod("p")
            .editSpec()
            .addNewVolume()
            .withName("e")
            .withNewEphemeral()
            .endEphemeral()
            .endVolume()
            .endSpec()
            .build();
    assertThat(UnsupportedVolumes.refusal(pod))
        .hasValueSatisfying(r -> assertThat(r).startsWith("spec.volumes[0].ephemeral: "));
  }

  @Test
  void otherVolumesPass() {
    Pod pod =
        K.pod("p")
            .editSpec()
            .addNewVolume()
            .withName("c")
            .withNewConfigMap()
            .withName("c")
            .endConfigMap()
            .endVolume()
            .endSpec()
            .build();
    assertThat(UnsupportedVolumes.refusal(pod)).isEmpty();
  }
}
