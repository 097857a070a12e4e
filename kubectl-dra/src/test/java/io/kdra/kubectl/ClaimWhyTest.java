package io.kdra.kubectl;

import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.api.Test;

class ClaimWhyTest {

  private final ClusterState cluster = Fixture.cluster();

  @Test
  void anAllocatedClaimSaysWhereWhatAndForWhom() {
    ClaimWhy.Answer a = explain("trainer-gpu");
    assertThat(a.state()).isEqualTo(ClaimWhy.State.ALLOCATED);
    assertThat(Words.where(a.allocation())).isEqualTo("node-b");
    assertThat(Words.devices(a.allocation())).isEqualTo("gpu: gpu.example.com/node-b/gpu-0");
    assertThat(a.reservedFor()).containsExactly("pods/trainer");
    assertThat(a.users()).containsExactly("ml/trainer");
  }

  @Test
  void aClaimOfAPendingPodGetsTheAllocatorsExplanationForIt() {
    ClaimWhy.Answer a = explain("too-big-gpu-x1");
    assertThat(a.state()).isEqualTo(ClaimWhy.State.PENDING_POD);
    assertThat(a.pod()).isEqualTo("ml/too-big"); // its owner: a claim from a template
    assertThat(a.message()).isEqualTo("request \"gpu\": 0 devices in class \"gpu-80gi\", 0 free");
    assertThat(a.podAnswer().requests())
        .extracting(r -> r.claim())
        .containsExactly("too-big-gpu-x1");
    assertThat(a.podAnswer().nodes()).hasSize(3);
  }

  @Test
  void aMissingClassIsNamed() {
    ClaimWhy.Answer a = explain("no-class");
    assertThat(a.pod()).isEqualTo("ml/wants-tpu"); // by name in the pod's spec
    assertThat(a.message()).isEqualTo("request \"tpu\": device class tpu not found");
  }

  @Test
  void aClaimNoPodUsesIsTriedAlone() {
    ClaimWhy.Answer a = explain("spare");
    assertThat(a.state()).isEqualTo(ClaimWhy.State.UNUSED);
    assertThat(a.fitsOn()).isEqualTo("node-a");
    assertThat(a.message())
        .isEqualTo(
            "no pod uses it (a claim is allocated when a pod that "
                + "uses it is scheduled); alone, it would fit on node-a: gpu: "
                + "gpu.example.com/node-a/gpu-0");
  }

  private ClaimWhy.Answer explain(String claim) {
    return ClaimWhy.explain(cluster.claim("ml", claim).orElseThrow(), cluster, Main.options());
  }
}
